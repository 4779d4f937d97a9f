# Test databases (sourced, not run).

# create_test_database DB [EXTENSION...]: drops DB if it exists and creates it anew on the
# cluster the PG* variables name, with the extensions given (pgsem when none is). Says what went
# wrong and returns non-zero on failure.
create_test_database() {
    local db=$1
    shift
    local extensions=("$@") ext
    [ ${#extensions[@]} -eq 0 ] && extensions=(pgsem)
    local commands=()
    for ext in "${extensions[@]}"; do commands+=(-c "CREATE EXTENSION $ext"); done
    if ! psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" \
            -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" ||
       ! psql -X -q -v ON_ERROR_STOP=1 -d "$db" "${commands[@]}"; then
        echo "FAILED: could not create database $db with ${extensions[*]}"
        return 1
    fi
}

# drop_test_database DB
drop_test_database() {
    psql -X -q -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
}
