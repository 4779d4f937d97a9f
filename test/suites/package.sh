# The Debian package: built from a copy of the tree with dpkg-buildpackage (debian/, pg_buildext),
# installed with apt, and tested as installed: its files where pg_config says, CREATE EXTENSION
# loading the package's library (not the tree's: the tree's own install is removed first), the
# regress cases and an update from 1.0 against the running cluster, the autopkgtest
# (debian/tests/installcheck); then removed, which must take its files with it. Last, the tree's
# own `make install` is put back for the suites that follow. Each check counts one, and each
# regress case one; checks that never ran (after a failed build, say) count as failed.
suite_package() {
    local passed=0 failed=0 pkg=postgresql-15-pgsem
    local work="$SCRATCH/package" cases planned
    local tree="$work/pgsem" pkglibdir sharedir version debversion deb
    cases=$(find "$PGSEM_ROOT/sql" -maxdepth 1 -name '*.sql' | wc -l)
    planned=$((9 + cases))
    pkglibdir=$("$PG_CONFIG" --pkglibdir)
    sharedir=$("$PG_CONFIG" --sharedir)
    version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$PGSEM_ROOT/pgsem.control")

    rm -rf "$work"
    mkdir -p "$work"
    chmod 755 "$work"
    # A package left installed by an interrupted run would be tested instead of this build.
    package_installed && package_remove >/dev/null 2>&1

    if install_packages dpkg-dev >/dev/null && copy_tree "$tree" && package_build_deps; then
        package_ok "the build dependencies debian/control names are installed"
        debversion=$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Version)
        deb="$work/${pkg}_${debversion}_$(dpkg --print-architecture).deb"
        package_build && package_install && package_test_installed
        package_installed && package_remove_and_check
    else
        package_failed "could not install the build dependencies of debian/control"
    fi
    package_restore_tree_install

    local ran=$((passed + failed))
    if [ "$ran" -lt "$planned" ]; then
        echo "FAILED: $((planned - ran)) of $planned checks never ran"
        failed=$((failed + planned - ran))
    fi
    record_suite package "$passed" "$failed"
}

package_ok() { echo "ok: $*"; passed=$((passed + 1)); }
package_failed() { echo "FAILED: $*"; failed=$((failed + 1)); }

# apt and dpkg wait for a lock another apt holds, rather than fail at once.
package_apt() {
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -q "$@"
}

package_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ]
}

package_remove() { package_apt remove "$pkg"; }

# psql on the running cluster: package_psql DB SQL...
package_psql() {
    local db=$1
    shift
    local args=() sql
    for sql in "$@"; do args+=(-c "$sql"); done
    psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" "${args[@]}"
}

# The build dependencies debian/control names, installed (apt-get build-dep) when some are not.
package_build_deps() {
    (cd "$tree" && dpkg-checkbuilddeps) >/dev/null 2>&1 && return 0
    say "installing the build dependencies of debian/control"
    if ! as_root apt-get update -q >"$work/build-dep.log" 2>&1 ||
       ! (cd "$tree" && package_apt --no-install-recommends build-dep ./) >>"$work/build-dep.log" 2>&1
    then
        cat "$work/build-dep.log"
        return 1
    fi
    (cd "$tree" && dpkg-checkbuilddeps)
}

