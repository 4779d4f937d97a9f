#include "line_checks.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "waiting.hpp"

namespace stress {

namespace {

long sum(const KindCounts &counts) {
    long total = 0;
    for (const auto &count : counts) total += count;
    return total;
}

std::string by_kind(const KindCounts &counts) {
    std::string out;
    for (std::size_t i = 0; i < kKindNames.size(); ++i)
        out += std::string(i == 0 ? "" : ", ") + kKindNames[i] + " " +
               std::to_string(counts[i].load());
    return out;
}

int depth(const Verdict &verdict, const std::string &label) {
    const auto found = verdict.max_depth.find(label);
    return found == verdict.max_depth.end() ? 0 : found->second;
}

// Runs the final claims one statement after another, noting every answer that is not the one
// wanted.
class Steps {
  public:
    explicit Steps(PGconn *conn) : conn_(conn) {}

    // Runs sql; its value, or "" when the answer was not as wanted.
    std::string expect(const std::string &sql, const std::vector<std::string> &params,
                       bool want_null) {
        const Reply reply = exec(conn_, sql, params);
        if (reply.ok() && reply.null == want_null) return reply.value;
        std::string args;
        for (const std::string &param : params) args += (args.empty() ? "" : ", ") + param;
        wrong_.push_back(sql + " (" + args + ") answered " +
                         (!reply.ok()  ? reply.error
                          : reply.null ? std::string("NULL")
                                       : reply.value));
        return "";
    }
    void expect_true(const std::string &sql, const std::vector<std::string> &params) {
        const Reply reply = exec(conn_, sql, params);
        if (!reply.truth())
            wrong_.push_back(sql + " answered " + (reply.ok() ? reply.value : reply.error));
    }
    [[nodiscard]] const std::vector<std::string> &wrong() const { return wrong_; }

