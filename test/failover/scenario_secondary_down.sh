# A claim acknowledged while the secondary is down (sourced, not run). pg_auto_failover 2.0 keeps
# the primary writable without its standby: once the monitor finds the secondary unhealthy it
# assigns the primary wait_primary, whose keeper empties synchronous_standby_names. Until then a
# claim waits for the standby (pg_stat_activity: wait_event SyncRep); then the primary alone
# acknowledges it. If the primary fails next, the monitor does not promote a standby it has
# assigned catchingup, and refuses a failover or a promotion by hand; once the old primary is
# back, the standby catches up from it and holds the claim, across a failover too.

scenario_secondary_down() {
    local p s start=$SECONDS
    p=$(afo_primary)
    s=node1
    [ "$p" = node1 ] && s=node2
    local ps="AFO_PORT_$p"
    afo_stop "$s"
    local log="$AFO_DIR/logs/claim-while-down.log"
    psql -X -At -h 127.0.0.1 -p "${!ps}" -U "$PGSEM_OS_USER" -d postgres \
        -c "SET application_name = 'afo-down'" -c "SELECT sem_claim('afo.down', 1, '1 hour')" \
        >"$log" 2>&1 &
    local client=$!
    # Either the claim is still waiting when we look, or the monitor was quicker: the report
    # says which.
    local seen=no
    afo_poll "SELECT count(*) = 1 FROM pg_stat_activity
               WHERE application_name = 'afo-down' AND wait_event = 'SyncRep'" "$p" && seen=yes
    wait "$client"
    local down_id
    down_id=$(tail -n 1 "$log")
    check "down: with $s stopped the claim on $p was acknowledged (id $down_id; seen waiting for SyncRep first: $seen)" \
        afo_is_number "$down_id"
    note_duration "down: from stopping the secondary to the claim's acknowledgement" \
        $((SECONDS - start))
    check_eq "down: the monitor has assigned $p wait_primary and $s catchingup" \
        "$(afo_goal_states)" "$(afo_sorted "$p=wait_primary" "$s=catchingup")"
    check_eq "down: synchronous_standby_names on $p is now empty" \
        "$(afo_sql "$p" "SHOW synchronous_standby_names")" ""

    # The primary fails (immediate: no shutdown checkpoint) while its standby is behind; then
    # the standby's keeper is back.
    local last_event log_start
    last_event=$(afo_monitor_sql "SELECT max(eventid) FROM pgautofailover.event")
    log_start=$(stat -c %s "$AFO_DIR/logs/$s.log")
    afo_stop "$p" --immediate
    afo_run "$s"
    check "down: the monitor marks $p unhealthy" afo_wait_event "$last_event" \
        "Node node ${p#node} \"$p\" (127.0.0.1:${!ps}) is marked as unhealthy by the monitor"
    # The keeper says so at each attempt to follow; two of them: the monitor has seen it report.
    check "down: $s's keeper finds itself not eligible for promotion" \
        afo_wait_log "$s" "$log_start" 'not eligible for promotion' 2
    local out
    out=$(afo_autoctl perform failover --pgdata "$AFO_DIR/monitor" 2>&1)
    check "down: pg_autoctl perform failover is refused" test $? -ne 0
    out=$(afo_autoctl perform promotion --name "$s" --pgdata "$AFO_DIR/monitor" 2>&1)
    check "down: pg_autoctl perform promotion of $s is refused" \
        grep -q 'promotion can only be performed when in state "secondary"' <<<"$out"
    check_eq "down: the monitor still assigns $p wait_primary and $s catchingup: no promotion" \
        "$(afo_goal_states)" "$(afo_sorted "$p=wait_primary" "$s=catchingup")"

    # The old primary comes back: it is the primary again, the standby catches up from it and
    # then holds the claim.
    afo_run "$p"
    check "down: $p back, $s catches up: primary and secondary again" \
        afo_wait_states "$(afo_roles "$p")"
    check_eq "down: $p holds the claim acknowledged while $s was down" \
        "$(afo_sql "$p" "SELECT sem_held($down_id)")" t
    check_eq "down: synchronous_standby_names names $s again" \
        "$(afo_sql "$p" "SHOW synchronous_standby_names")" "ANY 1 (pgautofailover_standby_${s#node})"
    afo_failover "$p" "$s" "down" || return 1
    check_eq "down: after a failover to $s the claim is held there" \
        "$(afo_sql "$s" "SELECT sem_held($down_id)")" t
    note_duration "down: the whole scenario" $((SECONDS - start))
}

afo_sorted() { printf '%s\n' "$@" | sort | paste -sd ' '; }

afo_goal_states() {
    afo_monitor_sql "SELECT string_agg(nodename || '=' || goalstate, ' ' ORDER BY nodename)
                       FROM pgautofailover.node"
}

# afo_wait_event AFTER_ID TEXT: waits until the monitor logs TEXT as an event after AFTER_ID
# (hang guard: 120 s).
afo_wait_event() {
    local _ text=${2//\'/\'\'}
    for _ in $(seq 240); do
        [ "$(afo_monitor_sql "SELECT count(*) > 0 FROM pgautofailover.event
                               WHERE eventid > $1 AND description = '$text'" 2>/dev/null)" = t ] &&
            return 0
        sleep 0.5
    done
    return 1
}

# afo_wait_log NODE OFFSET TEXT COUNT: waits until the node's pg_autoctl log, from byte OFFSET,
# has TEXT COUNT times (hang guard: 120 s).
afo_wait_log() {
    local _ n
    for _ in $(seq 240); do
        n=$(tail -c +$(($2 + 1)) "$AFO_DIR/logs/$1.log" 2>/dev/null | grep -cF "$3")
        [ "${n:-0}" -ge "$4" ] && return 0
        sleep 0.5
    done
    return 1
}
