#include "workload.hpp"

#include "client_thread.hpp"

#include <algorithm>
#include <exception>
#include <random>
#include <thread>
#include <utility>

namespace stress {

namespace {

enum class Mode : unsigned char { kAutocommit, kReleaseInside, kCommitThenRelease, kRollback };

struct Plan {
    Mode mode = Mode::kAutocommit;
    Isolation isolation = Isolation::kAutocommit;
    std::string name;
    int n = 0;
    int permits = 1;
    bool set = false;  // the plain semaphore and the mixed one at once (permits 1 each)
    int set_mixed_n = 0;
    bool slow = false;            // claim with the killer's window after it
    bool pooled_release = false;  // release from a pooled connection, not the claiming one
    bool renew = false;
    bool cross_check = false;  // ask sem_held() from a pooled connection while holding
    int hold_millis = 0;
};

struct HeldSlot {
    std::string name;
    int n = 0;
    int slot = -1;
};

struct OpenHold {
    std::vector<std::pair<std::string, int>> names;  // each semaphore claimed, with its n
    std::vector<HeldSlot> slots;                     // empty: unknown
    long long id = 0;
    Clock::time_point begin;        // the claim call returned
    Clock::time_point end;          // valid once closed
    Clock::time_point lease_until;  // the server's lease surely lasts until then
    bool closed = false;
};

class Client : ClientThread {
  public:
    Client(Shared *shared, int index, std::uint64_t seed)
        : ClientThread(shared, index, seed, "client") {}

    void run() {
        if (!reconnect()) return;
        for (int i = 0; i < shared_.options.cycles && conn_ != nullptr; ++i) cycle();
        finish();
    }

  private:
    bool reconnect() {
        return ClientThread::reconnect(std::string(kClientApp) + " " + std::to_string(index_));
    }

    Plan make_plan() {
        Plan plan;
        if (!chance(40)) {
            plan.isolation = static_cast<Isolation>(uniform(1, 3));
            const int tail = uniform(0, 99);
            plan.mode = tail < 40   ? Mode::kReleaseInside
                        : tail < 70 ? Mode::kCommitThenRelease
                                    : Mode::kRollback;
        }
        const bool plain = chance(60);
        plan.name = plain ? kPlainName : kMixedName;
        plan.n = plain ? kPlainN : (chance(50) ? kMixedSmallN : kMixedLargeN);
        plan.permits = chance(kPermitsPercent) ? 2 : 1;
        plan.set = chance(kSetPercent);
        if (plan.set) {
            plan.permits = 1;
            plan.set_mixed_n = chance(50) ? kMixedSmallN : kMixedLargeN;
        }
        plan.slow = chance(12);
        plan.pooled_release = chance(35);
        plan.renew = chance(25);
        plan.cross_check = chance(25);
        plan.hold_millis = uniform(0, kMaxHoldMillis);
        return plan;
    }

    void cycle() {
        const Plan plan = make_plan();
        if (plan.mode != Mode::kAutocommit) {
            if (!run_main(begin_sql(plan.isolation), {}, Step::kOther)) return;
            in_txn_ = true;
            isolation_ = plan.isolation;
        }
        if (!claim(plan)) return;
        sleep_millis(plan.hold_millis / 2);
        const int rest = plan.hold_millis - plan.hold_millis / 2;
        switch (plan.mode) {
            case Mode::kAutocommit:
                finish_autocommit(plan, rest);
                break;
            case Mode::kReleaseInside:
                finish_release_inside(rest);
                break;
            case Mode::kCommitThenRelease:
                finish_commit_then_release(plan, rest);
                break;
            case Mode::kRollback:
                finish_rollback(rest);
                break;
        }
    }

