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
    local out="$SCRATCH/soak" python="" candidate
    mkdir -p "$out"
    for candidate in /usr/bin/python3 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import psycopg2' 2>/dev/null
        then
            python=$candidate
            break
        fi
    done
    if [ -z "$python" ]; then
        echo "FAILED: soak: no python3 with psycopg2 (package python3-psycopg2)"
        record_suite soak 0 1
        return
    fi
    local seconds=${SOAK_SECONDS:-180} clients=${SOAK_CLIENTS:-150}
    # In a subshell: the cluster's variables and its EXIT trap (which stops it) stay there, away
    # from the shared cluster that other suites use.
    (
        cluster_start shared_preload_libraries=pgsem
        create_test_database pgsem_soak || exit 1
        timeout $((seconds + 300)) "$python" "$PGSEM_ROOT/test/soak/soak.py" \
            --dbname pgsem_soak --seconds "$seconds" --clients "$clients" \
            --steady $((clients < 10 ? clients : 10)) \
            --server-log "$CLUSTER_DIR/server.log" \
            --log-offset "$(stat -c %s "$CLUSTER_DIR/server.log")"
    ) >"$out/soak.log" 2>&1
    local status=$? line p=0 f=0
    cat "$out/soak.log"
    line=$(grep -E '^soak: [0-9]+ passed, [0-9]+ failed$' "$out/soak.log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAILED: soak ended without its count line (exit status $status)"
        record_suite soak 0 1
        return
    fi
    read -r p f <<<"$(sed -E 's/^soak: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' <<<"$line")"
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAILED: soak exited with status $status"
        f=1
    fi
    record_suite soak "$p" "$f"
}
