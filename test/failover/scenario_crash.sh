# An unplanned failover (sourced, not run): the primary stops with -m immediate (a crash as far as
# its data goes) and nobody asks for a failover; the monitor finds it unhealthy and promotes the
# secondary by itself. Every lease live before is held there, and ids go on above them.

scenario_crash() {
    local p s start=$SECONDS
    p=$(afo_primary)
    s=node1
    [ "$p" = node1 ] && s=node2
    local ids max_id
    afo_sql "$p" "SELECT sem_claim('afo.crash', 1, '1 hour')" >/dev/null
    ids=$(afo_sql "$p" "SELECT string_agg(DISTINCT id::text, ',' ORDER BY id::text)
                          FROM sem_holders WHERE kind = 'lease'")
    max_id=$(afo_sql "$p" "SELECT max(id) FROM sem_history")
    afo_stop "$p" --immediate
    if ! check "crash: the monitor promotes $s by itself after $p stopped (immediate)" \
            afo_poll_monitor "SELECT reportedstate = 'wait_primary' AND goalstate = 'wait_primary'
                                FROM pgautofailover.node WHERE nodename = '$s'"; then
        return 1
    fi
    note_duration "crash: from stopping the primary to the secondary's promotion" \
        $((SECONDS - start))
    check_eq "crash: every lease live on $p before the crash is held on $s" \
        "$(afo_sql "$s" "SELECT string_agg(DISTINCT id::text, ',' ORDER BY id::text)
                           FROM sem_holders WHERE kind = 'lease'")" "$ids"
    local new_id
    new_id=$(afo_sql "$s" "SELECT sem_claim('afo.crash.after', 1, '1 hour')")
    check "crash: an id drawn on $s ($new_id) exceeds every id before ($max_id)" \
        afo_id_above "$new_id" "$max_id"
}

# afo_poll_monitor SQL: waits until SQL returns t on the monitor (hang guard: 300 s).
afo_poll_monitor() {
    local _
    for _ in $(seq 600); do
        [ "$(afo_monitor_sql "$1" 2>/dev/null)" = t ] && return 0
        sleep 0.5
    done
    return 1
}