    // Asks until a slot is granted -- inside the same transaction, if any: a claim sees slots
    // freed after the transaction began. Nothing when every answer was NULL or a call failed.
    std::optional<Reply> ask(const Plan &plan) {
        for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
            set_phase(plan.slow ? Phase::kClaimingSlow : Phase::kClaiming);
            std::optional<Reply> reply =
                plan.set ? run_main(plan.slow ? kSlowSetClaimSql : kSetClaimSql,
                                    {kPlainName, kMixedName, std::to_string(kPlainN),
                                     std::to_string(plan.set_mixed_n), kLease},
                                    Step::kOther)
                : plan.permits == 1
                    ? run_main(plan.slow ? kSlowClaimSql : kClaimSql,
                               {plan.name, std::to_string(plan.n), kLease}, Step::kOther)
                    : run_main(
                          plan.slow ? kSlowPermitsClaimSql : kPermitsClaimSql,
                          {plan.name, std::to_string(plan.n), kLease, std::to_string(plan.permits)},
                          Step::kOther);
            if (!reply) return std::nullopt;
            ++shared_.stats.attempts;
            note_latency(*reply);
            if (!reply->null) return reply;
            ++shared_.stats.nulls;
            set_phase(Phase::kIdle);
            sleep_millis(uniform(1, 4));
        }
        ++shared_.stats.given_up;
        if (in_txn_ && run_main(chance(50) ? "COMMIT" : "ROLLBACK", {}, Step::kCommit))
            in_txn_ = false;
        return std::nullopt;
    }

    void note_latency(const Reply &reply) {
        const long micros = static_cast<long>(
            std::chrono::duration_cast<std::chrono::microseconds>(reply.received - reply.sent)
                .count());
        std::atomic<long> &slowest = shared_.stats.slowest_claim_micros;
        long seen = slowest.load();
        while (micros > seen && !slowest.compare_exchange_weak(seen, micros)) {
        }
    }

    // The claim's rows as the server has them ("name=slot,..."): its permits on each of its
    // semaphores, and a set on all of them.
    void note_slots(const Plan &plan, const std::string &rows) {
        std::size_t from = 0;
        while (from <= rows.size()) {
            const std::size_t comma = std::min(rows.find(',', from), rows.size());
            const std::string row = rows.substr(from, comma - from);
            const std::size_t equals = row.rfind('=');
            HeldSlot held;
            held.name = row.substr(0, equals);
            held.slot = static_cast<int>(to_ll(row.substr(equals + 1)));
            for (const auto &[name, n] : hold_->names)
                if (name == held.name) held.n = n;
            hold_->slots.push_back(held);
            from = comma + 1;
        }
        bool whole = true;
        for (const auto &[name, n] : hold_->names) {
            int count = 0;
            for (const HeldSlot &held : hold_->slots) count += held.name == name ? 1 : 0;
            whole = whole && count == plan.permits;
        }
        if (!whole || hold_->slots.size() != hold_->names.size() * plan.permits)
            shared_.problems.note(kOwnRow, who() + "claim " + std::to_string(hold_->id) + " of " +
                                               std::to_string(plan.permits) + " permits" +
                                               (plan.set ? " on both semaphores" : "") +
                                               " has rows " + rows);
    }

    // Claims; false when the cycle ends here (no slot, or a failure).
    bool claim(const Plan &plan) {
        const std::optional<Reply> reply = ask(plan);
        if (!reply) return false;
        OpenHold hold;
        if (plan.set) {
            hold.names = {{kMixedName, plan.set_mixed_n}, {kPlainName, kPlainN}};
        } else {
            hold.names = {{plan.name, plan.n}};
        }
        hold.id = to_ll(reply->value);
        hold.begin = reply->received;
        hold.lease_until = reply->sent + kLeaseLength;  // granted after it was sent
        hold_ = hold;
        set_phase(Phase::kHolding);
        ++shared_.stats.granted[static_cast<int>(plan.isolation)];
        const std::optional<Reply> slots =
            run_main(kSlotsSql, {std::to_string(hold.id)}, Step::kOther);
        if (!slots) return false;
        if (slots->null) {
            shared_.problems.note(kOwnRow, who() + "no row for claim " + std::to_string(hold.id));
        } else {
            note_slots(plan, slots->value);
        }
        if (plan.cross_check) expect_held_elsewhere(true, hold_->id, hold_->lease_until);
        return true;
    }

    void finish_autocommit(const Plan &plan, int rest) {
        if (plan.renew) {
            const std::optional<Reply> reply =
                run_main(kRenewSql, {std::to_string(hold_->id)}, Step::kOther);
            if (!reply) return;
            ++shared_.stats.renewals;
            if (reply->truth())
                hold_->lease_until = std::max(hold_->lease_until, reply->sent + kLeaseLength);
            else if (reply->received < hold_->lease_until)
                shared_.problems.note(kRenewFalse, who() + "claim " + std::to_string(hold_->id));
        }
        sleep_millis(rest);
        release(plan.pooled_release);
    }

