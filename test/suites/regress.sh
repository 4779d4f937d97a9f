# pg_regress: every sql/<name>.sql against expected/<name>.out, run by `make installcheck` (the
# PGXS target; the Makefile lists the cases) against the running cluster, in database
# pgsem_regress. Each case counts one.
suite_regress() {
    local log="$SCRATCH/regress.log" expected status counts
    expected=$(find "$PGSEM_ROOT/sql" -maxdepth 1 -name '*.sql' | wc -l)
    make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck \
        ISOLATION= TAP_TESTS= >"$log" 2>&1
    status=$?
    cat "$log"
    [ -f "$PGSEM_ROOT/regression.diffs" ] && cat "$PGSEM_ROOT/regression.diffs"
    counts=$(count_pg_regress "$log" "$expected" "$status")
    record_suite regress $counts
}
