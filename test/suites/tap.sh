# TAP: test/tap/*.pl with prove and PostgreSQL::Test::Cluster (the Perl modules of
# postgresql-server-dev-15). Each script makes its own clusters -- primary and standby, crash and
# restart, pgbouncer in front -- so this suite needs no running server. Sourced by
# test/run-all.sh; records its counts with record_suite, one per assertion: "ok" lines pass,
# "not ok" lines fail, and a script that dies or breaks its plan counts one failure more.
suite_tap() {
    ensure_pg_user
    # pgbouncer is optional: 004_pgbouncer.pl skips itself without it.
    (install_packages pgbouncer) >/dev/null 2>&1 || echo "   (could not install pgbouncer: 004 skips)"

    local dir="$SCRATCH/tap"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$PGSEM_ROOT"/test/tap/*.pl "$dir"/ 2>/dev/null
    [ "$(id -u)" -eq 0 ] && chown -R "$PGSEM_OS_USER" "$dir"

    local pgxs_dir=${PGXS_DIR:-$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")}
    local bindir
    bindir=$("$PG_CONFIG" --bindir)
    # Utils.pm writes tmp_check (logs, data directories, port locks) under $TESTDIR; Cluster.pm
    # runs initdb, pg_ctl, psql and pg_config from PATH and pg_regress from $PG_REGRESS.
    local env=(env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE
               "PATH=$bindir:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
               "PERL5LIB=$pgxs_dir/src/test/perl${PERL5LIB:+:$PERL5LIB}"
               "TESTDIR=$dir" "PG_REGRESS=$pgxs_dir/src/test/regress/pg_regress"
               "PG_TEST_TIMEOUT_DEFAULT=${PG_TEST_TIMEOUT_DEFAULT:-60}" "LANG=C.UTF-8")

    local passed=0 failed=0 script name log rc ok notok
    for script in "$dir"/*.pl; do
        [ -e "$script" ] || break
        name=$(basename "$script" .pl)
        log="$dir/$name.prove.log"
        # Ten minutes at most per script: a hang must not hang the whole run.
        (cd "$dir" && as_pg_user "${env[@]}" timeout 600 prove -v --timer "$name.pl") >"$log" 2>&1
        rc=$?
        # The "#" lines are mostly background psql chatter: shown only when the script failed,
        # since its diagnostics are among them.
        if [ "$rc" -eq 0 ]; then grep -v '^#' "$log"; else cat "$log"; fi
        ok=$(grep -cE '^ok [0-9]+' "$log")
        notok=$(grep -cE '^not ok [0-9]+' "$log")
        passed=$((passed + ok))
        failed=$((failed + notok))
        if [ "$rc" -ne 0 ]; then
            if [ "$notok" -eq 0 ]; then
                echo "   $name.pl failed without a failing assertion (died, timed out or broke" \
                     "its plan): counted as one failure"
                failed=$((failed + 1))
            fi
            if [ -f "$dir/tmp_check/log/regress_log_$name" ]; then
                echo "---- last 60 lines of tmp_check/log/regress_log_$name"
                tail -n 60 "$dir/tmp_check/log/regress_log_$name"
            fi
        fi
    done
    record_suite tap "$passed" "$failed"
}