    void finish_release_inside(int rest) {
        sleep_millis(rest);
        close_hold(Clock::now());
        const std::optional<Reply> reply =
            run_main(kReleaseSql, {std::to_string(hold_->id)}, Step::kRelease);
        if (!reply) return;
        const bool released = reply->truth();
        if (!released) released_false(*reply);
        if (!commit()) return;
        finish_hold(released ? Fate::kReleased : Fate::kCommitted);
    }

    void finish_commit_then_release(const Plan &plan, int rest) {
        if (!commit()) return;
        sleep_millis(rest);
        release(plan.pooled_release);
    }

    void finish_rollback(int rest) {
        sleep_millis(rest);
        close_hold(Clock::now());
        const long long id = hold_->id;
        if (!run_main("ROLLBACK", {}, Step::kOther)) return;
        in_txn_ = false;
        ++shared_.stats.rolled_back;
        finish_hold(Fate::kRolledBack);
        expect_held_elsewhere(false, id, Clock::time_point::max());
    }

    bool commit() {
        const std::optional<Reply> reply = run_main("COMMIT", {}, Step::kCommit);
        if (!reply) return false;
        in_txn_ = false;
        if (reply->tag != "COMMIT")
            shared_.problems.note(kUnexpectedError, who() + "COMMIT answered " + reply->tag);
        return true;
    }

    // Sends the release from the client's own connection or from a pooled one.
    void release(bool pooled) {
        close_hold(Clock::now());
        Reply reply;
        if (pooled) {
            ++shared_.stats.pooled_releases;
            reply = run_pooled(kReleaseSql, {std::to_string(hold_->id)});
            if (!reply.ok()) {
                finish_hold(Fate::kUnknown);
                return;
            }
        } else {
            const std::optional<Reply> own =
                run_main(kReleaseSql, {std::to_string(hold_->id)}, Step::kRelease);
            if (!own) return;
            reply = *own;
        }
        if (!reply.truth()) released_false(reply);
        finish_hold(reply.truth() ? Fate::kReleased : Fate::kCommitted);
    }

    // A release may be false only when the server may have seen the lease run out.
    void released_false(const Reply &reply) {
        if (reply.received < hold_->lease_until)
            shared_.problems.note(kReleaseFalse, who() + "claim " + std::to_string(hold_->id));
        else
            ++shared_.stats.lease_overruns;
    }

    void expect_held_elsewhere(bool expected, long long id, Clock::time_point lease_until) {
        const Reply reply = run_pooled(kHeldSql, {std::to_string(id)});
        if (!reply.ok() || reply.truth() == expected) return;
        if (expected && reply.received >= lease_until) return;  // the lease may have run out
        // A killed transaction's claim is gone before its client hears of the kill.
        if (expected && in_txn_ && killed_at()) {
            ++shared_.stats.unheld_after_kill;
            return;
        }
        shared_.problems.note(expected ? kHeldFalse : kHeldAfterRollback,
                              who() + "sem_held(" + std::to_string(id) + ") is " + reply.value +
                                  (in_txn_ ? " (claimed in an open transaction)" : ""));
    }

    // The hold ends here as far as the client knows -- but never later than its lease.
    void close_hold(Clock::time_point at) {
        if (!hold_ || hold_->closed) return;
        if (at > hold_->lease_until) ++shared_.stats.lease_overruns;
        hold_->end = std::min(at, hold_->lease_until);
        hold_->closed = true;
        set_phase(Phase::kIdle);
    }

    void finish_hold(Fate fate) {
        if (!hold_) return;
        // One interval per slot: a claim of k permits is k holders, under one id.
        std::vector<HeldSlot> slots = hold_->slots;
        if (slots.empty())  // unknown slots: one holder of each semaphore, slot unknown
            for (const auto &[name, n] : hold_->names) slots.push_back(HeldSlot{name, n, -1});
        for (const HeldSlot &slot : slots) {
            Held held;
            held.interval = make_interval(slot.name, slot.n, slot.slot, hold_->id,
                                          shared_.nanos(hold_->begin), shared_.nanos(hold_->end));
            held.fate = fate;
            shared_.record.add(held);
        }
        hold_.reset();
    }

