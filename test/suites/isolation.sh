# isolationtester: races and waits, test/isolation/specs/*.spec against test/isolation/expected.
suite_isolation() {
    local out="$SCRATCH/isolation"
    mkdir -p "$out"
    local specs
    specs=$(cd "$PGSEM_ROOT/test/isolation/specs" && ls *.spec | sed 's/\.spec$//' | sort)
    # shellcheck disable=SC2086
    PGISOLATIONTIMEOUT=120 "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
        --inputdir="$PGSEM_ROOT/test/isolation" --outputdir="$out" --bindir="$PG_BINDIR" \
        --host="$PGHOST" --port="$PGPORT" --user=postgres --dbname=pgsem_isolation \
        --load-extension=pgsem $specs >"$out/summary.log" 2>&1
    cat "$out/summary.log"
    [ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
    record_suite isolation "$(grep -cE '^(test|ok) .* \.\.\. ok' "$out/summary.log")" \
        "$(grep -cE '\.\.\. FAILED' "$out/summary.log")"
}
