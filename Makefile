# PGXS build of pgsem.so. `make && sudo make install` builds and installs it against the
# pg_config on PATH (Debian: postgresql-server-dev-15). Tests: see README ("Testing").

# The tree this Makefile is in. pg_buildext (the Debian package) builds out of tree, as
# `make -C build-15 -f ../Makefile VPATH=..`: files are found there and named relative to it.
tree := $(patsubst %/,%,$(dir $(firstword $(MAKEFILE_LIST))))
in_tree = $(patsubst $(tree)/%,%,$(wildcard $(addprefix $(tree)/,$(1))))

EXTENSION = pgsem
MODULE_big = pgsem
DATA = $(call in_tree,pgsem--*.sql)
PGFILEDESC = "pgsem - leased counting semaphores and text-keyed advisory locks"

CORE_SRCS = $(call in_tree,src/core/*.cpp)
GLUE_SRCS = $(call in_tree,src/pg/*/*.cpp)
OBJS = $(CORE_SRCS:.cpp=.o) $(GLUE_SRCS:.cpp=.o)

# Tests: `make installcheck` runs, against the installed extension, the pg_regress cases
# (sql/<name>.sql with expected/<name>.out) and the isolation specs on the server the PG*
# variables name, then the TAP scripts, which start servers of their own. Variables on the
# command line select: `make installcheck ISOLATION= TAP_TESTS=` runs the regress cases alone.
# test/run-all.sh runs every suite this way (see CONTRIBUTING.md).
REGRESS = $(sort $(basename $(notdir $(call in_tree,sql/*.sql))))
REGRESS_OPTS = --load-extension=pgsem
# isolationtester specs keep their expected output apart from pg_regress's.
ISOLATION = $(sort $(basename $(notdir $(call in_tree,test/isolation/specs/*.spec))))
ISOLATION_OPTS = --load-extension=pgsem --inputdir=$(tree)/test/isolation \
                 --outputdir=test/isolation/output
TAP_TESTS = 1
PROVE_TESTS = $(sort $(call in_tree,test/tap/*.pl))

# Debian's server headers need C++17 without `register` warnings; PGXS links with the C
# compiler, so the C++ runtime is named explicitly. WERROR=-Werror makes warnings fatal (tests do).
WERROR ?=
# Postgres headers count as system headers: -Wextra would flag their unused parameters.
PG_CPPFLAGS = -I$(srcdir)/src -isystem $(includedir_server)
PG_CXXFLAGS = -std=c++17 -Wno-register -Wextra -Wno-missing-field-initializers \
              $(WERROR)
SHLIB_LINK += -lstdc++
# PGXS tracks no header dependencies unless the server was configured with --enable-depend:
# without this, changing a header (a struct's layout) would leave stale objects behind.
PG_CXXFLAGS += -MMD -MP
EXTRA_CLEAN = $(OBJS:.o=.d)

# No LLVM bitcode: JIT inlining gains nothing here, and Debian's clang would compile the C++
# sources again without the flags above.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

-include $(OBJS:.o=.d)

# Out of tree, the objects' directories are made first (named absolute: VPATH would find the
# tree's own).
$(OBJS): | $(addprefix $(CURDIR)/,$(sort $(dir $(OBJS))))
$(addprefix $(CURDIR)/,$(sort $(dir $(OBJS)))):
	mkdir -p $@

# PGXN: `make dist` zips the commit HEAD (committed files only) as pgsem-<version>.zip, every
# file under pgsem-<version>/, the version being META.json's.
DIST = pgsem-$(shell sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' $(tree)/META.json | head -n 1)
dist:
	git -C $(tree) archive --format=zip --prefix=$(DIST)/ --output=$(CURDIR)/$(DIST).zip HEAD
.PHONY: dist

# `make chaos`: the chaos run against the installed pgsem (test/chaos/run.sh starts its own
# cluster); CHAOS_SECONDS long, with CHAOS_WORKERS workers. Exits non-zero on any anomaly.
CHAOS_SECONDS ?= 60
CHAOS_WORKERS ?= 32
chaos:
	CHAOS_SECONDS=$(CHAOS_SECONDS) CHAOS_WORKERS=$(CHAOS_WORKERS) bash $(tree)/test/chaos/run.sh
.PHONY: chaos

# `make failover-test`: pg_auto_failover end to end (test/failover/run.sh) against the installed
# pgsem, with a monitor and two nodes of its own on loopback; the test suite runs it as `failover`.
failover-test:
	bash $(tree)/test/failover/run.sh
.PHONY: failover-test