    // A statement on the client's own connection failed. The hold (if any) ends when the
    // statement was sent, or when the killer struck if that was earlier: a killed transaction's
    // claim is gone from then on.
    void fail(const std::string &sql, const Reply &reply, Step step) override {
        const std::optional<Clock::time_point> killed = killed_at();
        if (hold_) {
            close_hold(killed ? std::min(reply.sent, *killed) : reply.sent);
            if (killed) hold_->end = std::min(hold_->end, *killed);
            finish_hold(fate_after_failure(reply, step));
        }
        const bool transaction_over = step == Step::kCommit;
        if (reply.outcome == Outcome::kLost) {
            in_txn_ = false;
            if (killed)
                ++shared_.stats.kills_seen;
            else
                shared_.problems.note(kUnexpectedError,
                                      who() + "lost without a kill: " + sql + ": " + reply.error);
            reconnect();
            return;
        }
        if (reply.outcome == Outcome::kSerialization)
            shared_.expected.note("40001 serialization failure on " + sql,
                                  std::string(kIsolationNames[static_cast<int>(
                                      in_txn_ ? isolation_ : Isolation::kAutocommit)]) +
                                      ": " + reply.error);
        else
            shared_.problems.note(kUnexpectedError, who() + sql + ": " + reply.error);
        if (transaction_over) in_txn_ = false;
        abandon_transaction();
    }

    // What the client can know of its claim after a statement failed.
    Fate fate_after_failure(const Reply &reply, Step step) {
        if (in_txn_)  // a failed transaction rolls back -- unless the COMMIT itself got through
            return step == Step::kCommit && reply.outcome == Outcome::kLost ? Fate::kUnknown
                                                                            : Fate::kRolledBack;
        if (reply.outcome != Outcome::kLost)
            return step == Step::kRelease ? Fate::kUnknown : Fate::kCommitted;
        if (step != Step::kRelease) return Fate::kOrphaned;
        // The release died with the backend -- or committed just before: by the time the error
        // reaches the client, the backend is done with the claim either way, so a claim still
        // held now has no one left to release it.
        return run_pooled(kHeldSql, {std::to_string(hold_->id)}).truth() ? Fate::kOrphaned
                                                                         : Fate::kUnknown;
    }

    void abandon_transaction() {
        if (!in_txn_) return;
        in_txn_ = false;
        const Reply reply = exec(conn_.get(), "ROLLBACK");
        if (reply.ok()) return;
        if (reply.outcome != Outcome::kLost || !killed_at())
            shared_.problems.note(kUnexpectedError, who() + "ROLLBACK: " + reply.error);
        else
            ++shared_.stats.kills_seen;
        reconnect();
    }

    Reply run_pooled(const std::string &sql, const std::vector<std::string> &params) {
        Pooled &pooled = *shared_.pool[uniform(0, static_cast<int>(shared_.pool.size()) - 1)];
        const std::lock_guard<std::mutex> lock(pooled.mutex);
        Reply reply = exec(pooled.conn.get(), sql, params);
        if (!reply.ok())
            shared_.problems.note(kUnexpectedError, who() + "pooled " + sql + ": " + reply.error);
        return reply;
    }