package_build() {
    # As root the build runs as root: debian/control says Rules-Requires-Root: no, and the
    # build-time regress run (pg_virtualenv) makes its cluster as an unprivileged user itself,
    # on a port of its own (PGPORT, the suite's cluster's, would be taken).
    if (cd "$tree" && env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
            dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 && [ -f "$deb" ]; then
        package_ok "dpkg-buildpackage made $(basename "$deb"), its build-time regress run passing:" \
            "$(grep -m 1 -o -E 'All [0-9]+ tests passed' "$work/build.log")"
    else
        package_failed "dpkg-buildpackage made no $(basename "$deb"); the end of its log:"
        tail -n 60 "$work/build.log"
        return 1
    fi
}

package_install() {
    # The tree's own install goes first, so that only the package's files can be found.
    as_root make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" uninstall \
        >/dev/null 2>&1
    if package_apt --no-install-recommends install "$deb" >"$work/install.log" 2>&1 &&
       package_installed &&
       [ "$(dpkg-query -W -f='${Version}' "$pkg")" = "$debversion" ]; then
        package_ok "apt installed $pkg $debversion"
    else
        package_failed "apt did not install $deb:"
        cat "$work/install.log"
        return 1
    fi
}

# The files the package must hold, where pg_config says: the library, the control file, and
# every install and update script of the tree.
package_files() {
    echo "$pkglibdir/pgsem.so"
    echo "$sharedir/extension/pgsem.control"
    find "$tree" -maxdepth 1 -name 'pgsem--*.sql' -printf "$sharedir/extension/%f\n" | sort
}

package_test_installed() {
    local f missing=() owner
    while read -r f; do
        owner=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)
        [ -f "$f" ] && [ "$owner" = "$pkg" ] || missing+=("$f")
    done < <(package_files)
    local changed
    changed=$(as_root dpkg --verify "$pkg" 2>&1)
    if [ ${#missing[@]} -eq 0 ] && [ -z "$changed" ]; then
        package_ok "$pkg installed $(package_files | wc -l) files where pg_config says" \
            "($pkglibdir, $sharedir/extension), unchanged (dpkg --verify)"
    else
        package_failed "$pkg: not installed by it: ${missing[*]:-none}; dpkg --verify: ${changed:-clean}"
    fi

    # The server loads the package's library: the one this backend mapped.
    local db=pgsem_package out loaded
    out=$(create_test_database "$db" 2>&1 &&
          package_psql "$db" "SELECT fnv1a_64('223 345')" \
              "SELECT extversion FROM pg_extension WHERE extname = 'pgsem'" \
              "SELECT string_agg(DISTINCT m[1], ' ') FROM regexp_matches(
                   pg_read_file('/proc/self/maps'), '\s(/\S*pgsem\.so)$', 'gn') AS m" 2>&1)
    loaded=$(sed -n 3p <<<"$out")
    owner=$(dpkg -S "$loaded" 2>/dev/null | cut -d: -f1)
    if [ "$(sed -n 2p <<<"$out")" = "$version" ] && [ "$loaded" = "$pkglibdir/pgsem.so" ] &&
       [ "$owner" = "$pkg" ]; then
        package_ok "CREATE EXTENSION pgsem made version $version, and the server loaded $loaded," \
            "which $pkg owns"
    else
        package_failed "CREATE EXTENSION pgsem with the package: expected version $version and" \
            "$pkglibdir/pgsem.so owned by $pkg; got:" "$out" "(owner: ${owner:-none})"
    fi
    drop_test_database "$db"

    # The regress cases, from the copy of the tree, against the installed package.
    local log="$work/regress.log" status counts
    echo "the regress cases against the package:"
    make -C "$tree" -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck \
        ISOLATION= TAP_TESTS= >"$log" 2>&1
    status=$?
    cat "$log"
    [ -f "$tree/regression.diffs" ] && cat "$tree/regression.diffs"
    read -r counts <<<"$(count_pg_regress "$log" "$cases" "$status")"
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))

    # An update from 1.0 with the package's scripts.
    out=$(create_test_database "$db" 2>&1 &&
          package_psql "$db" "DROP EXTENSION pgsem" "CREATE EXTENSION pgsem VERSION '1.0'" \
              "ALTER EXTENSION pgsem UPDATE" \
              "SELECT extversion FROM pg_extension WHERE extname = 'pgsem'" \
              "BEGIN" "SELECT sem_claim_xact('package-update', 1)" "COMMIT" 2>&1)
    if [ "$out" = "$version"$'\n'"0" ]; then
        package_ok "CREATE EXTENSION pgsem VERSION '1.0' and ALTER EXTENSION pgsem UPDATE made" \
            "version $version, whose sem_claim_xact works"
    else
        package_failed "the update from 1.0 with the package: expected $version and 0, got:" "$out"
    fi
    drop_test_database "$db"

    # The autopkgtest, as autopkgtest runs it: from the source tree, against the installed
    # package, in a cluster of its own (not the suite's: the PG* variables are dropped).
    log="$work/autopkgtest.log"
    (cd "$tree" && env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE debian/tests/installcheck) \
        >"$log" 2>&1
    status=$?
    read -r counts <<<"$(count_pg_regress "$log" "$cases" "$status" 2>&1 | tail -n 1)"
    if [ "$counts" = "$cases 0" ]; then
        package_ok "debian/tests/installcheck (the autopkgtest) passed its $cases regress cases"
    else
        package_failed "debian/tests/installcheck (the autopkgtest) failed (counted $counts):"
        tail -n 60 "$log"
    fi
}

package_remove_and_check() {
    local left=() f out
    if ! package_remove >"$work/remove.log" 2>&1 || package_installed; then
        package_failed "apt did not remove $pkg:"
        cat "$work/remove.log"
        return 1
    fi
    while read -r f; do
        [ -e "$f" ] && left+=("$f")
    done < <(package_files)
    out=$(package_psql postgres "SET client_min_messages = warning" \
              "DROP DATABASE IF EXISTS pgsem_package_gone" "CREATE DATABASE pgsem_package_gone" 2>&1 &&
          package_psql pgsem_package_gone "CREATE EXTENSION pgsem" 2>&1)
    drop_test_database pgsem_package_gone
    if [ ${#left[@]} -eq 0 ] && grep -q 'is not available\|could not open extension control' <<<"$out"; then
        package_ok "apt removed $pkg with its files, and CREATE EXTENSION pgsem fails without them"
    else
        package_failed "after removing $pkg: left behind: ${left[*]:-none}; CREATE EXTENSION said:" \
            "${out:-nothing (it worked)}"
    fi
}

# The tree's own build, installed again, as test/run-all.sh installed it before the suites.
package_restore_tree_install() {
    local out owner
    package_installed && package_remove >/dev/null 2>&1
    if make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" WERROR=-Werror \
            >"$work/restore.log" 2>&1 &&
       as_root make -C "$PGSEM_ROOT" -s --no-print-directory PG_CONFIG="$PG_CONFIG" install \
            >>"$work/restore.log" 2>&1; then
        owner=$(dpkg -S "$pkglibdir/pgsem.so" 2>/dev/null)
        out=$(create_test_database pgsem_package 2>&1 &&
              package_psql pgsem_package "SELECT extversion FROM pg_extension WHERE extname = 'pgsem'")
        drop_test_database pgsem_package
        if [ -z "$owner" ] && [ "$out" = "$version" ]; then
            package_ok "the tree's own make install is back (no package owns $pkglibdir/pgsem.so)"
            return 0
        fi
        package_failed "the tree's own install is not back: owner '${owner}', CREATE EXTENSION: $out"
    else
        package_failed "could not install the tree's own build again:"
        cat "$work/restore.log"
    fi
}
