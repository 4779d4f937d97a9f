# isolationtester: races and waits, test/isolation/specs/*.spec against test/isolation/expected,
# run by `make installcheck` (the Makefile lists the specs) in database isolation_regression. Each
# spec counts one.
suite_isolation() {
    local log="$SCRATCH/isolation.log" expected status counts
    expected=$(find "$PGSEM_ROOT/test/isolation/specs" -maxdepth 1 -name '*.spec' | wc -l)
    PGISOLATIONTIMEOUT=120 make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" \
        installcheck REGRESS= TAP_TESTS= >"$log" 2>&1
    status=$?
    cat "$log"
    local diffs="$PGSEM_ROOT/test/isolation/output/regression.diffs"
    [ -f "$diffs" ] && cat "$diffs"
    counts=$(count_pg_regress "$log" "$expected" "$status")
    record_suite isolation $counts
}
