# How the suites turn a runner's output into "passed" and "failed" (sourced, not run).
#
# The rule for every suite: a count comes from the runner's per-test verdicts, never from a
# pattern over its prose alone; a runner that exits non-zero with no failing test counted adds
# one failure; tests the runner was given but never reported on count as failures; a suite that
# ran no test at all counts as one failure (record_suite). test/suites/harness.sh plants a
# failure for each suite and checks that it is counted.

# settle_counts PASSED FAILED REPORTED EXPECTED STATUS WHO UNIT: "PASSED FAILED" once the two
# rules that no runner's verdicts cover are applied: each of the EXPECTED tests (or scripts, UNIT)
# that WHO never reported on is a failure, and a non-zero STATUS with no failure counted is one.
settle_counts() {
    local passed=$1 failed=$2 reported=$3 expected=$4 status=$5 who=$6 unit=$7
    if [ "$reported" -lt "$expected" ]; then
        echo "FAILED: $who reported on $reported of $expected $unit" >&2
        failed=$((failed + expected - reported))
    fi
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
        echo "FAILED: $who exited with status $status" >&2
        failed=1
    fi
    echo "$passed $failed"
}

# count_pg_regress LOG EXPECTED STATUS: "PASSED FAILED" for a pg_regress or
# pg_isolation_regress run of EXPECTED tests whose summary is in LOG and whose exit status was
# STATUS.
count_pg_regress() {
    local log=$1 expected=$2 status=$3 ok failed reported
    ok=$(grep -cE '^(test +| +)[^ ]+ +\.\.\. ok( |$)' "$log")
    failed=$(grep -cE '^(test +| +)[^ ]+ +\.\.\. (FAILED|failed)' "$log")
    reported=$((ok + failed))
    settle_counts "$ok" "$failed" "$reported" "$expected" "$status" "the runner" tests
}

# count_tap_harness LOG FILES STATUS: "PASSED FAILED" for a TAP::Harness run in verbose mode
# (prove -v, pg_prove --verbose) over FILES scripts, output in LOG, exit status STATUS.
# Assertions count one each: "ok" passes, "not ok" fails, and so does every planned assertion
# that never ran (a script that dies, or runs fewer than it planned). A script that ran more than
# it planned, or that the harness judged failed for any other reason, counts one failure more.
# Per-script lines go to stderr.
count_tap_harness() {
    local log=$1 files=$2 status=$3 counts passed failed reported
    counts=$(awk '
        function flush(   f, ran) {
            if (file == "") return
            ran = ok + nok
            f = nok
            if (plan < 0) f += 1                        # died before it planned anything
            else if (ran < plan) f += plan - ran        # planned assertions that never ran
            else if (ran > plan) f += 1                 # ran more than planned: a bad plan
            if (bad && f == 0) f = 1                    # the harness failed it for another reason
            printf "   %s: %d passed, %d failed\n", file, ok, f > "/dev/stderr"
            passed += ok; failed += f; files++
            file = ""
        }
        # The header of each script: "name.pl .. ", after "[hh:mm:ss] " with prove --timer.
        /^(\[[0-9:]+\] )?[^ #\[][^ ]*\.(sql|pl|t) \.+ *$/ {
            flush(); file = ($1 ~ /^\[/) ? $2 : $1; plan = -1; ok = 0; nok = 0; bad = 0; next
        }
        file != "" && /^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
        file != "" && /^ok [0-9]+/ { ok++; next }
        file != "" && /^not ok [0-9]+/ { nok++; next }
        file != "" && /^(Dubious|Failed [0-9]+\/[0-9]+ subtests|No subtests run|Bad plan|Parse errors)/ { bad = 1; next }
        /^(All tests successful|Test Summary Report|Files=[0-9])/ { flush() }
        END { flush(); printf "%d %d %d\n", passed, failed, files }
    ' "$log")
    read -r passed failed reported <<<"$counts"
    settle_counts "$passed" "$failed" "$reported" "$files" "$status" "the harness" scripts
}

# count_summary_line WHO LOG STATUS: "PASSED FAILED" from the last "WHO: N passed, N failed" line
# of LOG, which a runner of its own (the soak, the failover test) prints from its per-check
# verdicts; no such line is one failure, and so is a non-zero STATUS with no failure counted.
count_summary_line() {
    local who=$1 log=$2 status=$3 line
    line=$(grep -E "^$who: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAILED: $who ended without its summary line (exit status $status)" >&2
        echo "0 1"
        return
    fi
    # shellcheck disable=SC2046
    settle_counts $(sed -E "s/^$who: ([0-9]+) passed, ([0-9]+) failed$/\\1 \\2/" <<<"$line") \
        0 0 "$status" "$who" checks
}