  private:
    PGconn *conn_;
    std::vector<std::string> wrong_;
};

constexpr const char *kReleaseSessionSql = "SELECT sem_release_session($1, $2)";

// Both slots of stress.line: a transaction claim and a session claim; then a wait-0 lease and a
// session claim that waits a moment are refused.
std::vector<std::string> line_is_whole(PGconn *conn) {
    Steps steps(conn);
    const std::string n = std::to_string(kLineN);
    steps.expect("BEGIN", {}, true);
    steps.expect("SELECT sem_claim_xact($1, $2)", {kLineName, n}, false);
    const std::string session =
        steps.expect("SELECT sem_claim_session($1, $2)", {kLineName, n}, false);
    steps.expect("SELECT sem_claim($1, $2, $3::interval, '0')", {kLineName, n, kLineLease}, true);
    steps.expect("SELECT sem_claim_session($1, $2, '100 ms')", {kLineName, n}, true);
    steps.expect("COMMIT", {}, true);
    steps.expect_true(kReleaseSessionSql, {kLineName, session});
    return steps.wrong();
}

// stress.line.mixed: a lease with n = 1 takes slot 0, so another n = 1 caller is refused; two
// session claims with n = 3 take the rest, and a lease with n = 3 that waits a moment is refused.
std::vector<std::string> mixed_is_whole(PGconn *conn) {
    Steps steps(conn);
    const std::string small = std::to_string(kLineMixedSmallN);
    const std::string large = std::to_string(kLineMixedLargeN);
    const std::string lease = steps.expect("SELECT sem_claim($1, $2, $3::interval)",
                                           {kLineMixedName, small, kLineLease}, false);
    steps.expect("SELECT sem_claim_session($1, $2)", {kLineMixedName, small}, true);
    const std::string first =
        steps.expect("SELECT sem_claim_session($1, $2)", {kLineMixedName, large}, false);
    const std::string second =
        steps.expect("SELECT sem_claim_session($1, $2)", {kLineMixedName, large}, false);
    steps.expect("SELECT sem_claim($1, $2, $3::interval, '100 ms')",
                 {kLineMixedName, large, kLineLease}, true);
    steps.expect_true(kReleaseSql, {lease});
    steps.expect_true(kReleaseSessionSql, {kLineMixedName, first});
    steps.expect_true(kReleaseSessionSql, {kLineMixedName, second});
    return steps.wrong();
}

// A count that must be 0; the details say what it was.
std::vector<std::string> unless_zero(const Reply &reply, const char *what) {
    if (reply.ok() && reply.value == "0") return {};
    return {reply.ok() ? reply.value + " " + what : reply.error};
}

}  // namespace

void print_line_stats(Shared &shared) {
    LineStats &stats = shared.line_stats;
    std::printf("waiting clients done after %.1f s\n",
                static_cast<double>(stats.last_done.load()) / 1e9);
    std::printf("waits granted: %s\n", by_kind(stats.granted).c_str());
    std::printf("waits answered NULL when their time was up: %s\n",
                by_kind(stats.timed_out).c_str());
    std::printf("waits cancelled by the killer (57014): %s\n", by_kind(stats.cancelled).c_str());
    std::printf("waits killed by the killer (connection lost): %s\n",
                by_kind(stats.killed).c_str());
    std::printf("waits ended by their own lock_timeout or statement_timeout: %s\n",
                by_kind(stats.timeouts).c_str());
    std::printf("wait-0 calls: %ld refused, %ld granted\n", stats.barges_refused.load(),
                stats.barges_granted.load());
    std::printf(
        "killer at waiting clients: %ld cancels (%ld came after the call), %ld waiters and %ld "
        "session holders terminated; %ld kills noticed after a call\n",
        stats.cancels_sent.load(), stats.cancels_late.load(), stats.waiter_kills_sent.load(),
        stats.session_kills_sent.load(), stats.kills_seen.load());
    std::printf(
        "claims left behind by failed calls or rolled-back transactions: %ld; serialization "
        "failures: %ld\n",
        stats.kept_after_error.load(), stats.serialization.load());
}

void check_line_record(Tally *tally, Shared *shared, const Verdict &client_verdict) {
    const std::vector<Call> calls = shared->calls.all();
    const LineVerdict verdict = judge_line(calls, kFifoMarginNanos, kClockSlackNanos);
    const std::string margin = std::to_string(kFifoMarginNanos / 1000000) + " ms";
    std::printf(
        "line: %zu calls recorded; a later caller's answer came at most %.1f ms before "
        "that of a waiter that came first\n",
        calls.size(), static_cast<double>(verdict.max_lead) / 1e6);
    tally->check(
        verdict.passed.empty(),
        "line: nobody was served before a waiter that surely came first (margin " + margin + ")",
        verdict.passed);
    tally->check(verdict.waited_pairs > 0 && verdict.refused_pairs > 0,
                 "line: the FIFO check covered " + std::to_string(verdict.waited_pairs) +
                     " pairs of waiters served in turn and " +
                     std::to_string(verdict.refused_pairs) +
                     " wait-0 calls refused while someone waited (at least 1 of each)");
    tally->check(verdict.early_null.empty() && verdict.nulls_checked > 0,
                 "line: every wait answered NULL (" + std::to_string(verdict.nulls_checked) +
                     ") came no earlier than its wait after its send",
                 verdict.early_null);
    const LineStats &stats = shared->line_stats;
    bool every_kind = true;
    for (const auto &count : stats.granted) every_kind = every_kind && count > 0;
    tally->check(every_kind && depth(client_verdict, kLineName) == kLineN &&
                     depth(client_verdict, kLineMixedName) == kLineMixedLargeN,
                 "line: waits of every kind were granted (" + by_kind(stats.granted) +
                     "), and every slot of stress.line and stress.line.mixed was held at once");
    tally->check(stats.cancels_sent > 0 && sum(stats.cancelled) > 0,
                 "the killer cancelled waiters in line, who got 57014 (" +
                     std::to_string(sum(stats.cancelled)) + ")");
    tally->check(
        stats.waiter_kills_sent > 0 && stats.session_kills_sent > 0 && sum(stats.killed) > 0,
        "the killer terminated waiters in line and holders of session claims, and "
        "their clients reconnected");
    for (const char *kind : {kSessionReleaseFalse, kFailedClaimKept})
        tally->check(shared->problems.count(kind) == 0, kind, shared->problems.samples(kind));
}

void check_line_free(Tally *tally, PGconn *conn) {
    const Reply waiting = exec(
        conn, std::string("SELECT count(*) FROM sem_waiters WHERE name IN ") + kStressNamesSql);
    const std::vector<std::string> waiters = unless_zero(waiting, "waiting");
    tally->check(waiters.empty(), "nobody is left in line (sem_waiters)", waiters);
    const Reply locks = exec(conn, std::string("SELECT count(*) FROM sem_holders "
                                               "WHERE kind <> 'lease' AND name IN ") +
                                       kStressNamesSql);
    const std::vector<std::string> held = unless_zero(locks, "held");
    tally->check(held.empty(), "no transaction or session claim is left (sem_holders)", held);
    const std::vector<std::string> line = line_is_whole(conn);
    tally->check(line.empty(),
                 "stress.line is whole again: a transaction and a session claim granted, a "
                 "wait-0 lease and a waiting session claim refused",
                 line);
    const std::vector<std::string> mixed = mixed_is_whole(conn);
    tally->check(mixed.empty(),
                 "stress.line.mixed is whole again: slot 0 to an n = 1 lease, slots 1 and 2 to n = "
                 "3 session claims; the next n = 1 and n = 3 callers refused",
                 mixed);
    const std::vector<std::string> left =
        unless_zero(exec(conn,
                         "SELECT count(*) FROM sem_holders WHERE name IN ('stress.line', "
                         "'stress.line.mixed')"),
                    "held");
    tally->check(left.empty(), "the final claims give back, leaving the line's semaphores empty",
                 left);
}

}  // namespace stress
