# Client languages against database pgsem_client (created here, with the extension):
#   test/client/test_psycopg2.py  python3 + psycopg2: the README's fnv1a_64(), locks shared with
#                                 SQL, the seed article's unsigned-hash bug, semaphores from threads
#                                 and transactions
#   test/client/test_python_helper.py  clients/python/pgsem.py with psycopg2 and psycopg 3: waits,
#                                 exceptions, lost and renewed leases, transaction and session
#                                 semaphores
#   test/client/test_django.py    the README's Django recipe (python3-django): a throttled view,
#                                 an email sent once by concurrent workers, a lost lease's fence
#   test/client/test_recipes.py   the README's recipes as written: throttle, reserve(), process
#                                 each record once (psql script), fencing tokens
#   test/client/test_fnv1a.mjs    node: the README's fnv1a64() against key/value pairs made here by
#                                 the server's fnv1a_64(text)
#   test/client/test_node_helper.mjs  clients/node/pgsem.js with node-postgres (npm ci in
#                                 clients/node): the same cases as the Python helper's
# Each prints "client-<language>: P passed, F failed" last; the suite adds the counts up. A client
# that cannot start, dies without its count line, or exits non-zero with no failure counted adds
# one failure.
suite_client() {
    local out="$SCRATCH/client" db=pgsem_client
    local passed=0 failed=0
    mkdir -p "$out"
    create_test_database "$db" || { record_suite client 0 1; return; }

    # Python: the first python3 that has psycopg2 (Debian's python3-psycopg2 is for /usr/bin).
    local python
    if ! python=$(psycopg2_python); then
        echo "FAILED: client-python: no python3 with psycopg2 (package python3-psycopg2)"
        failed=$((failed + 1))
    else
        PGDATABASE=$db PGCLIENTENCODING=UTF8 timeout 300 \
            "$python" "$PGSEM_ROOT/test/client/test_psycopg2.py" >"$out/python.log" 2>&1
        client_tally python $? "$out/python.log"
        PGDATABASE=$db timeout 300 \
            "$python" "$PGSEM_ROOT/test/client/test_python_helper.py" >"$out/helper.log" 2>&1
        client_tally python-helper $? "$out/helper.log"
        PGDATABASE=$db timeout 300 \
            "$python" "$PGSEM_ROOT/test/client/test_django.py" >"$out/django.log" 2>&1
        client_tally django $? "$out/django.log"
        PGDATABASE=$db timeout 300 \
            "$python" "$PGSEM_ROOT/test/client/test_recipes.py" >"$out/recipes.log" 2>&1
        client_tally recipes $? "$out/recipes.log"
    fi

    # JavaScript: node compares its fnv1a64() with pairs the server computes now.
    if ! command -v node >/dev/null 2>&1; then
        echo "FAILED: client-node: node not found (package nodejs)"
        failed=$((failed + 1))
    elif ! client_make_pairs "$db" >"$out/pairs.json" 2>"$out/pairs.err"; then
        echo "FAILED: client-node: could not make the key/expected pairs"
        cat "$out/pairs.err"
        failed=$((failed + 1))
    else
        timeout 120 node "$PGSEM_ROOT/test/client/test_fnv1a.mjs" "$out/pairs.json" \
            >"$out/node.log" 2>&1
        client_tally node $? "$out/node.log"
    fi

    # The Node helper, with node-postgres as pinned in clients/node/package-lock.json.
    if ! command -v npm >/dev/null 2>&1; then
        echo "FAILED: client-node-helper: npm not found (package npm)"
        failed=$((failed + 1))
    elif ! (cd "$PGSEM_ROOT/clients/node" && timeout 300 npm ci --no-audit --no-fund) \
            >"$out/npm.log" 2>&1; then
        echo "FAILED: client-node-helper: npm ci in clients/node"
        tail -n 20 "$out/npm.log"
        failed=$((failed + 1))
    else
        PGDATABASE=$db timeout 120 node "$PGSEM_ROOT/test/client/test_node_helper.mjs" \
            >"$out/node-helper.log" 2>&1
        client_tally node-helper $? "$out/node-helper.log"
    fi

    record_suite client "$passed" "$failed"
}

# client_tally LANGUAGE EXIT_STATUS LOG: shows the log (less its passing lines) and adds the
# client's count line to the caller's passed and failed.
client_tally() {
    local language=$1 status=$2 log=$3 line p f
    echo "-- client-$language"
    grep -vE '^ok [0-9]+' "$log"
    line=$(grep -E "^client-$language: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAILED: client-$language died without its count line (exit status $status)"
        failed=$((failed + 1))
        return
    fi
    read -r p f <<<"$(sed -E 's/^[^:]*: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' <<<"$line")"
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAILED: client-$language exited with status $status"
        failed=$((failed + 1))
    fi
}

# client_make_pairs DB: a JSON array of {"key", "expected"} from the server's fnv1a_64(text), with
# the seed article's key, published vectors, multi-byte keys and 200 random md5 strings.
client_make_pairs() {
    PGCLIENTENCODING=UTF8 psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" <<'SQL'
SELECT json_agg(json_build_object('key', k, 'expected', fnv1a_64(k)::text) ORDER BY i)
  FROM (VALUES (1, '223 345'), (2, ''), (3, 'a'), (4, 'foobar'), (5, E'chongo was here!\n'),
               (6, 'é'), (7, E'e\u0301'), (8, 'naïve café'), (9, 'ключ'), (10, '鍵'),
               (11, '🔒'), (12, 'Ünïcödé 🐘 PostgreSQL'), (13, E'tab\there'),
               (14, E'line\nbreak'), (15, 'quote '' and "double"'), (16, '\backslash'),
               (17, repeat('日本語', 100)), (18, repeat('x', 10000)), (19, E'\U0010FFFD'),
               (20, E'zero\u200dwidth joiner')
        UNION ALL
        SELECT 100 + g, md5(random()::text || g::text) FROM generate_series(1, 200) AS g
       ) AS keys(i, k);
SQL
}
