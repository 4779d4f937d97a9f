# Lint: clang-format and clang-tidy (configs in .clang-format and .clang-tidy) over all C++, every
# operator and function in the install and update scripts schema-qualified, and the README's
# tested code blocks still pinned by their tests.
suite_lint() {
    local passed=0 failed=0 files
    mapfile -t files < <(cd "$PGSEM_ROOT" && git ls-files '*.cpp' '*.hpp' 2>/dev/null ||
                         find src test bench -name '*.[ch]pp')
    if (cd "$PGSEM_ROOT" && clang-format --dry-run --Werror "${files[@]}"); then
        echo "ok: clang-format"; passed=$((passed + 1))
    else
        echo "FAILED: clang-format (run: clang-format -i on the files above)"; failed=$((failed + 1))
    fi
    local sources=()
    local f
    for f in "${files[@]}"; do
        case "$f" in src/*.cpp) sources+=("$f") ;; esac
    done
    # The output is kept and searched afterwards: `grep -q` at the end of a pipe stops reading at
    # the first match, and under pipefail the writer's SIGPIPE would then read as success.
    local tidy
    tidy=$(cd "$PGSEM_ROOT" && clang-tidy --quiet "${sources[@]}" -- -std=c++17 -Isrc \
            -isystem "$("$PG_CONFIG" --includedir-server)" -D_GNU_SOURCE 2>&1 |
            grep -vE 'warnings generated|Suppressed [0-9]+ warnings|Use -header-filter' || true)
    if grep -qE 'warning:|error:' <<<"$tidy"; then
        echo "$tidy"
        echo "FAILED: clang-tidy"; failed=$((failed + 1))
    else
        echo "ok: clang-tidy"; passed=$((passed + 1))
    fi
    # The install and update scripts run as a superuser with the extension's schema on the
    # search_path: an unqualified operator or function there could run a planted one
    # (test/lib/sql_qualified.py, which checks its own examples first). One check.
    if (cd "$PGSEM_ROOT" && python3 test/lib/sql_qualified.py); then
        echo "ok: every operator and function in pgsem--*.sql is schema-qualified"
        passed=$((passed + 1))
    else
        echo "FAILED: pgsem--*.sql: unqualified operators or functions (above)"
        failed=$((failed + 1))
    fi
    # The README's tested code blocks are pinned by their tests (test/lib/readme_blocks.py), and
    # src/ is built in floors whose includes only go down, with no include cycle, and names no
    # path that does not exist (test/lib/src_floors.py, whose self-test plants one of each).
    local out line p f script
    for script in readme_blocks src_floors; do
        out=$(cd "$PGSEM_ROOT" && python3 "test/lib/$script.py" 2>&1)
        grep -v '^ok: ' <<<"$out"
        line=$(grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed$' <<<"$out" | tail -n 1)
        if [ -n "$line" ]; then
            read -r p f <<<"$(sed -E 's/^[^:]*: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' <<<"$line")"
            passed=$((passed + p))
            failed=$((failed + f))
        else
            echo "FAILED: test/lib/$script.py ended without its count"
            failed=$((failed + 1))
        fi
    done
    if (cd "$PGSEM_ROOT" && python3 test/lib/src_floors.py --self-test); then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
    record_suite lint "$passed" "$failed"
}
