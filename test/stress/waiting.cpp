#include "waiting.hpp"

#include "client_thread.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace stress {

namespace {

constexpr const char *kLeaseSql = "SELECT sem_claim($1, $2, $3::interval, $4::interval)";
constexpr const char *kTransactionSql = "SELECT sem_claim_xact($1, $2, $3::interval)";
constexpr const char *kSessionSql = "SELECT sem_claim_session($1, $2, $3::interval)";
constexpr const char *kReleaseSessionSql = "SELECT sem_release_session($1, $2)";
constexpr const char *kOwnHoldsSql =
    "SELECT kind, slot FROM sem_holders WHERE pid = pg_backend_pid() AND name = $1";

// A terminate that lands just after a call was answered reaches an idle connection, and libpq
// passes its FATAL on as a notice; the kill is counted when the client notices it. Any other
// notice (a WARNING such as 25P01) is unexpected here.
void on_notice(void *arg, const char *message) {
    std::string text = message;
    if (text.find("terminating connection due to administrator command") != std::string::npos)
        return;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    static_cast<Shared *>(arg)->problems.note(kUnexpectedError, "notice: " + text);
}

enum class Timeout : unsigned char { kNone, kLock, kStatement };

struct Plan {
    Kind kind = Kind::kLease;
    std::string name;
    int n = 0;
    bool in_txn = false;
    Isolation isolation = Isolation::kAutocommit;
    int wait_millis = 0;  // 0: a call that tries to pass whoever waits
    Timeout timeout = Timeout::kNone;
    int timeout_millis = 0;
    int hold_millis = 0;
    bool rollback = false;  // end the transaction so (a session claim is given back with it)
};

struct Hold {
    Kind kind = Kind::kLease;
    std::string name;
    int n = 0;
    int slot = -1;
    long long id = 0;  // leases only
    Clock::time_point begin;
    Clock::time_point lease_until = Clock::time_point::max();
    std::optional<Clock::time_point> end;
};

class WaitingClient : ClientThread {
  public:
    WaitingClient(Shared *shared, int index, std::uint64_t seed)
        : ClientThread(shared, index, seed, "waiter"), stats_(shared->line_stats) {}

    void run() {
        if (!reconnect()) return;
        for (int i = 0; i < shared_.options.wait_cycles && conn_ != nullptr; ++i) {
            cycle();
            sleep_millis(uniform(1, 5));
        }
        finish();
        const long long done = shared_.nanos(Clock::now());
        long long seen = stats_.last_done.load();
        while (done > seen && !stats_.last_done.compare_exchange_weak(seen, done)) {
        }
    }

  private:
    // Leaves the waiting phase and lets a strike in flight finish: once it has, a cancel that
    // came after the call can only reach a backend reading its next command, which ignores it.
    // True when the killer cancelled the call.
    bool settle() {
        std::unique_lock<std::mutex> lock(target_.mutex);
        target_.phase = Phase::kIdle;
        target_.struck.wait(lock, [this] { return !target_.striking; });
        const bool cancelled = target_.cancelled_at.has_value();
        target_.cancelled_at.reset();
        return cancelled;
    }

    bool reconnect() {
        // Named as the other clients are, so the final checks wait for these backends too.
        return ClientThread::reconnect(
            std::string(kClientApp) + " " + std::to_string(index_) + " waiter", on_notice);
    }

    Plan make_plan() {
        Plan plan;
        const int kind = uniform(0, 99);
        plan.kind = kind < 35 ? Kind::kLease : kind < 70 ? Kind::kTransaction : Kind::kSession;
        const bool line = chance(55);
        plan.name = line ? kLineName : kLineMixedName;
        plan.n = line ? kLineN : (chance(50) ? kLineMixedSmallN : kLineMixedLargeN);
        plan.in_txn =
            plan.kind == Kind::kTransaction || chance(plan.kind == Kind::kLease ? 50 : 35);
        if (plan.in_txn) plan.isolation = static_cast<Isolation>(uniform(1, 3));
        const int wait = uniform(0, 99);
        // Short waits give up now and then; long ones outlast any line.
        if (wait < 20)
            plan.wait_millis = 0;
        else if (wait < 40)
            plan.wait_millis = uniform(20, 300);
        else
            plan.wait_millis =
                plan.kind == Kind::kLease ? uniform(1000, 2500) : uniform(2000, 5000);
        if (plan.in_txn && plan.wait_millis > 0 && chance(10)) {
            plan.timeout = chance(50) ? Timeout::kLock : Timeout::kStatement;
            plan.timeout_millis = uniform(30, 300);
        }
        const bool slot_zero = !line && plan.n == kLineMixedSmallN;
        plan.hold_millis = slot_zero && chance(kSlowHoldPercent)
                               ? uniform(kMinSlowHoldMillis, kMaxSlowHoldMillis)
                               : uniform(kMinLineHoldMillis, kMaxLineHoldMillis);
        plan.rollback = chance(30);
        return plan;
    }

