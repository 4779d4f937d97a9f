#!/usr/bin/env bash
# Two builds of pgsem side by side in one run: OLD_REV (a git revision) against the work tree's
# current code (uncommitted changes included), each installed into its own relocated copy of
# PostgreSQL 15 and served by its own throwaway cluster, on the claim-path cells of bench/run.py,
# old and new alternating cell by cell. See bench/COMPARE.md.
#
#   bash bench/compare_builds.sh OLD_REV [--rounds R] [--seconds T] [--setting NAME=VALUE]...
#
# --setting (repeatable) starts both clusters with that server setting added, for example
# fsync=off to take the disk's flush time (which moves by 2x within a day on this VM) out of a
# comparison of the claim path's CPU cost.
#
# Installs nothing system-wide but Debian packages bench/lib.sh installs too; everything else
# (server copies, sources, builds, the driver, the clusters) lives under /tmp and is removed on
# exit. Works as root (the servers then run as $PGSEM_OS_USER, see scripts/lib/common.sh).
set -euo pipefail
umask 022  # the server copies must be readable by the user the clusters run as

PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"

usage() {
    die "usage: bash bench/compare_builds.sh OLD_REV [--rounds R] [--seconds T] [--setting NAME=VALUE]..."
}
OLD_REV=
ROUNDS=3
SECONDS_PER_CELL=10
SETTINGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) [ $# -ge 2 ] || usage; ROUNDS=$2; shift 2 ;;
        --seconds) [ $# -ge 2 ] || usage; SECONDS_PER_CELL=$2; shift 2 ;;
        --setting)
            if [ $# -lt 2 ] || ! [[ "$2" =~ ^[a-z_.]+=[A-Za-z0-9_.]+$ ]]; then usage; fi
            SETTINGS+=("$2"); shift 2 ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) [ -z "$OLD_REV" ] || usage; OLD_REV=$1; shift ;;
    esac
done
[ -n "$OLD_REV" ] || usage
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive integer"
[[ "$SECONDS_PER_CELL" =~ ^[1-9][0-9]*$ ]] || die "--seconds takes a positive integer"

# The packages bench/lib.sh installs, but Redis: none of these cells uses it.
install_packages "${BUILD_PACKAGES[@]}" python3 python3-psycopg2 libpq-dev libhiredis-dev
SYSTEM_PG_CONFIG=$PG_CONFIG
SYSTEM_BINDIR=$("$SYSTEM_PG_CONFIG" --bindir)
# The prefixes below mirror these three directories; pg_config, initdb and postgres find their
# files relative to their own location, so each copy is a server of its own.
SERVER_DIRS=(/usr/lib/postgresql/15 /usr/share/postgresql/15 /usr/include/postgresql/15)

OLD_SHA=$(git -C "$PGSEM_ROOT" rev-parse --verify --quiet "$OLD_REV^{commit}") ||
    die "$OLD_REV is not a revision of $PGSEM_ROOT"
NEW_SHA=$(git -C "$PGSEM_ROOT" rev-parse HEAD)
# GIT_OPTIONAL_LOCKS=0: no index refresh, the work tree belongs to someone else right now.
if [ -n "$(GIT_OPTIONAL_LOCKS=0 git -C "$PGSEM_ROOT" status --porcelain --untracked-files=no)" ]
then NEW_DESC="work tree (${NEW_SHA:0:7} + uncommitted changes)"
else NEW_DESC="work tree (${NEW_SHA:0:7}, clean)"
fi
OLD_DESC="$OLD_REV (${OLD_SHA:0:7})"

SCRATCH=
MEASURE_PID=
OLD_CLUSTER=""
NEW_CLUSTER=""
cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    [ -n "$MEASURE_PID" ] && kill "$MEASURE_PID" 2>/dev/null && wait "$MEASURE_PID" 2>/dev/null
    local b dir
    for b in old new; do
        if [ "$b" = old ]; then dir=$OLD_CLUSTER; else dir=$NEW_CLUSTER; fi
        [ -n "$dir" ] || continue
        CLUSTER_DIR=$dir PG_BINDIR=$SCRATCH/$b/server/usr/lib/postgresql/15/bin cluster_stop
    done
    # A cluster whose cluster_start failed half-way (not recorded above yet).
    if [ -n "${CLUSTER_DIR:-}" ] && [ "$CLUSTER_DIR" != "$OLD_CLUSTER" ] &&
        [ "$CLUSTER_DIR" != "$NEW_CLUSTER" ]; then
        cluster_stop
    fi
    [ -n "$SCRATCH" ] && rm -rf "$SCRATCH"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

SCRATCH=$(mktemp -d /tmp/pgsem-compare.XXXXXX)
chmod 755 "$SCRATCH"
STARTED=$(date +%s)

