#!/usr/bin/env bash
# pg_auto_failover end to end: a monitor, a primary with pgsem and a synchronous standby, run by
# pg_autoctl on loopback as the unprivileged server user, all under one scratch directory; then
# claims across a planned failover (scenario_claims.sh), a failover under a claim load watched by
# test/chaos/chaos.py (scenario_chaos.sh), and a claim acknowledged while the standby is down
# (scenario_secondary_down.sh), then the primary crashed and the standby promoted by the monitor
# (scenario_crash.sh). Uses the pgsem installed in the server's directories. Ends with
# "failover: N passed, N failed"; every process it started is ended and the scratch directory
# removed, also when it fails or is interrupted.
#
#   bash test/failover/run.sh          # as root (servers run as $PGSEM_OS_USER) or as a user
#   AFO_KEEP=1 bash test/failover/run.sh   # keep the scratch directory's logs (servers stopped)
set -uo pipefail

PGSEM_ROOT=${PGSEM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
here="$PGSEM_ROOT/test/failover"
# shellcheck source=../../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
for f in lib checks formation scenario_claims scenario_chaos scenario_secondary_down \
         scenario_crash; do
    # shellcheck disable=SC1090
    source "$here/$f.sh"
done
unset PGHOST PGPORT PGUSER PGDATABASE PGSERVICE

finish() {
    if [ -n "${AFO_KEEP:-}" ] && [ -n "${AFO_DIR:-}" ]; then
        local keep="${AFO_DIR}-logs"
        cp -r "$AFO_DIR/logs" "$keep" 2>/dev/null && echo "logs kept in $keep"
    fi
    if [ "$AFO_FAILED" -gt 0 ] && [ -n "${AFO_DIR:-}" ] && [ -d "$AFO_DIR/logs" ]; then
        local f
        for f in "$AFO_DIR"/logs/*.log; do
            echo "---- last 15 lines of ${f##*/}"
            tail -n 15 "$f"
        done
    fi
    afo_cleanup
    local d
    for d in "${AFO_DURATIONS[@]}"; do echo "   duration, $d"; done
    echo "failover: $AFO_PASSED passed, $AFO_FAILED failed"
}
trap 'finish' EXIT
trap 'exit 130' INT TERM

command -v pg_autoctl >/dev/null || { fail "pg_autoctl not found (postgresql-15-auto-failover)"; exit 1; }
echo "   $(pg_autoctl version | head -n 1), pg_ctl $AFO_PGCTL"
afo_init || { fail "could not make the scratch directory or find free ports"; exit 1; }
echo "   scratch $AFO_DIR; monitor port $AFO_MONITOR_PORT, node1 $(afo_port node1), node2 $(afo_port node2)"

setup_formation || exit 1
scenario_claims
scenario_chaos
scenario_secondary_down
scenario_crash
[ "$AFO_FAILED" -eq 0 ]
