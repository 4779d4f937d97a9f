# Claims across a planned failover (sourced, not run). On the primary (node1): a plain lease, a
# claim of 3 permits, a set of two semaphores, a rate grant, and a session claim held by a client
# with a second client waiting in line behind it. Then `pg_autoctl perform failover`. On the
# promoted node2: every lease is held with the expiry its client was given, the rate grant still
# fills its window, a renewal and a release work, ids drawn now exceed every id drawn before;
# the session claim and the waiter ended with their connections (their clients see errors) and
# the slot is free; a client whose conninfo lists both nodes with target_session_attrs=read-write
# lands on node2; node1, now a standby, refuses claims.

scenario_claims() {
    local p=node1
    local lease three set_ids
    lease=$(afo_sql $p "SELECT sem_claim('afo.lease', 2, '1 hour')")
    three=$(afo_sql $p "SELECT sem_claim('afo.three', 5, '1 hour', permits => 3)")
    set_ids=$(afo_sql $p "SELECT array_to_string(sem_claim_all(ARRAY['afo.a', 'afo.b'],
                                                               ARRAY[1, 1], '1 hour'), ',')")
    check_eq "claims: a rate grant on the primary" \
        "$(afo_sql $p "SELECT sem_rate('afo.rate', 1, '1 hour')")" t
    check "claims: a lease, 3 permits and a set granted on the primary ($lease, $three, $set_ids)" \
        afo_is_number "$lease" "$three" "${set_ids%,*}" "${set_ids#*,}"
    local expiries max_id
    expiries=$(afo_sql $p "SELECT string_agg(id || '=' || expires_at, ',' ORDER BY id, slot)
                             FROM sem_holders WHERE kind = 'lease'")
    max_id=$(afo_sql $p "SELECT max(id) FROM sem_history")

    # A session claim held by one client, a waiter in line behind it in another: both live in
    # node1's memory only.
    local session_log="$AFO_DIR/logs/session-holder.log" waiter_log="$AFO_DIR/logs/waiter.log"
    timeout 600 psql -X -At -h 127.0.0.1 -p "$(afo_port node1)" -U "$PGSEM_OS_USER" -d postgres \
        -c "SELECT sem_claim_session('afo.sess', 1)" -c "SELECT pg_sleep(3600)" \
        >"$session_log" 2>&1 &
    local holder=$!
    afo_poll "SELECT count(*) = 1 FROM sem_holders WHERE name = 'afo.sess' AND kind = 'session'" \
        $p
    timeout 600 psql -X -At -h 127.0.0.1 -p "$(afo_port node1)" -U "$PGSEM_OS_USER" -d postgres \
        -c "SELECT sem_claim('afo.sess', 1, '1 hour', wait => '1 hour')" >"$waiter_log" 2>&1 &
    local waiter=$!
    check "claims: a session claim is held and a lease claim waits in line behind it" \
        afo_poll "SELECT count(*) = 1 FROM sem_waiters WHERE name = 'afo.sess'" $p

    afo_failover node1 node2 "claims" || { kill "$holder" "$waiter" 2>/dev/null; return 1; }
    local s=node2
    check_eq "claims: node2 is promoted" "$(afo_sql $s "SELECT pg_is_in_recovery()")" f
    check_eq "claims: every lease granted before is held on node2, with its expiry" \
        "$(afo_sql $s "SELECT string_agg(id || '=' || expires_at, ',' ORDER BY id, slot)
                         FROM sem_holders WHERE kind = 'lease'")" "$expiries"
    check_eq "claims: the lease, the claim of 3 permits and the set are held" \
        "$(afo_sql $s "SELECT sem_held($lease) AND sem_held($three)
                              AND (SELECT bool_and(sem_held(x::bigint))
                                     FROM unnest(string_to_array('$set_ids', ',')) x)")" t
    check_eq "claims: the claim of 3 permits holds 3 slots" \
        "$(afo_sql $s "SELECT count(*) FROM sem_holders WHERE id = $three")" 3
    check_eq "claims: the rate grant still fills its window (1 per hour)" \
        "$(afo_sql $s "SELECT sem_rate('afo.rate', 1, '1 hour')")" f
    check_eq "claims: the lease still counts against n = 2 (one more slot, then none)" \
        "$(afo_sql $s "SELECT sem_claim('afo.lease', 2, '1 hour') IS NOT NULL
                              AND sem_claim('afo.lease', 2, '1 hour') IS NULL")" t
    check_eq "claims: a renewal of the lease works on node2 and moves its expiry" \
        "$(afo_sql $s "SELECT sem_renew($lease, '2 hours')" \
                      "SELECT expires_at > now() + interval '90 minutes'
                         FROM sem_history WHERE id = $lease")" "$(printf 't\nt')"
    check_eq "claims: a release of the claim of 3 permits works on node2 and frees its slots" \
        "$(afo_sql $s "SELECT sem_release($three)" \
                      "SELECT count(*) FROM sem_holders WHERE id = $three")" "$(printf 't\n0')"
    local new_id
    new_id=$(afo_sql $s "SELECT sem_claim('afo.new', 1, '1 hour')")
    check "claims: an id drawn after the failover ($new_id) exceeds every id before ($max_id)" \
        afo_id_above "$new_id" "$max_id"

    # The clients of node1's session claim and waiter lost their connections: a demoted primary
    # ends every session.
    local holder_rc waiter_rc
    wait "$holder"
    holder_rc=$?
    wait "$waiter"
    waiter_rc=$?
    check "claims: the session claim's client lost its connection (psql exit $holder_rc)" \
        test "$holder_rc" -ne 0 -a "$holder_rc" -ne 124
    check "claims: the waiter's client lost its connection, with no claim (psql exit $waiter_rc)" \
        test "$waiter_rc" -ne 0 -a "$waiter_rc" -ne 124
    check_eq "claims: node2 has no holder and no waiter of afo.sess, and a new session claims it" \
        "$(afo_sql $s "SELECT (SELECT count(*) FROM sem_holders WHERE name = 'afo.sess')
                              + (SELECT count(*) FROM sem_waiters WHERE name = 'afo.sess')" \
                      "SELECT sem_claim_session('afo.sess', 1)")" "$(printf '0\n0')"

    check_eq "claims: a client listing both nodes with target_session_attrs=read-write reaches node2" \
        "$(psql -X -At "$(afo_conninfo)" -c "SELECT inet_server_port(), sem_held($lease)")" \
        "$(afo_port node2)|t"
    check_eq "claims: node1, now a standby, refuses a claim (25006)" \
        "$(afo_sql node1 "DO \$\$ BEGIN PERFORM sem_claim('afo.lease', 2);
                           EXCEPTION WHEN read_only_sql_transaction THEN RAISE NOTICE 'refused'; END \$\$" 2>&1 |
           grep -o refused)" refused
}

# afo_poll SQL NODE: waits until SQL returns t on NODE (hang guard: 120 s).
afo_poll() {
    local _
    for _ in $(seq 480); do
        [ "$(afo_sql "$2" "$1" 2>/dev/null)" = t ] && return 0
        sleep 0.25
    done
    return 1
}