say "sources: old = $OLD_DESC, new = $NEW_DESC"
mkdir -p "$SCRATCH/old/src" "$SCRATCH/new/src"
git -C "$PGSEM_ROOT" archive "$OLD_SHA" | tar -x -C "$SCRATCH/old/src"
# The work tree as it is now, tracked and untracked files but not ignored ones (no build
# products): built out of the tree, so the developer's objects and .d files stay untouched.
(cd "$PGSEM_ROOT" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
        { [ -e "$f" ] || [ -L "$f" ]; } && printf '%s\0' "$f"
    done | tar --null -T - -cf -) | tar -x -C "$SCRATCH/new/src"

# build_into old|new: a copy of the server under $SCRATCH/<b>/server with no pgsem of the system's
# in it, then that build of pgsem installed into it.
build_into() {
    local b=$1 prefix=$SCRATCH/$1/server d
    say "building $b into $prefix"
    for d in "${SERVER_DIRS[@]}"; do
        mkdir -p "$prefix$(dirname "$d")"
        cp -a "$d" "$prefix$(dirname "$d")/"
    done
    rm -f "$prefix"/usr/lib/postgresql/15/lib/pgsem.so \
        "$prefix"/usr/share/postgresql/15/extension/pgsem[.-]*
    rm -rf "$prefix"/usr/lib/postgresql/15/lib/bitcode/pgsem*
    local pg_config=$prefix/usr/lib/postgresql/15/bin/pg_config
    [ "$("$pg_config" --pkglibdir)" = "$prefix/usr/lib/postgresql/15/lib" ] ||
        die "the copied pg_config does not point into its copy: $("$pg_config" --pkglibdir)"
    # No WERROR: a warning of an old revision under today's compiler changes no code.
    { make -C "$SCRATCH/$b/src" -j2 PG_CONFIG="$pg_config" &&
      make -C "$SCRATCH/$b/src" PG_CONFIG="$pg_config" install; } >"$SCRATCH/$b/build.log" 2>&1 ||
        { tail -n 40 "$SCRATCH/$b/build.log"; die "the $b build failed"; }
    [ -f "$prefix/usr/lib/postgresql/15/lib/pgsem.so" ] || die "the $b build installed no pgsem.so"
}
build_into old
build_into new

# The driver of bench/run.sh, from the new sources, compiled as bench/lib.sh's
# build_bench_driver compiles it; one client binary for both builds.
say "building the benchmark driver"
DRIVER=$SCRATCH/pgsem_bench_driver
g++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$("$SYSTEM_PG_CONFIG" --includedir)" \
    "$SCRATCH"/new/src/bench/driver/*.cpp -lpq -lhiredis -pthread -o "$DRIVER" ||
    die "the benchmark driver did not build"

# One cluster per build, each started by its own copy of the server with the settings of
# bench/run.sh (scripts/lib/cluster.sh's cluster_start), plus the --setting ones.
# shellcheck source=../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
for b in old new; do
    say "starting the $b cluster"
    PG_BINDIR=$SCRATCH/$b/server/usr/lib/postgresql/15/bin  # read by cluster_start
    CLUSTER_DIR=""
    cluster_start ${SETTINGS[@]+"${SETTINGS[@]}"}
    trap cleanup EXIT  # cluster_start set its own, for one cluster
    if [ "$b" = old ]; then OLD_CLUSTER=$CLUSTER_DIR OLD_PORT=$PGPORT
    else NEW_CLUSTER=$CLUSTER_DIR NEW_PORT=$PGPORT
    fi
    "$SYSTEM_BINDIR/psql" -X -q -c "CREATE DATABASE bench" -d postgres
    PGDATABASE=bench "$SYSTEM_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
        -f "$SCRATCH/new/src/bench/sql/setup.sql"
    # Which library this server loads, and which version of the extension it made.
    PGDATABASE=bench "$SYSTEM_BINDIR/psql" -X -A -t -c "SELECT 'pgsem ' || extversion || ', '
        || (SELECT setting FROM pg_config() WHERE name = 'PKGLIBDIR') || '/pgsem.so, port '
        || current_setting('port') FROM pg_extension WHERE extname = 'pgsem'"
    case "$("$SYSTEM_BINDIR/psql" -X -A -t -d bench -c \
            "SELECT setting FROM pg_config() WHERE name = 'PKGLIBDIR'")" in
        "$SCRATCH/$b/server/"*) ;;
        *) die "the $b server does not load its libraries from its own copy" ;;
    esac
done
export PGHOST=127.0.0.1 PGUSER=postgres PGDATABASE=bench
unset PGPORT  # set per cell below

