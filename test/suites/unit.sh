# GoogleTest unit tests of the core (src/core), built by CMake and run by ctest.
suite_unit() {
    cmake_build || { record_suite unit 0 1; return; }
    (cd "$CMAKE_BUILD" && ctest --output-on-failure) | tee "$SCRATCH/ctest.log"
    record_suite unit "$(grep -cE 'Test +#[0-9]+: .* Passed' "$SCRATCH/ctest.log")" \
        "$(grep -cE 'Test +#[0-9]+: .* (\*\*\*Failed|Not Run|\*\*\*Exception|\*\*\*Timeout)' "$SCRATCH/ctest.log")"
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
