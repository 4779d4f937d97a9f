# Soak (issue 23): SOAK_CLIENTS (150) client connections claim, wait, renew and release for
# SOAK_SECONDS (180) -- leases, transaction and session claims, several permits, sets, a sliding
# window, a token bucket, keyed retries, some under lock_timeout or statement_timeout -- while a
# chaos thread cancels and terminates their backends (the files of test/soak/ say what each check
# proves). Then: no live claim, waiter, pgsem lock or registry entry is left, with the clients
# still connected and once they are gone; every semaphore is whole; never more than n held; the
# ten steady backends' memory did not grow; the server log has no crash, leak or WARNING.
#
# A cluster of its own, with pgsem in shared_preload_libraries: the counters of sem_stats and
# the registry reserved at startup are the paths a production server runs, and a backend that
# crashes under the soak takes down no other suite's server. Its log holds this run alone.
suite_soak() {
    local out="$SCRATCH/soak" python
    mkdir -p "$out"
    if ! python=$(psycopg2_python); then
        echo "FAILED: soak: no python3 with psycopg2 (package python3-psycopg2)"
        record_suite soak 0 1
        return
    fi
    local seconds=${SOAK_SECONDS:-180} clients=${SOAK_CLIENTS:-150}
    # In a subshell: the cluster's variables and its EXIT trap (which stops it) stay there, away
    # from the shared cluster that other suites use.
    (
        # A backend that crashes leaves a core in the data directory, kept below for a look.
        ulimit -c unlimited 2>/dev/null
        cluster_start shared_preload_libraries=pgsem
        create_test_database pgsem_soak || exit 1
        timeout $((seconds + 300)) "$python" "$PGSEM_ROOT/test/soak/soak.py" \
            --dbname pgsem_soak --seconds "$seconds" --clients "$clients" \
            --steady $((clients < 10 ? clients : 10)) \
            --server-log "$CLUSTER_DIR/server.log" \
            --log-offset "$(stat -c %s "$CLUSTER_DIR/server.log")"
        status=$?
        # The cluster goes with the subshell; its log stays for a look (PGSEM_KEEP_SCRATCH=1).
        cp "$CLUSTER_DIR/server.log" "$out/server.log" 2>/dev/null
        if grep -E 'terminated by signal|PANIC|TRAP:' "$out/server.log" | head -n 5 | grep .; then
            cp "$CLUSTER_DIR"/data/core* "$out/" 2>/dev/null && echo "cores kept in $out"
        fi
        exit "$status"
    ) >"$out/soak.log" 2>&1
    local status=$?
    cat "$out/soak.log"
    # shellcheck disable=SC2046
    record_suite soak $(count_summary_line soak "$out/soak.log" "$status")
}
