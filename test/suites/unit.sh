# GoogleTest unit tests of the core (src/core), built by CMake and run by ctest.
#
# Pass and fail come from ctest's JUnit report, one <testcase> per test, never from its prose:
# status="run" passes, anything else (fail, notrun) fails. ctest exiting non-zero with no failing
# case counted is one failure more, and so is a report that is missing.
suite_unit() {
    cmake_build || { record_suite unit 0 1; return; }
    local junit="$SCRATCH/ctest.xml"
    rm -f "$junit"
    (cd "$CMAKE_BUILD" && ctest --output-on-failure --output-junit "$junit") \
        >"$SCRATCH/ctest.log" 2>&1
    local rc=$?
    grep -vE '^ +[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' "$SCRATCH/ctest.log"
    if [ ! -s "$junit" ]; then
        echo "FAILED: ctest wrote no JUnit report (exit status $rc)"
        record_suite unit 0 1
        return
    fi
    local passed failed
    passed=$(grep -oE '<testcase [^>]*status="run"' "$junit" | wc -l)
    failed=$(grep -oE '<testcase [^>]*status="[a-z]*"' "$junit" | grep -vc 'status="run"')
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        echo "FAILED: ctest exited with status $rc"
        failed=1
    fi
    record_suite unit "$passed" "$failed"
}

# Builds everything CMake knows (unit tests, the stress client) once per run, warnings as errors.
cmake_build() {
    CMAKE_BUILD="$SCRATCH/cmake"
    [ -f "$CMAKE_BUILD/.built" ] && return 0
    cmake -S "$PGSEM_ROOT" -B "$CMAKE_BUILD" -DPGSEM_WERROR=ON >"$SCRATCH/cmake.log" 2>&1 &&
        cmake --build "$CMAKE_BUILD" -j2 >>"$SCRATCH/cmake.log" 2>&1 &&
        touch "$CMAKE_BUILD/.built" && return 0
    cat "$SCRATCH/cmake.log"
    return 1
}
