# Failover: pg_auto_failover end to end (test/failover/run.sh): a monitor, a primary with pgsem
# and its synchronous standby, run by pg_autoctl on loopback as the server's user; claims across
# `pg_autoctl perform failover`, a failover under test/chaos/chaos.py's load and checkers, and a
# claim acknowledged while the standby is down. Starts its own servers (it needs no running one)
# and uses the pgsem installed in the server's directories. Each check counts one; a run that
# ends without its summary line, or exits non-zero with no failure counted, adds one failure.
suite_failover() {
    local out="$SCRATCH/failover" log rc
    mkdir -p "$out"
    log="$out/failover.log"
    # The limit only stops a hang: a run takes a few minutes, longer on a loaded machine.
    timeout 1200 bash "$PGSEM_ROOT/test/failover/run.sh" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    # shellcheck disable=SC2046
    record_suite failover $(count_summary_line failover "$log" "$rc")
}
