# pgTAP: test/pgtap/*.sql run by pg_prove in database pgsem_pgtap (with extensions pgtap and
# pgsem). Each file is one transaction that ends in ROLLBACK, so files do not see each other.
# Each assertion counts one (see count_tap_harness).
suite_pgtap() {
    local log="$SCRATCH/pg_prove.log" db=pgsem_pgtap files=() f status counts
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
    create_test_database "$db" pgtap pgsem || { record_suite pgtap 0 1; return; }
    (cd "$PGSEM_ROOT" && pg_prove --verbose --dbname "$db" "${files[@]}") >"$log" 2>&1
    status=$?
    # Passing assertions are many; show everything else (headers, failures, diagnostics, summary).
    grep -vE '^ok [0-9]+' "$log"
    counts=$(count_tap_harness "$log" "${#files[@]}" "$status")
    record_suite pgtap $counts
}