    static const char *timeout_name(Timeout timeout) {
        return timeout == Timeout::kLock ? "lock_timeout" : "statement_timeout";
    }

    void cycle() {
        const Plan plan = make_plan();
        if (plan.in_txn) {
            if (!run_main(begin_sql(plan.isolation))) return;
            in_txn_ = true;
        }
        if (plan.timeout != Timeout::kNone &&
            !run_main(std::string("SET LOCAL ") + timeout_name(plan.timeout) + " = " +
                      std::to_string(plan.timeout_millis)))
            return;
        if (!claim(plan)) {
            if (in_txn_ && run_main("ROLLBACK")) in_txn_ = false;
            return;
        }
        // The short timeout was for the wait only.
        if (plan.timeout != Timeout::kNone &&
            !run_main(std::string("SET LOCAL ") + timeout_name(plan.timeout) + " = DEFAULT"))
            return;
        switch (plan.kind) {
            case Kind::kLease:
                hold_lease(plan);
                break;
            case Kind::kTransaction:
                hold_transaction_claim(plan);
                break;
            case Kind::kSession:
                hold_session_claim(plan);
                break;
        }
    }

    static const char *claim_sql(Kind kind) {
        switch (kind) {
            case Kind::kLease:
                return kLeaseSql;
            case Kind::kTransaction:
                return kTransactionSql;
            default:
                return kSessionSql;
        }
    }

    // Claims, waiting in line up to plan.wait_millis -- or, with wait 0, asking a few times;
    // true when a slot was granted.
    bool claim(const Plan &plan) {
        for (int attempt = 1;; ++attempt) {
            const std::optional<bool> granted = claim_once(plan);
            if (granted.value_or(true) || plan.wait_millis > 0 || attempt == kBargeAttempts) break;
            sleep_millis(uniform(5, 25));
        }
        return hold_.has_value();
    }

    // One claim call: true when granted, false when answered NULL, nothing when it failed.
    std::optional<bool> claim_once(const Plan &plan) {
        std::vector<std::string> params{plan.name, std::to_string(plan.n)};
        if (plan.kind == Kind::kLease) params.emplace_back(kLineLease);
        params.push_back(std::to_string(plan.wait_millis) + " ms");
        if (plan.wait_millis > 0) set_phase(Phase::kWaiting);
        const Reply reply = exec(conn_.get(), claim_sql(plan.kind), params);
        const bool cancelled = settle();
        note_call(plan, reply, cancelled);
        if (!reply.ok()) {
            claim_failed(plan, reply, cancelled);
            return std::nullopt;
        }
        if (reply.null) return false;
        Hold hold;
        hold.kind = plan.kind;
        hold.name = plan.name;
        hold.n = plan.n;
        hold.begin = reply.received;
        if (plan.kind == Kind::kLease) {
            hold.id = to_ll(reply.value);
            hold.lease_until = reply.sent + kLineLeaseLength;  // granted after it was sent
        } else {
            hold.slot = static_cast<int>(to_ll(reply.value));
        }
        hold_ = hold;
        return true;
    }

    void note_call(const Plan &plan, const Reply &reply, bool cancelled) {
        Call call;
        call.name = plan.name;
        call.who = who() + kKindNames[static_cast<int>(plan.kind)] + " n " + std::to_string(plan.n);
        call.wait = plan.wait_millis * 1000000LL;
        call.sent = shared_.nanos(reply.sent);
        call.received = shared_.nanos(reply.received);
        call.answer = !reply.ok() ? Answer::kFailed : reply.null ? Answer::kNull : Answer::kGranted;
        shared_.calls.add(call);
        if (!reply.ok()) return;
        if (cancelled) ++stats_.cancels_late;
        const auto kind = static_cast<int>(plan.kind);
        if (plan.wait_millis == 0)
            ++(reply.null ? stats_.barges_refused : stats_.barges_granted);
        else
            ++(reply.null ? stats_.timed_out[kind] : stats_.granted[kind]);
    }

