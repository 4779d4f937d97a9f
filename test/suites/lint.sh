# Lint: clang-format and clang-tidy (configs in .clang-format and .clang-tidy) over all C++.
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
    if (cd "$PGSEM_ROOT" && clang-tidy --quiet "${sources[@]}" -- -std=c++17 -Isrc \
            -isystem "$("$PG_CONFIG" --includedir-server)" -D_GNU_SOURCE 2>&1 |
            grep -vE 'warnings generated|Suppressed [0-9]+ warnings|Use -header-filter' |
            tee /dev/stderr | grep -qE 'warning:|error:'); then
        echo "FAILED: clang-tidy"; failed=$((failed + 1))
    else
        echo "ok: clang-tidy"; passed=$((passed + 1))
    fi
    record_suite lint "$passed" "$failed"
}
