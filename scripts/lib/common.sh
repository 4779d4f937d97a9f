# Shared by scripts/demo.sh and test/run-all.sh (sourced, not run): privileges, packages, build.
# Postgres refuses to run as root, so when these scripts run as root they do everything that
# touches the server as the unprivileged system user $PGSEM_OS_USER.

PGSEM_ROOT=${PGSEM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PGSEM_OS_USER=${PGSEM_OS_USER:-pgsem-runner}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

say() { printf '\n== %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "need root for: $* (run as root, or install sudo)"
    fi
}

# Runs a command as the user the server runs as: $PGSEM_OS_USER when we are root, else ourselves.
as_pg_user() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    elif runuser -u "$PGSEM_OS_USER" -- test -x "$PWD" 2>/dev/null; then
        runuser -u "$PGSEM_OS_USER" -- "$@"
    else
        # initdb and pg_ctl fail in a directory their user cannot enter (a clone under /root).
        (cd / && runuser -u "$PGSEM_OS_USER" -- "$@")
    fi
}

ensure_pg_user() {
    [ "$(id -u)" -eq 0 ] || return 0
    id "$PGSEM_OS_USER" >/dev/null 2>&1 ||
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
            "$PGSEM_OS_USER"
}

# Installs the Debian packages named, skipping the update when all are present already.
install_packages() {
    local missing=()
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${missing[@]}"
}

# Packages that building and running pgsem needs.
# libkrb5-dev: the server headers the glue uses (libpq/libpq-be.h, for the client socket) include
# gssapi.h, which postgresql-server-dev-15 does not pull in.
BUILD_PACKAGES=(build-essential postgresql-15 postgresql-server-dev-15 postgresql-client-15
                libkrb5-dev)

# Builds pgsem.so with warnings as errors and installs it into the server's directories.
build_and_install() {
    say "building pgsem"
    make -C "$PGSEM_ROOT" -s PG_CONFIG="$PG_CONFIG" WERROR=-Werror >/dev/null ||
        die "build failed"
    say "installing pgsem into $("$PG_CONFIG" --pkglibdir)"
    as_root make -C "$PGSEM_ROOT" -s PG_CONFIG="$PG_CONFIG" install >/dev/null ||
        die "install failed"
}
