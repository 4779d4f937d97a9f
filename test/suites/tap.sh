# TAP: test/tap/*.pl, run by `make installcheck` (PGXS runs prove with PostgreSQL::Test::Cluster
# from postgresql-server-dev-15). Each script makes its own clusters -- primary and standby,
# crash and restart, pgbouncer in front -- so this suite needs no running server. The scripts
# run initdb, which refuses root, so the suite runs them as the server's user in a copy of the
# tree that user can write. Each assertion counts one (see count_tap_harness).
suite_tap() {
    ensure_pg_user
    # pgbouncer is optional: 004_pgbouncer.pl skips itself without it.
    (install_packages pgbouncer) >/dev/null 2>&1 || echo "   (could not install pgbouncer: 004 skips)"

    local tree="$SCRATCH/tap-tree" log="$SCRATCH/tap.log" scripts status counts
    rm -rf "$tree"
    copy_tree "$tree" || { record_suite tap 0 1; return; }
    [ "$(id -u)" -eq 0 ] && chown -R "$PGSEM_OS_USER" "$tree"
    scripts=$(find "$tree/test/tap" -maxdepth 1 -name '*.pl' | wc -l)
    # The server's directories and the cluster modules come from pg_config; PG* variables of the
    # suite's own cluster must not leak into the scripts' clusters.
    as_pg_user env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
        "PATH=$PG_BINDIR:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin" \
        "PG_TEST_TIMEOUT_DEFAULT=${PG_TEST_TIMEOUT_DEFAULT:-60}" LANG=C.UTF-8 \
        timeout 1500 make -C "$tree" -s --no-print-directory PG_CONFIG="$PG_CONFIG" \
        installcheck REGRESS= ISOLATION= PROVE_FLAGS='--verbose --timer' >"$log" 2>&1
    status=$?
    # The "#" lines are mostly background psql chatter: shown only when something failed, since
    # the diagnostics are among them.
    if [ "$status" -eq 0 ]; then grep -v '^#' "$log"; else cat "$log"; fi
    counts=$(count_tap_harness "$log" "$scripts" "$status")
    if [ "$status" -ne 0 ]; then
        local f
        for f in "$tree"/tmp_check/log/regress_log_*; do
            [ -f "$f" ] || continue
            echo "---- last 40 lines of ${f##*/}"
            tail -n 40 "$f"
        done
    fi
    record_suite tap $counts
}