    static bool says(const Reply &reply, const char *code, const char *text) {
        return reply.code == code && reply.error.find(text) != std::string::npos;
    }

    // The claim call failed: expected when the killer struck it, when the transaction's own
    // timeout did, or as a serialization failure.
    void claim_failed(const Plan &plan, const Reply &reply, bool cancelled) {
        const auto kind = static_cast<int>(plan.kind);
        if (reply.outcome == Outcome::kLost) {
            in_txn_ = false;
            if (killed_at())
                ++stats_.killed[kind];
            else
                shared_.problems.note(kUnexpectedError,
                                      who() + "lost without a kill: claim: " + reply.error);
            reconnect();
            return;
        }
        if (cancelled && says(reply, "57014", "user request"))
            ++stats_.cancelled[kind];
        else if ((plan.timeout == Timeout::kLock && reply.code == "55P03") ||
                 (plan.timeout == Timeout::kStatement && says(reply, "57014", "statement timeout")))
            ++stats_.timeouts[kind];
        else if (reply.outcome == Outcome::kSerialization)
            ++stats_.serialization;
        else
            shared_.problems.note(kUnexpectedError, who() + "claim: " + reply.error);
        abandon_transaction();
        if (conn_ != nullptr) expect_nothing_kept(plan, reply.error);
    }

    // A failed claim leaves nothing behind: not even a session claim granted just before a
    // cancel or timeout struck its statement, since a session claim is taken with its
    // transaction. Anything found is a problem, and is given back so that the run goes on.
    void expect_nothing_kept(const Plan &plan, const std::string &after) {
        const std::optional<Reply> own = run_main(kOwnHoldsSql, {plan.name});
        if (!own) return;
        for (const std::vector<std::string> &row : own->rows) {
            ++stats_.kept_after_error;
            shared_.problems.note(kFailedClaimKept,
                                  who() + row[0] + " claim of slot " + row[1] + " after " + after);
            if (row[0] == "session")
                (void)exec(conn_.get(), kReleaseSessionSql, {plan.name, row[1]});
        }
    }

    void hold_lease(const Plan &plan) {
        const std::optional<Reply> slot = run_main(kSlotSql, {std::to_string(hold_->id)});
        if (!slot) return;
        if (slot->null)
            shared_.problems.note(kOwnRow, who() + "no row for claim " + std::to_string(hold_->id));
        else
            hold_->slot = static_cast<int>(to_ll(slot->value));
        sleep_millis(plan.hold_millis);
        close_hold(Clock::now());
        if (in_txn_ && plan.rollback) {
            if (!run_main("ROLLBACK")) return;
            in_txn_ = false;
            finish_hold(Fate::kRolledBack);
            return;
        }
        const std::optional<Reply> released =
            run_main(kReleaseSql, {std::to_string(hold_->id)}, Step::kRelease);
        if (!released) return;
        const bool ok = released->truth();
        if (!ok && released->received < hold_->lease_until)
            shared_.problems.note(kReleaseFalse, who() + "claim " + std::to_string(hold_->id));
        if (in_txn_) {
            const std::optional<Reply> commit = run_main("COMMIT", {}, Step::kCommit);
            if (!commit) return;
            in_txn_ = false;
            if (commit->tag != "COMMIT")
                shared_.problems.note(kUnexpectedError, who() + "COMMIT answered " + commit->tag);
        }
        finish_hold(ok ? Fate::kReleased : Fate::kCommitted);
    }

    void hold_transaction_claim(const Plan &plan) {
        sleep_millis(plan.hold_millis);
        close_hold(Clock::now());
        const std::optional<Reply> end =
            run_main(plan.rollback ? "ROLLBACK" : "COMMIT", {}, Step::kCommit);
        if (!end) return;
        in_txn_ = false;
        if (end->tag != (plan.rollback ? "ROLLBACK" : "COMMIT"))
            shared_.problems.note(kUnexpectedError, who() + "transaction ended " + end->tag);
        finish_hold(Fate::kUnknown);
    }

