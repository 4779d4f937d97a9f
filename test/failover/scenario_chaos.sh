# A failover under a running claim load (sourced, not run): test/chaos/chaos.py runs
# AFO_CHAOS_WORKERS clients for AFO_CHAOS_SECONDS against the conninfo listing both nodes (it
# reconnects to whichever accepts writes), its checkers watching every answer, while
# `pg_autoctl perform failover` moves the primary in the middle of the run, and back again. Counts:
# the tool ran to its summary, it did operations, each failover, the load outlasting the first,
# and 0 anomalies.

scenario_chaos() {
    local tool="$PGSEM_ROOT/test/chaos/chaos.py"
    if [ ! -f "$tool" ]; then
        fail "chaos: $tool is not there"
        return 1
    fi
    local seconds=${AFO_CHAOS_SECONDS:-60} workers=${AFO_CHAOS_WORKERS:-16}
    local record="$AFO_DIR/chaos-record" log="$AFO_DIR/logs/chaos.log"
    mkdir -p "$record"
    timeout $((seconds + 300)) /usr/bin/python3 "$tool" --dsn "$(afo_conninfo)" \
        --seconds "$seconds" --workers "$workers" --faults none --record-dir "$record" \
        >"$log" 2>&1 &
    local chaos=$! from to
    # timeout leads a process group of its own: the cleanup (and an interrupt) ends the load too.
    AFO_SESSIONS+=("$chaos")
    from=$(afo_primary)
    to=node1
    [ "$from" = node1 ] && to=node2
    # The first failover a third into the run, the second back once the first is over and the
    # load has run on the new primary for a while.
    sleep $((seconds / 3))
    afo_failover "$from" "$to" "chaos, first failover"
    # The check is of a failover under load: the load must outlast it (it runs long enough for a
    # failover many times slower than the few seconds it takes on an idle machine).
    check "chaos: the load still ran when the first failover had completed" kill -0 "$chaos"
    sleep $((seconds / 6))
    if kill -0 "$chaos" 2>/dev/null; then
        afo_failover "$to" "$from" "chaos, second failover"
    else
        echo "   (no second failover: the load had ended)"
    fi
    wait "$chaos"
    local rc=$? line
    line=$(grep -E '^chaos: [0-9]+ operations, [0-9]+ faults, [0-9]+ anomalies$' "$log" | tail -n 1)
    grep -vE '^chaos: [0-9]+ operations' "$log" | tail -n 20 | sed 's/^/   | /'
    if [ -z "$line" ]; then
        fail "chaos: the run ended without its summary line (exit $rc)"
        return 1
    fi
    echo "   $line"
    local ops anomalies
    read -r ops anomalies <<<"$(sed -E 's/^chaos: ([0-9]+) operations, [0-9]+ faults, ([0-9]+) anomalies$/\1 \2/' <<<"$line")"
    check "chaos: the load ran ($ops operations by $workers workers in ${seconds}s)" \
        test "$ops" -gt 0
    check_eq "chaos: no anomaly across the failovers" "$anomalies" 0
    check "chaos: the tool exited 0" test "$rc" -eq 0
}
