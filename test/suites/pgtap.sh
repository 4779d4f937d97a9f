# pgTAP: test/pgtap/*.sql run by pg_prove in database pgsem_pgtap (with extensions pgtap and
# pgsem). Each file is one transaction that ends in ROLLBACK, so files do not see each other.
# Counts individual assertions: an "ok" is a pass, a "not ok" a failure, and so is every planned
# assertion that never ran (a file that dies, or runs fewer than it planned). A file that ran more
# than it planned, or that pg_prove judged failed for any other reason, counts one more failure.
suite_pgtap() {
    local out="$SCRATCH/pgtap" db=pgsem_pgtap
    mkdir -p "$out"
    local files=() f
    for f in "$PGSEM_ROOT"/test/pgtap/*.sql; do  # a glob expands in sorted order
        [ -e "$f" ] && files+=("test/pgtap/${f##*/}")
    done
    if [ ${#files[@]} -eq 0 ]; then
        echo "FAILED: no pgTAP files in test/pgtap"
        record_suite pgtap 0 1
        return
    fi
    if ! command -v pg_prove >/dev/null 2>&1; then
        echo "FAILED: pg_prove not found (package postgresql-15-pgtap)"
        record_suite pgtap 0 1
        return
    fi
    if ! psql -X -q -v ON_ERROR_STOP=1 -d postgres \
            -c "SET client_min_messages = warning" \
            -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" ||
       ! psql -X -q -v ON_ERROR_STOP=1 -d "$db" \
            -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION pgsem"; then
        echo "FAILED: could not create database $db with extensions pgtap and pgsem"
        record_suite pgtap 0 1
        return
    fi

    (cd "$PGSEM_ROOT" && pg_prove --verbose --dbname "$db" "${files[@]}") \
        >"$out/pg_prove.out" 2>"$out/pg_prove.err"
    local rc=$?
    # Passing assertions are many; show everything else (headers, failures, diagnostics, summary).
    grep -vE '^ok [0-9]+' "$out/pg_prove.out"
    if [ -s "$out/pg_prove.err" ]; then
        echo "-- pg_prove stderr:"
        cat "$out/pg_prove.err"
    fi

    local counts passed failed reported
    counts=$(awk -v report="$out/per-file.txt" '
        function flush(   f, ran) {
            if (file == "") return
            ran = ok + nok
            f = nok
            if (plan < 0) f += 1                        # died before it planned anything
            else if (ran < plan) f += plan - ran        # planned assertions that never ran
            else if (ran > plan) f += 1                 # ran more than planned: a bad plan
            if (bad && f == 0) f = 1                    # pg_prove failed it for another reason
            printf "   %s: %d passed, %d failed\n", file, ok, f >> report
            passed += ok; failed += f; files++
            file = ""
        }
        /\.sql \.+ *$/ { flush(); file = $1; plan = -1; ok = 0; nok = 0; bad = 0; next }
        file != "" && /^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
        file != "" && /^ok [0-9]+/ { ok++; next }
        file != "" && /^not ok [0-9]+/ { nok++; next }
        file != "" && /^(Dubious|Failed [0-9]+\/[0-9]+ subtests|No subtests run)/ { bad = 1; next }
        /^(All tests successful|Test Summary Report|Files=[0-9])/ { flush() }
        END { flush(); printf "%d %d %d\n", passed, failed, files }
    ' "$out/pg_prove.out")
    read -r passed failed reported <<<"$counts"
    echo "-- per file:"
    [ -f "$out/per-file.txt" ] && cat "$out/per-file.txt"
    if [ "$reported" -lt ${#files[@]} ]; then
        echo "FAILED: pg_prove reported on $reported of ${#files[@]} files"
        failed=$((failed + ${#files[@]} - reported))
    fi
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        echo "FAILED: pg_prove exited with status $rc"
        failed=1
    fi
    record_suite pgtap "$passed" "$failed"
}
