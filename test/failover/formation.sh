# Setting up the formation (sourced, not run): a monitor, node1 as the primary with pgsem,
# node2 as its synchronous standby. Each step is a check; a step that fails stops the run, since
# every scenario needs the formation.

setup_formation() {
    local start=$SECONDS step
    check "the monitor is created and runs (port $AFO_MONITOR_PORT)" afo_create_monitor || return 1
    check "the monitor answers" afo_wait_monitor || return 1
    check "node1 is created as the primary (port $(afo_port node1))" afo_create_node node1 || return 1
    afo_run node1
    check "node1 runs as the formation's only node" afo_wait_states "node1=single/single" ||
        return 1
    check "node1 accepts connections" afo_wait_sql node1 || return 1
    check "CREATE EXTENSION pgsem on the primary" afo_sql node1 "CREATE EXTENSION pgsem" ||
        return 1
    step=$SECONDS
    check "node2 is created as a standby of node1 (port $(afo_port node2))" afo_create_node node2 ||
        return 1
    afo_run node2
    check "the monitor has node1 primary and node2 secondary" \
        afo_wait_states "node1=primary/primary node2=secondary/secondary" || return 1
    note_duration "node2 created and in sync" $((SECONDS - step))
    note_duration "formation set up" $((SECONDS - start))

    # pg_auto_failover's default: every standby with replication-quorum true counts, one must
    # acknowledge (number_sync_standbys 0 still means one while a standby is healthy).
    local names
    names=$(afo_sql node1 "SHOW synchronous_standby_names")
    check_eq "synchronous_standby_names on the primary names node2's quorum" \
        "$names" "ANY 1 (pgautofailover_standby_2)"
    check_eq "node2 replicates as a quorum (synchronous) standby" \
        "$(afo_sql node1 "SELECT string_agg(application_name || ':' || sync_state, ',')
                            FROM pg_stat_replication")" "pgautofailover_standby_2:quorum"
    check_eq "synchronous_commit on the primary is on" \
        "$(afo_sql node1 "SHOW synchronous_commit")" "on"
    check_eq "the extension is on the standby too, replicated" \
        "$(afo_sql node2 "SELECT extversion FROM pg_extension WHERE extname = 'pgsem'")" \
        "$(afo_sql node1 "SELECT extversion FROM pg_extension WHERE extname = 'pgsem'")"
}

# afo_wait_sql NODE: waits until the node accepts connections (hang guard: 60 s).
afo_wait_sql() {
    local _
    for _ in $(seq 120); do
        afo_sql "$1" "SELECT 1" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 1
}

afo_wait_monitor() {
    local _
    for _ in $(seq 120); do
        afo_monitor_sql "SELECT 1" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 1
}

# afo_failover FROM TO LABEL: `pg_autoctl perform failover` (it returns once the monitor has the
# new primary), then waits until both nodes report their new roles.
afo_failover() {
    local from=$1 to=$2 label=$3 start=$SECONDS
    if ! afo_autoctl perform failover --pgdata "$AFO_DIR/monitor" \
            >>"$AFO_DIR/logs/perform-failover.log" 2>&1; then
        tail -n 5 "$AFO_DIR/logs/perform-failover.log"
        fail "$label: pg_autoctl perform failover"
        return 1
    fi
    note_duration "$label: pg_autoctl perform failover returned" $((SECONDS - start))
    if afo_wait_states "$(afo_roles "$to")"; then
        pass "$label: $to is the primary, $from its secondary"
        note_duration "$label: until both nodes are in their new roles" $((SECONDS - start))
    else
        fail "$label: $to is the primary, $from its secondary"
        return 1
    fi
}

# afo_roles PRIMARY: the states afo_wait_states waits for when PRIMARY is the primary.
afo_roles() {
    if [ "$1" = node1 ]; then
        echo "node1=primary/primary node2=secondary/secondary"
    else
        echo "node1=secondary/secondary node2=primary/primary"
    fi
}
