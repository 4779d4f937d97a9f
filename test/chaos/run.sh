#!/usr/bin/env bash
# The chaos run (`make chaos`): starts a throwaway cluster on loopback (as $PGSEM_OS_USER when
# root) with the whole claim history kept, creates the installed pgsem in it, runs the workload
# and the fault injector (test/chaos/chaos.py) for CHAOS_SECONDS with CHAOS_WORKERS workers,
# stops the cluster, then runs the checkers over the record and prints the summary, whose last
# line is "chaos: <N> operations, <N> faults, <N> anomalies".
#
#   CHAOS_SECONDS=600 bash test/chaos/run.sh            # or: make chaos CHAOS_SECONDS=600
#   bash test/chaos/run.sh --unfenced                   # writers skip sem_fence: must fail
#
# Arguments go to chaos.py. The record (JSON lines, the server's state, the server log) stays in
# the directory printed (CHAOS_RECORD_DIR to choose it). Exit status: 0 no anomaly, 1 anomalies
# (or a crash in the server log that the injector did not cause, or a kind of operation or fault
# that never ran), 2 the run could not run.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR/../..

PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"

SECONDS_TO_RUN=${CHAOS_SECONDS:-60}
WORKERS=${CHAOS_WORKERS:-32}
# Debian's python3 has psycopg2; a pyenv python3 first on PATH may not.
PYTHON=${CHAOS_PYTHON:-/usr/bin/python3}
"$PYTHON" -c 'import psycopg2' 2>/dev/null || { echo "chaos: $PYTHON lacks psycopg2"; exit 2; }

RECORD_DIR=${CHAOS_RECORD_DIR:-$(mktemp -d /tmp/chaos-records.XXXXXX)}
mkdir -p "$RECORD_DIR"
export CLUSTER_TEMPLATE=/tmp/chaos-cluster.XXXXXX  # read by cluster_start
# The injector restarts the server with pg_ctl, which reuses the options of postmaster.opts.
# Its faults crash processes, never the machine: what a commit wrote to the OS survives them
# without fsync, and a recovery then skips syncing the whole data directory (13 s of a loaded
# machine's 17 s recovery).
cluster_start "pgsem.history_max_claims=-1" "pgsem.history_retention=7d" "fsync=off" \
    "log_min_messages=warning" >/dev/null
trap cluster_stop EXIT
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE EXTENSION pgsem" ||
    { echo "chaos: could not create the extension"; exit 2; }

echo "chaos: $SECONDS_TO_RUN s, $WORKERS workers, server on port $PGPORT, record in $RECORD_DIR"
timeout $((SECONDS_TO_RUN + 300)) "$PYTHON" "$PGSEM_ROOT/test/chaos/chaos.py" \
    --dsn "host=127.0.0.1 port=$PGPORT user=postgres dbname=postgres" \
    --seconds "$SECONDS_TO_RUN" --workers "$WORKERS" --faults all \
    --pgdata "$CLUSTER_DIR/data" --pg-log "$CLUSTER_DIR/server.log" \
    --pg-bindir "$PG_BINDIR" --pg-os-user "$PGSEM_OS_USER" \
    --record-dir "$RECORD_DIR" --no-check "$@" &
runner=$!
# timeout leads a process group of its own, out of the terminal's reach: a Ctrl-C here ends it,
# its workers (woken first: the injector may have stopped some) and the cluster.
trap 'kill -TERM -- "-$runner" 2>/dev/null; kill -CONT -- "-$runner" 2>/dev/null
      cluster_stop; echo "chaos: interrupted"; exit 130' INT TERM
wait "$runner"
rc=$?
trap - INT TERM
cp "$CLUSTER_DIR/server.log" "$RECORD_DIR/server.log" 2>/dev/null
cluster_stop
trap - EXIT
[ "$rc" -eq 0 ] || { echo "chaos: the run could not run (exit status $rc)"; exit 2; }

# SIGKILLed backends are the injector's; any other signal, a PANIC or a failed assertion is not.
crashes=$(grep -E 'terminated by signal|PANIC|TRAP:' "$RECORD_DIR/server.log" |
          grep -vc 'terminated by signal 9: Killed')
if [ "$crashes" -gt 0 ]; then
    echo "chaos: the server log shows $crashes crashes the injector did not cause:"
    grep -E 'terminated by signal|PANIC|TRAP:' "$RECORD_DIR/server.log" |
        grep -v 'terminated by signal 9: Killed' | head -n 5
else
    echo "chaos: the server log shows no crash but the injected ones"
fi

echo "chaos: record kept in $RECORD_DIR"
"$PYTHON" "$PGSEM_ROOT/test/chaos/chaos.py" --check-only "$RECORD_DIR"
rc=$?
[ "$rc" -eq 0 ] && [ "$crashes" -gt 0 ] && rc=1
exit "$rc"
