# Version in one place: pgsem's version is written in several files, and each must say what the
# control file's default_version says: META.json (as the SemVer PGXN requires: 1.1 is 1.1.0),
# debian/changelog's top entry, the newest install or update script, CHANGELOG.md's top entry and
# the README's install section. Also META.json against the PGXN Meta Spec 1.0.0
# (test/packaging/check_meta.py), and the zip `make dist` makes for PGXN. Each check counts one.
# Needs no server; `make dist` needs a git checkout (it zips HEAD).
suite_versions() {
    local passed=0 failed=0 root=$PGSEM_ROOT
    local version semver meta debian newest readme_section

    version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$root/pgsem.control")
    if [ -z "$version" ]; then
        echo "FAILED: pgsem.control names no default_version"
        record_suite versions 0 1
        return
    fi
    echo "ok: pgsem.control's default_version is $version"
    passed=$((passed + 1))
    semver=$(versions_semver "$version")

    if (cd "$root" && python3 test/packaging/check_meta.py META.json .); then
        echo "ok: META.json follows the PGXN Meta Spec 1.0.0"
        passed=$((passed + 1))
    else
        echo "FAILED: META.json does not follow the PGXN Meta Spec 1.0.0 (problems above)"
        failed=$((failed + 1))
    fi
    meta=$(versions_meta_field "$root/META.json" version)
    versions_same "META.json's version" "$meta" "$semver"
    versions_same "META.json's provides.pgsem.version" \
        "$(versions_meta_field "$root/META.json" provides pgsem version)" "$semver"

    # "pgsem (1.1-1) UNRELEASED; urgency=medium": the upstream part is 1.1.
    debian=$(sed -n '1s/^pgsem (\([^)]*\)).*/\1/p' "$root/debian/changelog")
    local upstream=${debian#*:}
    versions_same "debian/changelog's top entry (upstream part of $debian)" "${upstream%-*}" \
        "$version"

    # pgsem--X.sql installs X, pgsem--A--X.sql updates to X: the newest X.
    newest=$(find "$root" -maxdepth 1 -name 'pgsem--*.sql' -printf '%f\n' |
             sed -e 's/\.sql$//' -e 's/.*--//' | sort -V | tail -n 1)
    versions_same "the newest install or update script's version" "$newest" "$version"

    versions_same "CHANGELOG.md's top entry" \
        "$(sed -n 's/^## \([^ ]*\).*/\1/p' "$root/CHANGELOG.md" | head -n 1)" "$version"

    # The README's install section: "version X" after CREATE EXTENSION, the .deb and the zip.
    readme_section=$(sed -n '/^## Install into an existing server/,/^## /p' "$root/README.md")
    versions_same "the version the README's install section creates" \
        "$(grep -o -m 1 'CREATE EXTENSION pgsem; *-- version [^ ;]*' <<<"$readme_section" |
           sed 's/.*version //')" "$version"
    versions_same "the .deb the README's install section installs" \
        "$(grep -o -m 1 'postgresql-15-pgsem_[^_]*_' <<<"$readme_section" |
           sed -e 's/^postgresql-15-pgsem_//' -e 's/_$//')" "$debian"
    versions_same "the zip the README's install section names" \
        "$(grep -o -m 1 'pgsem-[0-9][^ ]*\.zip' <<<"$readme_section" |
           sed -e 's/^pgsem-//' -e 's/\.zip$//')" "$semver"

    versions_dist "$semver"
    record_suite versions "$passed" "$failed"
}

# versions_semver VERSION: the control file's version as PGXN's SemVer (1.1 -> 1.1.0).
versions_semver() {
    local v=$1
    while [ "$(tr -cd . <<<"$v" | wc -c)" -lt 2 ]; do v=$v.0; done
    echo "$v"
}

# versions_meta_field FILE KEY...: the string at that path in the JSON file, empty if none.
versions_meta_field() {
    python3 - "$@" <<'PY' 2>/dev/null
import json, sys
value = json.load(open(sys.argv[1], encoding='utf-8'))
for key in sys.argv[2:]:
    value = value.get(key) if isinstance(value, dict) else None
print(value if isinstance(value, str) else '')
PY
}

# versions_same WHAT FOUND WANTED: one check; adds to the caller's passed or failed.
versions_same() {
    if [ -n "$2" ] && [ "$2" = "$3" ]; then
        echo "ok: $1 is $3"
        passed=$((passed + 1))
    else
        echo "FAILED: $1 is '$2', not $3"
        failed=$((failed + 1))
    fi
}

# versions_dist SEMVER: `make dist` makes pgsem-SEMVER.zip with every file under pgsem-SEMVER/
# (one check), and it holds the control file, the SQL scripts, the Makefile, META.json and every
# source file of HEAD (another).
versions_dist() {
    local semver=$1 dir="$SCRATCH/dist" top="pgsem-$1"
    local zip="$dir/$top.zip"
    rm -rf "$dir"
    mkdir -p "$dir"
    if ! make -s --no-print-directory -f "$PGSEM_ROOT/Makefile" -C "$dir" PG_CONFIG="$PG_CONFIG" \
            dist >"$dir/log" 2>&1 || [ ! -f "$zip" ]; then
        echo "FAILED: make dist made no $top.zip:"
        cat "$dir/log"
        ls "$dir"
        failed=$((failed + 2))
        return
    fi
    python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' \
        "$zip" >"$dir/entries" || { echo "FAILED: $zip is no zip"; failed=$((failed + 2)); return; }
    local outside
    outside=$(grep -v "^$top/" "$dir/entries")
    if [ -z "$outside" ]; then
        echo "ok: make dist made $top.zip, every file under $top/"
        passed=$((passed + 1))
    else
        echo "FAILED: $top.zip holds files outside $top/:"
        head -n 10 <<<"$outside"
        failed=$((failed + 1))
    fi
    local wanted missing
    wanted=$(git -C "$PGSEM_ROOT" ls-tree -r --name-only HEAD |
             grep -E '^(pgsem\.control|pgsem--.*\.sql|Makefile|META\.json|src/.*\.(cpp|hpp))$')
    missing=$(comm -23 <(sort <<<"$wanted") <(sed -n "s|^$top/||p" "$dir/entries" | sort))
    if [ -n "$wanted" ] && [ -z "$missing" ] &&
       grep -qx "$top/pgsem.control" "$dir/entries" && grep -qx "$top/META.json" "$dir/entries"; then
        echo "ok: $top.zip holds pgsem.control, META.json, the Makefile, $(grep -c '\.sql$' <<<"$wanted") SQL scripts and $(grep -c '^src/' <<<"$wanted") source files"
        passed=$((passed + 1))
    else
        echo "FAILED: $top.zip lacks some of pgsem.control, META.json and HEAD's files:" \
             "$(tr '\n' ' ' <<<"$missing")"
        failed=$((failed + 1))
    fi
}
