#!/usr/bin/env bash
# Runs every test suite of pgsem and ends with one line: "N passed, N failed".
#
#   bash test/run-all.sh            # everything (installs Debian packages it lacks, via sudo)
#   bash test/run-all.sh regress    # only the named suites
#
# Suites: lint versions unit regress isolation pgtap tap failover stress soak chaos client package harness. Each counts its own tests
# (the rules are in test/lib/counting.sh); a suite that cannot run counts as one failure. Servers run as an unprivileged user: $PGSEM_OS_USER
# when this script runs as root, otherwise the invoking user.
set -uo pipefail

PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
# shellcheck source=../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh" 2>/dev/null || true

ALL_SUITES=(lint versions unit regress isolation pgtap tap failover stress soak chaos client package harness)
SUITES=("$@")
[ ${#SUITES[@]} -eq 0 ] && SUITES=("${ALL_SUITES[@]}")

# Packages are installed without their recommendations, so pg_prove (recommended by the pgTAP
# package) is named on its own; libfaketime steps the clock of test/tap/026_clock_steps.pl's server.
# The Prometheus programs are for test/tap/024_prometheus.pl, which
# starts its own on free ports. Installing prometheus and prometheus-postgres-exporter starts
# their daemons (on ports 9090 and 9187), under systemd or, without it, through their init
# scripts -- unless /usr/sbin/policy-rc.d forbids it (exit 101, as in Docker images); the
# sql exporter's unit waits for /etc/prometheus-sql-exporter.yml. Started daemons keep running.
# postgresql-15-auto-failover brings pg_autoctl (pg-auto-failover-cli) for test/failover/.
TEST_PACKAGES=("${BUILD_PACKAGES[@]}" cmake libgtest-dev postgresql-15-pgtap
               libtap-parser-sourcehandler-pgtap-perl libipc-run-perl libtest-simple-perl
               python3 python3-psycopg2 python3-psycopg python3-django nodejs pgbouncer
               clang-format clang-tidy faketime libfaketime
               prometheus-postgres-exporter prometheus-sql-exporter prometheus
               postgresql-15-auto-failover)
# npm: Debian's package, unless the nodejs installed already brings its own (NodeSource's does,
# and conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 || TEST_PACKAGES+=(npm)

RESULTS=$(mktemp /tmp/pgsem-results.XXXXXX)
SCRATCH=$(mktemp -d /tmp/pgsem-tests.XXXXXX)
chmod 755 "$SCRATCH"

record_suite() {  # record_suite NAME PASSED FAILED
    local passed=${2:-0} failed=${3:-0}
    if [ $((passed + failed)) -eq 0 ]; then
        echo "suite $1 ran no test: counted as one failure"
        failed=1
    fi
    printf '%s %d %d\n' "$1" "$passed" "$failed" >>"$RESULTS"
    printf -- '-- suite %s: %d passed, %d failed\n' "$1" "$passed" "$failed"
}

finish() {
    local rc=$1
    cluster_stop 2>/dev/null
    # Stopped before every suite ran (a failed install or build): that is a failure too.
    if [ "$rc" -ne 0 ] && [ "${ALL_SUITES_RAN:-no}" != yes ]; then
        record_suite setup 0 1 >/dev/null
    fi
    local passed=0 failed=0 name p f
    echo
    echo "== summary"
    while read -r name p f; do
        printf '   %-10s %5d passed %5d failed\n' "$name" "$p" "$f"
        passed=$((passed + p))
        failed=$((failed + f))
    done <"$RESULTS"
    rm -f "$RESULTS"
    # PGSEM_KEEP_SCRATCH=1 keeps every suite's output (e.g. regress/results/*.out) for a look.
    if [ -n "${PGSEM_KEEP_SCRATCH:-}" ]; then echo "outputs kept in $SCRATCH"; else rm -rf "$SCRATCH"; fi
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
trap 'finish $?; exit $?' EXIT

install_packages "${TEST_PACKAGES[@]}" || die "could not install test packages"
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
PGXS_DIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
export PGXS_DIR
build_and_install

for suite_file in "$PGSEM_ROOT"/test/lib/*.sh "$PGSEM_ROOT"/test/suites/*.sh; do
    # shellcheck disable=SC1090
    source "$suite_file"
done

needs_server() {
    case " ${SUITES[*]} " in
        *" regress "*|*" isolation "*|*" pgtap "*|*" stress "*|*" client "*|*" package "*|*" harness "*)
            return 0 ;;
    esac
    return 1
}
if needs_server; then
    say "starting a throwaway cluster"
    cluster_start
    trap 'finish $?; exit $?' EXIT  # cluster_start set its own trap; finish stops the cluster
    echo "   port $PGPORT, data in $CLUSTER_DIR, server running as $(as_pg_user id -un)"
fi

for suite in "${SUITES[@]}"; do
    if declare -F "suite_$suite" >/dev/null; then
        say "suite $suite"
        "suite_$suite"
    else
        echo "unknown suite: $suite"
        record_suite "$suite" 0 1
    fi
done
ALL_SUITES_RAN=yes
