# The harness's self-test: a suite that miscounts lets a bug land, so each suite is run once
# more on a scratch copy of the tree with a failure planted in it (or with its runner made to
# fail), and must count that failure. Each case counts one: it passes when the suite, run on the
# planted copy with its own scratch directory and results file, reported at least the failures
# planted. Runs last; needs the running cluster and the unit suite's CMake build.
suite_harness() {
    local passed=0 failed=0
    harness_case lint 1 plant_misformatted_source
    harness_case versions 1 plant_wrong_meta_version
    harness_case unit 1 plant_failing_gtest
    harness_case regress 1 plant_wrong_regress_output
    harness_case regress 1 keep_one_regress_case PGPORT=1  # no server there: pg_regress fails
    harness_case isolation 1 plant_wrong_isolation_output
    harness_case pgtap 2 plant_failing_pgtap_file
    harness_case tap 2 plant_failing_tap_script
    harness_case stress 1 plant_nothing "STRESS_ARGS=--clients 2 --cycles 3"  # too few to contend
    harness_case stress 1 plant_nothing "STRESS_ARGS=--no-such-option"        # the runner refuses
    harness_case soak 1 plant_kept_session_claim SOAK_SECONDS=20 SOAK_CLIENTS=20
    # Runs long enough to pass unplanted (every fault kind in 30 s), so the failure is the plant's.
    harness_case chaos 1 plant_blind_lost_update_check CHAOS_SUITE_SECONDS=30 \
        CHAOS_SUITE_UNFENCED_SECONDS=15
    harness_case client 2 plant_wrong_client_hash
    record_suite harness "$passed" "$failed"
}

# harness_case SUITE MIN_FAILED PLANT [NAME=VALUE...]: copies the tree, runs PLANT inside the
# copy, then suite_SUITE on it with the variables given; adds one to the caller's passed or failed.
harness_case() {
    local suite=$1 min=$2 plant=$3
    shift 3
    local dir
    dir=$(mktemp -d "$SCRATCH/harness-$suite.XXXXXX")
    chmod 755 "$dir"
    mkdir -p "$dir/scratch"
    local what="$suite, $plant${1:+ ($*)}"
    if ! copy_tree "$dir/tree" || ! (cd "$dir/tree" && "$plant"); then
        echo "FAILED: $what: could not plant the failure"
        failed=$((failed + 1))
        return
    fi
    # The unit suite's build serves the stress cases, whose code is not planted.
    [ "$suite" = stress ] && [ -n "${CMAKE_BUILD:-}" ] && ln -s "$CMAKE_BUILD" "$dir/scratch/cmake"
    (
        PGSEM_ROOT="$dir/tree" SCRATCH="$dir/scratch" RESULTS="$dir/results"
        CMAKE_BUILD=
        local assignment
        for assignment in "$@"; do export "${assignment?}"; done
        "suite_$suite"
    ) >"$dir/log" 2>&1
    local name=none p=0 f=0
    [ -s "$dir/results" ] && read -r name p f <"$dir/results"
    if [ "$name" = "$suite" ] && [ "$f" -ge "$min" ]; then
        echo "ok: $what: counted $p passed, $f failed"
        passed=$((passed + 1))
    else
        echo "FAILED: $what: expected at least $min failed, the suite reported" \
             "'$name $p passed, $f failed'; its output:"
        tail -n 30 "$dir/log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

plant_nothing() { :; }

plant_misformatted_source() {
    printf 'int  planted = 1 ;\n' >src/core/planted_misformatted.cpp
}

# META.json's version no longer the control file's. make dist zips HEAD, so the copy is made a
# repository first and the plant left uncommitted.
plant_wrong_meta_version() {
    git init -q && git add . &&
        git -c user.name=harness -c user.email=harness@localhost commit -q -m copy &&
        grep -q '^   "version": "' META.json &&
        sed -i '0,/^   "version": "[^"]*"/s//   "version": "0.0.1"/' META.json
}

plant_failing_gtest() {
    rm -rf test/stress  # only the unit tests need building
    printf '\nTEST(Planted, MustFail) { EXPECT_EQ(1, 2); }\n' >>test/unit/fnv1a_test.cpp
}

keep_one_regress_case() {
    find sql -name '*.sql' ! -name '10_fnv1a.sql' -delete
}

plant_wrong_regress_output() {
    keep_one_regress_case
    grep -q 3755351481708176604 expected/10_fnv1a.out &&
        sed -i 's/3755351481708176604/3755351481708176605/' expected/10_fnv1a.out
}

plant_wrong_isolation_output() {
    find test/isolation/specs -name '*.spec' ! -name 'text_lock_equivalence.spec' -delete
    local out=test/isolation/expected/text_lock_equivalence.out
    grep -q '<waiting ...>' "$out" && sed -i '0,/ <waiting \.\.\.>/s/ <waiting \.\.\.>//' "$out"
}

# Three planned, one passes, one fails, one never runs.
plant_failing_pgtap_file() {
    rm -f test/pgtap/*.sql
    cat >test/pgtap/01_planted.sql <<'SQL'
BEGIN;
SELECT plan(3);
SELECT ok(true, 'planted pass');
SELECT ok(false, 'planted failure');
SELECT * FROM finish();
ROLLBACK;
SQL
}

# Three planned, one passes, one fails, then the script dies.
plant_failing_tap_script() {
    rm -f test/tap/*.pl
    cat >test/tap/001_planted.pl <<'PERL'
use strict;
use warnings;
use Test::More tests => 3;
ok(1, 'planted pass');
ok(0, 'planted failure');
die "planted death\n";
PERL
}

# Each soak client still connected takes a session claim as it stops, and keeps it while the
# checks made with every client connected run.
plant_kept_session_claim() {
    grep -q '    def clean_up(self):' test/soak/clients.py &&
        sed -i '/    def clean_up(self):/a\        if not self.lost(): self.execute("SELECT sem_claim_session(%s, 99)", "soak.planted")' \
            test/soak/clients.py
}

# The chaos checker no longer sees a write the chain of writes does not reach (a lost update):
# its self-test must fail.
plant_blind_lost_update_check() {
    grep -q '            if op not in seen:' test/chaos/checkers.py &&
        sed -i 's/            if op not in seen:/            if op not in seen and False:/' \
            test/chaos/checkers.py
}

# The README's client-side FNV-1a, which the clients run, with a wrong prime in both languages.
plant_wrong_client_hash() {
    [ "$(grep -c 0x100000001b3 README.md)" -eq 2 ] && sed -i 's/0x100000001b3/0x100000001b5/' README.md
}
