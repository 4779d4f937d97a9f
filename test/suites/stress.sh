# Stress: 20 clients claim, hold and release semaphore slots at once, in autocommit and in
# transactions at every isolation level, with rollbacks, pooled releases and a killer terminating
# backends; beside them 6 clients wait in line for leases, transaction and session claims, or try
# to pass those who wait, while the killer cancels and terminates them (test/stress/main.cpp says
# what the run proves). Proves from the clients' own record and from the server's history that no
# semaphore ever had more than n holders, and from the clients' record of their calls that the
# line is first come, first served. Then two clients race for the slots of a semaphore that
# always has one free, and no claim may answer NULL. Then rate limits (a sliding window and a
# token bucket) under cancels and kills, checked from their grant logs and the server's history.
# Counts: the checker's self-test, each check the stress program reports, the free-slot race, the
# wait-edge run, the three rate-limit checks, and a server log free of crashes.
suite_stress() {
    local out="$SCRATCH/stress"
    mkdir -p "$out"
    cmake_build || { record_suite stress 0 1; return; }
    local bin="$CMAKE_BUILD/pgsem_stress"
    [ -x "$bin" ] || { echo "no $bin: is libpq found by CMake?"; record_suite stress 0 1; return; }
    local passed=0 failed=0

    if "$bin" --self-test >"$out/self-test.log" 2>&1; then
        echo "ok: the checker finds every planted violation (--self-test)"
        passed=$((passed + 1))
    else
        cat "$out/self-test.log"
        echo "FAILED: the checker's self-test"
        failed=$((failed + 1))
    fi

    if ! create_test_database pgsem_stress; then
        record_suite stress "$passed" $((failed + 1))
        return
    fi

    local log_start=0
    [ -f "$CLUSTER_DIR/server.log" ] && log_start=$(stat -c %s "$CLUSTER_DIR/server.log")
    local rc=0
    # STRESS_ARGS (e.g. "--clients 4 --cycles 20") changes the run's size.
    # shellcheck disable=SC2086
    timeout 240 "$bin" --conninfo "dbname=pgsem_stress" ${STRESS_ARGS:-} 2>&1 | tee "$out/stress.log"
    rc=${PIPESTATUS[0]}
    local line p f
    line=$(grep -E '^stress: [0-9]+ checks passed, [0-9]+ failed$' "$out/stress.log" | tail -n 1)
    if [ -n "$line" ]; then
        p=$(sed -E 's/^stress: ([0-9]+) checks passed, ([0-9]+) failed$/\1/' <<<"$line")
        f=$(sed -E 's/^stress: ([0-9]+) checks passed, ([0-9]+) failed$/\2/' <<<"$line")
        passed=$((passed + p))
        failed=$((failed + f))
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
            echo "FAILED: pgsem_stress exited with status $rc"
            failed=$((failed + 1))
        fi
    else
        echo "FAILED: pgsem_stress ended without its summary (exit status $rc)"
        failed=$((failed + 1))
    fi

    # No NULL while a slot is free: two clients take and give back transaction claims of one
    # semaphore of n = 2 as fast as they can, so one slot is always free and every NULL is a
    # claimer that found a free slot held. pgbench stops a client at its first NULL (a division
    # by zero). 1.1 answered NULL about once in 100,000 claims: a probe of a slot's lock made a
    # claimer taking that slot at the same moment find it held (every 10 s run of this caught
    # it).
    local script="$out/free-slot.sql" pgbench_log="$out/free-slot.log"
    printf '%s
' 'BEGIN;'         "SELECT 1 / (CASE WHEN sem_claim_xact('stress.free', 2) IS NULL THEN 0 ELSE 1 END);"         'COMMIT;' >"$script"
    "$PG_BINDIR/pgbench" -n -c 2 -j 2 -T "${STRESS_FREE_SLOT_SECONDS:-10}" -f "$script"         pgsem_stress >"$pgbench_log" 2>&1
    if grep -q 'aborted in command' "$pgbench_log" ||
            ! grep -qE 'number of transactions actually processed: [1-9]' "$pgbench_log"; then
        cat "$pgbench_log"
        echo "FAILED: a transaction claim answered NULL while a slot was free"
        failed=$((failed + 1))
    else
        echo "ok: no NULL while a slot was free ($(grep -oE 'processed: [0-9]+' "$pgbench_log" |
              sed 's/processed: //') transaction claims by 2 clients on n = 2)"
        passed=$((passed + 1))
    fi

    # A wait that ends as it is granted is no error: 30 clients wait up to 150 ms in a rate
    # limit's line, on a machine kept busy by two spinning shells, so that the end of a wait
    # often meets its grant. The timer of the line's wait once fired as the lock was granted and
    # reached the caller as "canceling statement due to lock timeout" (lock_timeout unset):
    # 5 of 6 such 5 s runs caught it.
    script="$out/wait-edge.sql"
    pgbench_log="$out/wait-edge.log"
    printf '%s\n' "SELECT sem_rate('stress.edge', 6, '200 milliseconds', wait => '150 milliseconds');" \
        >"$script"
    local spinners=()
    for _ in 1 2; do
        timeout 30 bash -c 'while :; do :; done' &
        spinners+=($!)
    done
    "$PG_BINDIR/pgbench" -n -c 30 -j 2 -T "${STRESS_WAIT_EDGE_SECONDS:-10}" -f "$script" \
        pgsem_stress >"$pgbench_log" 2>&1
    kill "${spinners[@]}" 2>/dev/null
    wait "${spinners[@]}" 2>/dev/null
    if grep -qE 'error|aborted' "$pgbench_log" ||
            ! grep -qE 'number of transactions actually processed: [1-9]' "$pgbench_log"; then
        grep -E 'error|aborted' "$pgbench_log" | head -n 3
        echo "FAILED: a wait in line that ended as it was granted raised an error"
        failed=$((failed + 1))
    else
        echo "ok: no error where a wait's end met its grant ($(grep -oE 'processed: [0-9]+' \
              "$pgbench_log" | sed 's/processed: //') calls by 30 clients waiting 150 ms)"
        passed=$((passed + 1))
    fi

    rate_limits_under_kills "$out"
    passed=$((passed + RATE_PASSED))
    failed=$((failed + RATE_FAILED))

    # A backend that crashed would show in the server log as a signal or a PANIC.
    if [ -f "$CLUSTER_DIR/server.log" ]; then
        if tail -c +$((log_start + 1)) "$CLUSTER_DIR/server.log" |
                grep -E 'terminated by signal|PANIC|TRAP:' >"$out/crashes.log"; then
            head -n 5 "$out/crashes.log"
            echo "FAILED: the server log shows a crash during the stress run"
            failed=$((failed + 1))
        else
            echo "ok: no backend crashed during the stress run"
            passed=$((passed + 1))
        fi
    fi

    drop_test_database pgsem_stress
    record_suite stress "$passed" "$failed"
}

