# pg_regress: every sql/<name>.sql against expected/<name>.out, run by `make installcheck` (the
# PGXS target; the Makefile lists the cases) against the running cluster, in database
# contrib_regression: first all in name order, then each alone in a fresh database, since every
# case must run on its own (helpers such as sql/helpers/try.sql are included by the cases that
# use them). Each case counts one per run.
suite_regress() {
    local log="$SCRATCH/regress.log" expected status counts passed failed
    expected=$(find "$PGSEM_ROOT/sql" -maxdepth 1 -name '*.sql' | wc -l)
    run_regress "$log"
    status=$?
    cat "$log"
    [ -f "$PGSEM_ROOT/regression.diffs" ] && cat "$PGSEM_ROOT/regression.diffs"
    read -r passed failed <<<"$(count_pg_regress "$log" "$expected" "$status")"

    local case name
    for case in "$PGSEM_ROOT"/sql/*.sql; do
        [ -e "$case" ] || continue
        name=$(basename "$case" .sql)
        run_regress "$SCRATCH/regress-$name.log" REGRESS="$name"
        status=$?
        read -r counts <<<"$(count_pg_regress "$SCRATCH/regress-$name.log" 1 "$status")"
        if [ "$counts" = "1 0" ]; then
            echo "ok: $name passes alone"
            passed=$((passed + 1))
        else
            echo "FAILED: $name fails when it runs alone:"
            cat "$SCRATCH/regress-$name.log"
            [ -f "$PGSEM_ROOT/regression.diffs" ] && cat "$PGSEM_ROOT/regression.diffs"
            failed=$((failed + 1))
        fi
    done
    record_suite regress "$passed" "$failed"
}

# run_regress LOG [MAKE VARIABLES...]
run_regress() {
    local log=$1
    shift
    make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck \
        ISOLATION= TAP_TESTS= "$@" >"$log" 2>&1
}