    bool in_txn_ = false;
    Isolation isolation_ = Isolation::kAutocommit;  // of the transaction open, if any
    std::optional<OpenHold> hold_;
};

// ---- The killer --------------------------------------------------------------------------------

// Picks a client in the wanted phase, notes the moment, and terminates its backend.
bool kill_one(Shared *shared, PGconn *conn, Phase wanted, std::mt19937_64 *rng) {
    const auto deadline = Clock::now() + milliseconds(200);
    const int count = static_cast<int>(shared->targets.size());
    while (Clock::now() < deadline && shared->running > 0) {
        const int first = std::uniform_int_distribution<int>(0, count - 1)(*rng);
        for (int i = 0; i < count; ++i) {
            Target &target = *shared->targets[(first + i) % count];
            int pid = 0;
            {
                const std::lock_guard<std::mutex> lock(target.mutex);
                if (target.phase != wanted || target.pid == 0 || target.killed_at) continue;
                target.killed_at = Clock::now();
                pid = target.pid;
            }
            const Reply reply =
                exec(conn, "SELECT pg_terminate_backend($1)", {std::to_string(pid)});
            if (!reply.ok()) shared->problems.note(kUnexpectedError, "killer: " + reply.error);
            return reply.truth();
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return false;
}

// The pids the server lists as waiting in line for the waiting clients' semaphores.
std::vector<int> pids_in_line(Shared *shared, PGconn *conn) {
    const Reply reply = exec(conn,
                             "SELECT pid FROM sem_waiters "
                             "WHERE name IN ('stress.line', 'stress.line.mixed')");
    if (!reply.ok()) shared->problems.note(kUnexpectedError, "killer: " + reply.error);
    std::vector<int> pids;
    for (const std::vector<std::string> &row : reply.rows)
        pids.push_back(static_cast<int>(to_ll(row[0])));
    return pids;
}

// Picks a waiting client in the wanted phase -- for kWaiting, one the server lists in line --
// notes the moment, and cancels or terminates its backend. The client does not send its next
// statement until the strike is over (Target::striking).
bool strike_waiting(Shared *shared, PGconn *conn, Phase wanted, bool terminate,
                    std::mt19937_64 *rng) {
    const auto deadline = Clock::now() + milliseconds(200);
    const int count = static_cast<int>(shared->targets.size());
    while (Clock::now() < deadline && shared->running > 0) {
        const std::vector<int> in_line =
            wanted == Phase::kWaiting ? pids_in_line(shared, conn) : std::vector<int>{};
        const int first = std::uniform_int_distribution<int>(0, count - 1)(*rng);
        for (int i = 0; i < count; ++i) {
            Target &target = *shared->targets[(first + i) % count];
            int pid = 0;
            {
                const std::lock_guard<std::mutex> lock(target.mutex);
                if (target.phase != wanted || target.pid == 0 || target.killed_at ||
                    target.striking)
                    continue;
                if (wanted == Phase::kWaiting &&
                    std::find(in_line.begin(), in_line.end(), target.pid) == in_line.end())
                    continue;
                target.striking = true;
                (terminate ? target.killed_at : target.cancelled_at) = Clock::now();
                pid = target.pid;
            }
            const Reply reply =
                exec(conn,
                     terminate ? "SELECT pg_terminate_backend($1)" : "SELECT pg_cancel_backend($1)",
                     {std::to_string(pid)});
            if (!reply.ok()) shared->problems.note(kUnexpectedError, "killer: " + reply.error);
            {
                const std::lock_guard<std::mutex> lock(target.mutex);
                target.striking = false;
            }
            target.struck.notify_all();
            return reply.truth();
        }
        std::this_thread::sleep_for(milliseconds(2));
    }
    return false;
}

// Strikes a waiting client: cancels or terminates a waiter in line, or terminates the holder of
// a session claim.
void strike_line(Shared *shared, PGconn *conn, std::mt19937_64 *rng) {
    LineStats &stats = shared->line_stats;
    const int pick = std::uniform_int_distribution<int>(0, 99)(*rng);
    if (pick < 45) {
        if (strike_waiting(shared, conn, Phase::kWaiting, false, rng)) ++stats.cancels_sent;
    } else if (pick < 70) {
        if (strike_waiting(shared, conn, Phase::kWaiting, true, rng)) ++stats.waiter_kills_sent;
    } else {
        if (strike_waiting(shared, conn, Phase::kHoldingSession, true, rng))
            ++stats.session_kills_sent;
    }
}

}  // namespace

void run_client(Shared *shared, int index, std::uint64_t seed) {
    run_client_thread<Client>(shared, index, seed, "client");
}

void run_killer(Shared *shared, std::uint64_t seed) {
    std::string error;
    const Conn conn = connect_to(shared->options.conninfo, "pgsem_stress killer", &error);
    if (conn == nullptr) {
        shared->problems.note(kUnexpectedError, "killer cannot connect: " + error);
        return;
    }
    std::mt19937_64 rng(seed);
    while (shared->running > 0) {
        const int gap =
            std::uniform_int_distribution<int>(kKillerMinGapMillis, kKillerMaxGapMillis)(rng);
        const auto wake = Clock::now() + milliseconds(gap);
        while (shared->running > 0 && Clock::now() < wake)
            std::this_thread::sleep_for(milliseconds(5));
        const bool mid_claim = std::uniform_int_distribution<int>(0, 99)(rng) < 30;
        if (kill_one(shared, conn.get(), mid_claim ? Phase::kClaimingSlow : Phase::kHolding, &rng))
            ++(mid_claim ? shared->stats.kills_claiming : shared->stats.kills_holding);
        if (std::uniform_int_distribution<int>(0, 99)(rng) < kLineStrikePercent)
            strike_line(shared, conn.get(), &rng);
    }
}

}  // namespace stress