# Rate limits under cancels and kills: 32 clients ask two sliding windows (sem_rate, 10 per
# 200 ms, and 100 per 200 ms: above 64 slots a grant takes the slots above the highest used one
# without queueing for their mutexes, then random probes, then the passed grants' slots) and a
# token bucket (sem_bucket, 50 per second, burst 10) for 1-3 permits, half of the calls waiting up
# to 100 ms, each grant logged by the statement that makes it (the log row commits with the grant,
# or neither does); a killer cancels or terminates a random client's backend every 300 ms. Then,
# for each window: the log and the server's history hold the same grants (none lost, none made
# twice); no window of 200 ms holds more than n (server history, grant times). No span of the
# bucket's log holds more than burst + span x rate (+3: a grant is logged a little after it is
# made). Sets RATE_PASSED and RATE_FAILED.
rate_limits_under_kills() {
    local out=$1 seconds=${STRESS_RATE_SECONDS:-8}
    RATE_PASSED=0
    RATE_FAILED=0
    psql -X -q -d pgsem_stress -c "CREATE TABLE stress_rate_log (kind text NOT NULL,
        permits integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())" || {
        RATE_FAILED=1
        return
    }
    local call
    for call in "rate|sem_rate('stress.rate', 10, '200 milliseconds'" \
                "wide|sem_rate('stress.wide', 100, '200 milliseconds'" \
                "bucket|sem_bucket('stress.bucket', 50, '1 second', burst => 10"; do
        printf '%s\n' '\set p random(1, 3)' '\set w random(0, 1) * 100' \
            "INSERT INTO stress_rate_log (kind, permits) SELECT '${call%%|*}', :p WHERE ${call#*|}, permits => :p, wait => make_interval(secs => :w / 1000.0));" \
            >"$out/rate-${call%%|*}.sql"
    done
    # Killed clients stop (pgbench does not reconnect): 32 start, about 26 are struck.
    "$PG_BINDIR/pgbench" -n -c 32 -j 2 -T "$seconds" -f "$out/rate-rate.sql" \
        -f "$out/rate-wide.sql" -f "$out/rate-bucket.sql" pgsem_stress >"$out/rate.log" 2>&1 &
    local bench=$! end=$((SECONDS + seconds)) strikes=0
    sleep 0.5
    while [ "$SECONDS" -lt "$end" ]; do
        local how=pg_cancel_backend
        [ $((strikes % 2)) -eq 1 ] && how=pg_terminate_backend
        psql -X -q -At -d pgsem_stress -c "SELECT $how(pid) FROM pg_stat_activity
            WHERE application_name = 'pgbench' AND datname = 'pgsem_stress'
            ORDER BY random() LIMIT 1" >/dev/null 2>&1 && strikes=$((strikes + 1))
        sleep 0.3
    done
    wait "$bench"
    local window kind n verdict logged held widest
    for window in "rate 10" "wide 100"; do
        read -r kind n <<<"$window"
        verdict=$(psql -X -At -d pgsem_stress -F ' ' -c "
            SELECT (SELECT coalesce(sum(permits), 0) FROM stress_rate_log WHERE kind = '$kind'),
                   (SELECT count(*) FROM pgsem.claims WHERE name = 'stress.$kind' AND rate),
                   (SELECT coalesce(max(c), 0) FROM (
                        SELECT count(*) OVER (ORDER BY claimed_at RANGE BETWEEN
                                              interval '199999 microseconds' PRECEDING AND
                                              CURRENT ROW) c
                          FROM pgsem.claims WHERE name = 'stress.$kind' AND rate) w)")
        read -r logged held widest <<<"$verdict"
        echo "rate limits under $strikes strikes, $n per 200 ms: $logged permits logged, $held" \
            "in the history, at most $widest in 200 ms"
        if [ -n "$held" ] && [ "$logged" -eq "$held" ] && [ "$logged" -gt 0 ]; then
            echo "ok: every grant of $n per 200 ms is in the log and the history, once"
            RATE_PASSED=$((RATE_PASSED + 1))
        else
            echo "FAILED: grants of $n per 200 ms logged ($logged) and in the history ($held) differ"
            RATE_FAILED=$((RATE_FAILED + 1))
        fi
        if [ -n "$widest" ] && [ "$widest" -le "$n" ] && [ "$strikes" -gt 0 ]; then
            echo "ok: no 200 ms held more than $n permits of $n per 200 ms, under $strikes strikes"
            RATE_PASSED=$((RATE_PASSED + 1))
        else
            echo "FAILED: a 200 ms window held $widest permits of $n (or no strike landed)"
            RATE_FAILED=$((RATE_FAILED + 1))
        fi
    done
    verdict=$(psql -X -At -d pgsem_stress -F ' ' -c "
        SELECT (SELECT coalesce(sum(permits), 0) FROM stress_rate_log WHERE kind = 'bucket'),
               (WITH g AS (SELECT at, permits, sum(permits) OVER (ORDER BY at, ctid) AS cum
                             FROM stress_rate_log WHERE kind = 'bucket')
                SELECT count(*) FROM g a JOIN g b ON b.at >= a.at
                 WHERE b.cum - a.cum + a.permits >
                       10 + 3 + ceil(extract(epoch FROM b.at - a.at) * 50))")
    local bucket_permits over
    read -r bucket_permits over <<<"$verdict"
    echo "rate limits under $strikes strikes: $bucket_permits bucket permits"
    if [ -n "$over" ] && [ "$over" -eq 0 ] && [ "$bucket_permits" -gt 0 ]; then
        echo "ok: no span of the bucket's log held more than burst + span x rate"
        RATE_PASSED=$((RATE_PASSED + 1))
    else
        echo "FAILED: $over spans of the bucket's log held more than burst + span x rate"
        RATE_FAILED=$((RATE_FAILED + 1))
    fi
}