    void hold_session_claim(const Plan &plan) {
        if (in_txn_ && plan.rollback) {
            // A session claim is taken with its transaction: the ROLLBACK gives it back.
            close_hold(Clock::now());
            if (!run_main("ROLLBACK")) return;
            in_txn_ = false;
            finish_hold(Fate::kUnknown);
            expect_nothing_kept(plan, "ROLLBACK of the transaction that took it");
            return;
        }
        if (in_txn_) {
            if (!run_main("COMMIT")) return;
            in_txn_ = false;
        }
        set_phase(Phase::kHoldingSession);
        sleep_millis(plan.hold_millis);
        release_session_claim();
    }

    void release_session_claim() {
        close_hold(Clock::now());
        const std::optional<Reply> released = run_main(
            kReleaseSessionSql, {hold_->name, std::to_string(hold_->slot)}, Step::kRelease);
        if (!released) return;
        if (!released->truth())
            shared_.problems.note(kSessionReleaseFalse,
                                  who() + hold_->name + " slot " + std::to_string(hold_->slot));
        finish_hold(Fate::kUnknown);
    }

    // The hold ends here as far as the client knows -- but never later than its lease.
    void close_hold(Clock::time_point at) {
        set_phase(Phase::kIdle);
        if (!hold_ || hold_->end) return;
        hold_->end = std::min(at, hold_->lease_until);
    }

    // Lock claims are in no history (id 0, fate unknown); leases are checked against it.
    void finish_hold(Fate fate) {
        if (!hold_) return;
        Held held;
        held.interval = make_interval(hold_->name, hold_->n, hold_->slot, hold_->id,
                                      shared_.nanos(hold_->begin), shared_.nanos(*hold_->end));
        held.fate = hold_->kind == Kind::kLease ? fate : Fate::kUnknown;
        shared_.record.add(held);
        hold_.reset();
    }

    // A statement other than the claim failed: only a kill (of a session claim's holder, or of a
    // waiter whose call was done when the kill came) or a serialization failure may do that. The
    // hold ends when the statement was sent, or when the killer struck if that was earlier.
    void fail(const std::string &sql, const Reply &reply, Step step) override {
        const std::optional<Clock::time_point> killed = killed_at();
        if (hold_) {
            close_hold(reply.sent);
            if (killed) hold_->end = std::min(*hold_->end, *killed);
            finish_hold(fate_after_failure(reply, step));
        }
        if (reply.outcome == Outcome::kLost) {
            in_txn_ = false;
            if (killed)
                ++stats_.kills_seen;
            else
                shared_.problems.note(kUnexpectedError,
                                      who() + "lost without a kill: " + sql + ": " + reply.error);
            reconnect();
            return;
        }
        if (reply.outcome == Outcome::kSerialization)
            ++stats_.serialization;
        else
            shared_.problems.note(kUnexpectedError, who() + sql + ": " + reply.error);
        if (step == Step::kCommit) in_txn_ = false;
        abandon_transaction();
    }

    // What the client can know of a lease after a statement failed (see Fate).
    Fate fate_after_failure(const Reply &reply, Step step) const {
        if (in_txn_)
            return step == Step::kCommit && reply.outcome == Outcome::kLost ? Fate::kUnknown
                                                                            : Fate::kRolledBack;
        if (step == Step::kRelease) return Fate::kUnknown;
        return reply.outcome == Outcome::kLost ? Fate::kOrphaned : Fate::kCommitted;
    }

    void abandon_transaction() {
        if (!in_txn_) return;
        in_txn_ = false;
        const Reply reply = exec(conn_.get(), "ROLLBACK");
        if (reply.ok()) return;
        if (reply.outcome != Outcome::kLost || !killed_at())
            shared_.problems.note(kUnexpectedError, who() + "ROLLBACK: " + reply.error);
        else
            ++stats_.kills_seen;
        reconnect();
    }

    LineStats &stats_;
    bool in_txn_ = false;
    std::optional<Hold> hold_;
};

}  // namespace

void run_waiting_client(Shared *shared, int index, std::uint64_t seed) {
    run_client_thread<WaitingClient>(shared, index, seed, "waiter");
}

}  // namespace stress
