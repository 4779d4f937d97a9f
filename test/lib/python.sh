# The Python the suites' clients run with (sourced, not run).

# psycopg2_python: prints the first python3 that has psycopg2 (Debian's python3-psycopg2 is for
# /usr/bin/python3; a pyenv python3 first on PATH may lack it); fails when none has.
psycopg2_python() {
    local candidate
    for candidate in /usr/bin/python3 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import psycopg2' 2>/dev/null
        then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