say "measuring: $ROUNDS rounds of $SECONDS_PER_CELL s per cell and build"
# In the background, waited for, so that a signal's trap runs at once (and stops it).
/usr/bin/python3 - "$SCRATCH/new/src/bench" "$SYSTEM_BINDIR/pgbench" "$DRIVER" "$ROUNDS" \
    "$SECONDS_PER_CELL" "$OLD_PORT" "$NEW_PORT" "$OLD_DESC" "$NEW_DESC" \
    "${SETTINGS[*]+${SETTINGS[*]}}" <<'PY' &
"""Runs bench/run.py's claim-path cells against two clusters, alternating them cell by cell,
through run.py's own functions (imported as a module: connection settings come from the PG*
environment, so the port is switched per cell)."""
import importlib.util
import os
import signal
import statistics
import sys
import time
import types

import psycopg2

(bench, pgbench, driver, rounds, seconds, old_port, new_port, old_desc, new_desc,
 settings) = sys.argv[1:]
rounds, seconds = int(rounds), int(seconds)
# The shell's trap ends this with SIGTERM: exit through subprocess.run, which then kills the
# pgbench or driver it runs.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
spec = importlib.util.spec_from_file_location("bench_run", os.path.join(bench, "run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)


def pick(cells, label, clients):
    found = [c for c in cells if c[0] == label and c[2] == clients]
    if not found:
        sys.exit(f"bench/run.py has no cell {label!r} at {clients} clients any more")
    return found[0]


NO_WAIT = "pgsem, n=4, 1 name"
CELLS = [pick(run.SEM_CELLS, NO_WAIT, c) for c in (1, 8, 32)]
CELLS.append(pick(run.WAIT_CELLS, "pgsem, n=4, 1 name, wait 10 s", 32))
for c in (8, 32):
    CELLS += [pick(run.DRIVER_CELLS, "sem_claim_xact, n=4", c),
              pick(run.DRIVER_CELLS, "sem_claim_xact, n=4, wait 10 s", c)]

BUILDS = {"old": old_port, "new": new_port}
conns = {}
for build, port in BUILDS.items():
    conns[build] = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="bench")
    conns[build].autocommit = True
driver_args = types.SimpleNamespace(driver=driver, redis_port=0)  # no Redis cell here


def measure(build, cell):
    os.environ["PGPORT"] = BUILDS[build]  # pgbench and the driver inherit it
    if len(cell) == 3:
        return run.run_driver_cell(driver_args, cell, seconds)
    return run.run_cell(conns[build], pgbench, cell, seconds)


results = {(i, b): [] for i in range(len(CELLS)) for b in BUILDS}
started = time.time()
for r in range(1, rounds + 1):
    order = ("old", "new") if r % 2 == 1 else ("new", "old")
    for i, cell in enumerate(CELLS):
        for build in order:
            calls, pairs = measure(build, cell)
            results[(i, build)].append((calls, pairs))
            print(f"round {r} {build} {cell[0]:34} c={cell[2]:<3} {calls:9.0f} calls/s "
                  f"{pairs:9.0f} pairs/s", flush=True)
elapsed = time.time() - started


def table(title, k):
    print(f"\n{title}\n")
    print("| cell | clients | old median | new median | new/old | old rounds min-max |"
          " new rounds min-max | new/old per round min-max | new/old per round median |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, cell in enumerate(CELLS):
        old = [x[k] for x in results[(i, "old")]]
        new = [x[k] for x in results[(i, "new")]]
        mo, mn = statistics.median(old), statistics.median(new)
        ratio = f"{mn / mo:.3f}" if mo else "n/a"
        per_round = [n / o for o, n in zip(old, new) if o]
        spread = f"{min(per_round):.3f}-{max(per_round):.3f}" if per_round else "n/a"
        middle = f"{statistics.median(per_round):.3f}" if per_round else "n/a"
        tool = "driver" if len(cell) == 3 else "pgbench"
        print(f"| {cell[0]} ({tool}) | {cell[2]} | {mo:.0f} | {mn:.0f} | {ratio} |"
              f" {min(old):.0f}-{max(old):.0f} | {min(new):.0f}-{max(new):.0f} | {spread} |"
              f" {middle} |")


print(f"\nold = {old_desc}, new = {new_desc}; {rounds} round(s) of {seconds} s per cell and"
      f" build, old first in odd rounds and new first in even ones ({elapsed:.0f} s of"
      " measurement)" + (f"; both clusters with {settings}" if settings else ""))
table("successful claim+release pairs/s (medians of the rounds)", 1)
table("calls/s: pgbench tps, driver claim attempts/s (refused calls included)", 0)
PY
MEASURE_PID=$!
wait "$MEASURE_PID" || { rc=$?; MEASURE_PID=; exit "$rc"; }
MEASURE_PID=

say "done in $(( $(date +%s) - STARTED )) s (builds, clusters and measurement)"
