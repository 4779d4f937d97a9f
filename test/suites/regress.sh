# pg_regress: every sql/<name>.sql against expected/<name>.out, run by `make installcheck` (the
# PGXS target; the Makefile lists the cases) against the running cluster, in database
# contrib_regression: first all in name order, then each alone in a fresh database, since every
# case must run on its own (helpers such as sql/helpers/try.sql are included by the cases that
# use them). Each case counts one per run; so does the run of all of them against a second,
# freshly initialised server with default settings.
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
    # A DBA checks an installation with `make installcheck` against the server they run, most
    # likely configured with the defaults (prepared transactions disabled, for one): every case
    # passes there too (81_prepared_transactions has an expected output for that server).
    if regress_on_default_cluster "$SCRATCH/regress-default.log"; then
        echo "ok: every case passes against a freshly initialised server with default settings"
        passed=$((passed + 1))
    else
        cat "$SCRATCH/regress-default.log"
        [ -f "$PGSEM_ROOT/regression.diffs" ] && cat "$PGSEM_ROOT/regression.diffs"
        echo "FAILED: the cases against a freshly initialised server with default settings"
        failed=$((failed + 1))
    fi
    record_suite regress "$passed" "$failed"
}

# regress_on_default_cluster LOG: initdb with defaults, start it on loopback, make installcheck.
regress_on_default_cluster() {
    local log=$1 dir port status
    dir=$(mktemp -d /tmp/pgsem-default.XXXXXX)
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown "$PGSEM_OS_USER" "$dir"
    port=$(free_port) || return 1
    as_pg_user "$PG_BINDIR/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync >"$log" 2>&1 &&
        as_pg_user "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
            "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir" \
            start >>"$log" 2>&1 &&
        PGHOST=127.0.0.1 PGPORT=$port run_regress "$log.run"
    status=$?
    cat "$log.run" >>"$log" 2>/dev/null
    as_pg_user "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$dir"
    return "$status"
}

# run_regress LOG [MAKE VARIABLES...]
run_regress() {
    local log=$1
    shift
    make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck \
        ISOLATION= TAP_TESTS= "$@" >"$log" 2>&1
}
