# Verdicts of the failover test (sourced, not run): each check prints "ok: ..." or "FAILED: ..."
# and counts one in AFO_PASSED or AFO_FAILED; run.sh prints the sum last.

AFO_PASSED=0
AFO_FAILED=0

pass() {
    echo "ok: $*"
    AFO_PASSED=$((AFO_PASSED + 1))
}

fail() {
    echo "FAILED: $*"
    AFO_FAILED=$((AFO_FAILED + 1))
}

# check DESCRIPTION COMMAND...: passes when the command succeeds; returns its verdict.
check() {
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; return 1; fi
}

# check_eq DESCRIPTION ACTUAL EXPECTED
check_eq() {
    if [ "$2" = "$3" ]; then
        pass "$1"
    else
        fail "$1 (got '$2', expected '$3')"
        return 1
    fi
}

# afo_is_number WORD...: every word is a decimal number (an id, not an error message).
afo_is_number() {
    local w
    for w in "$@"; do [[ $w =~ ^[0-9]+$ ]] || return 1; done
}

# afo_id_above NEW OLD: both are ids and NEW > OLD.
afo_id_above() {
    afo_is_number "$1" "$2" && [ "$1" -gt "$2" ]
}

# durations, shown at the end of the run (never part of a verdict)
AFO_DURATIONS=()
note_duration() { AFO_DURATIONS+=("$1: ${2}s"); }
