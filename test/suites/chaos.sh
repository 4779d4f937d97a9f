# Chaos: the checkers' self-test (test/chaos/chaos.py --self-test plants every kind of violation
# in made-up records), then two runs of test/chaos/run.sh, each on a cluster of its own (the
# injector restarts it): a fenced run of CHAOS_SUITE_SECONDS (40) that must find no anomaly, and
# an unfenced one of CHAOS_SUITE_UNFENCED_SECONDS (25), whose writers skip sem_fence and the
# token condition, that must find some (lost updates, stale writes).
# Counts: the self-test; for the fenced run each check it reports, that it ran every kind of
# fault and of operation, and that the server log shows no crash it did not cause; the
# unfenced run's anomalies. A check that is never reported counts as failed.
suite_chaos() {
    local out="$SCRATCH/chaos" passed=0 failed=0
    mkdir -p "$out"
    local python=/usr/bin/python3 runner="$PGSEM_ROOT/test/chaos/run.sh"

    if "$python" "$PGSEM_ROOT/test/chaos/chaos.py" --self-test >"$out/self-test.log" 2>&1 &&
            grep -qE '^chaos-self-test: [0-9]+ passed, 0 failed$' "$out/self-test.log"; then
        echo "ok: the checkers find every planted violation (--self-test)"
        passed=$((passed + 1))
    else
        grep -v '^ok: ' "$out/self-test.log"
        echo "FAILED: the checkers' self-test"
        failed=$((failed + 1))
    fi

    CHAOS_SECONDS=${CHAOS_SUITE_SECONDS:-40} CHAOS_RECORD_DIR="$out/fenced" \
        bash "$runner" >"$out/fenced.log" 2>&1
    local rc=$?
    cat "$out/fenced.log"
    local checks=(holders-client holders-server releases writes claims-kept ids-after-restart
                  rates) check line
    for check in "${checks[@]}"; do
        line=$(grep -E "^check $check: " "$out/fenced.log" | tail -n 1)
        if grep -qE "^check $check: ok " <<<"$line"; then
            echo "ok: fenced run: $check"
            passed=$((passed + 1))
        else
            echo "FAILED: fenced run: $check: ${line:-never reported}"
            failed=$((failed + 1))
        fi
    done
    # Every kind the workload and the injector know (the summary counts them), each of which ran.
    local wanted
    for wanted in "fault kinds run: ([0-9]+) of \\2" "operation kinds run: ([0-9]+) of \\2" \
                  "the server log shows no crash but the injected ones"; do
        if grep -qxE "(chaos: )?$wanted" "$out/fenced.log"; then
            echo "ok: fenced run: $wanted"
            passed=$((passed + 1))
        else
            echo "FAILED: fenced run: not '$wanted'"
            failed=$((failed + 1))
        fi
    done
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        echo "FAILED: the fenced run exited with status $rc"
        failed=$((failed + 1))
    fi

    CHAOS_SECONDS=${CHAOS_SUITE_UNFENCED_SECONDS:-25} CHAOS_RECORD_DIR="$out/unfenced" \
        bash "$runner" --unfenced >"$out/unfenced.log" 2>&1
    rc=$?
    local anomalies
    anomalies=$(sed -nE 's/^chaos: [0-9]+ operations, [0-9]+ faults, ([0-9]+) anomalies$/\1/p' \
                "$out/unfenced.log" | tail -n 1)
    grep -E '^(check writes|anomalies by kind|chaos: [0-9]+ operations)' "$out/unfenced.log"
    if [ "$rc" -eq 1 ] && [ "${anomalies:-0}" -gt 0 ]; then
        echo "ok: the unfenced run finds what fencing prevents ($anomalies anomalies)"
        passed=$((passed + 1))
    else
        tail -n 20 "$out/unfenced.log"
        echo "FAILED: the unfenced run found no anomaly (exit status $rc)"
        failed=$((failed + 1))
    fi
    record_suite chaos "$passed" "$failed"
}
