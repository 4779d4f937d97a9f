# pg_regress: every sql/<name>.sql against expected/<name>.out. Sourced by test/run-all.sh with a
# running cluster; records its counts with record_suite.
suite_regress() {
    local out="$SCRATCH/regress"
    mkdir -p "$out"
    local tests
    tests=$(cd "$PGSEM_ROOT/sql" && ls *.sql | sed 's/\.sql$//' | sort)
    # shellcheck disable=SC2086
    "$PGXS_DIR/src/test/regress/pg_regress" --inputdir="$PGSEM_ROOT" --outputdir="$out" \
        --bindir="$PG_BINDIR" --host="$PGHOST" --port="$PGPORT" --user=postgres \
        --dbname=pgsem_regress --load-extension=pgsem $tests >"$out/summary.log" 2>&1
    cat "$out/summary.log"
    [ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
    record_suite regress "$(grep -cE '^(test|ok) .* \.\.\. ok' "$out/summary.log")" \
        "$(grep -cE '\.\.\. FAILED' "$out/summary.log")"
}
