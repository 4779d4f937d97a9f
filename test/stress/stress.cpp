// pgsem_stress: many clients claim, hold and release the slots of two semaphores at once -- in
// autocommit and inside transactions at every isolation level, with rollbacks, releases from
// other connections, and a killer that terminates backends mid-hold and mid-claim -- and then
// proves that no semaphore ever had more holders than allowed:
//   * from the clients' own record of when each of them knew it held a slot (client clock), and
//   * from the server's history (sem_history, server clock);
// and that every slot is free again once all leases have run out.
//
//   pgsem_stress [--conninfo STR] [--clients N] [--cycles N] [--seed N]
//   pgsem_stress --self-test    # the checker must find the violations planted in fake records
//
// Prints a report and "stress: P checks passed, F failed"; exits 0 only when nothing failed.
// The database needs CREATE EXTENSION pgsem, a superuser (the checks read pgsem.claims) and a
// pgsem.history_retention longer than the run (the default day), so the history stays whole.
//
// A client's hold interval runs from the moment its claim call returned to the moment just
// before it sent the release, commit-with-release or rollback -- or the moment the killer struck,
// if earlier -- and never past the claim's send time plus the lease. Each end is one the server's
// own interval surely contains, so overlapping client intervals are a real oversubscription.
#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// ---- What the test does ------------------------------------------------------------------------

constexpr const char *kPlainName = "stress.plain";  // every caller uses n = 4
constexpr const char *kMixedName = "stress.mixed";  // callers use n = 2 or n = 4
constexpr int kPlainN = 4;
constexpr int kMixedSmallN = 2;
constexpr int kMixedLargeN = 4;
constexpr const char *kLease = "2 seconds";
constexpr auto kLeaseLength = std::chrono::seconds(2);
constexpr int kMaxHoldMillis = 20;  // far below the lease: a client's interval is in the server's
constexpr int kMaxAttempts = 25;    // NULL answers before a client gives up a cycle
constexpr int kPoolSize = 4;        // shared connections for releases and cross-checks
constexpr int kKillerMinGapMillis = 100;
constexpr int kKillerMaxGapMillis = 350;
constexpr const char *kSessionOptions = "-c statement_timeout=30s -c lock_timeout=10s";
constexpr const char *kClientApp = "pgsem_stress client";

constexpr const char *kClaimSql = "SELECT sem_claim($1, $2, $3::interval)";
// Keeps the statement (and, in autocommit, the claim's transaction) open for a few milliseconds
// after the claim: the killer aims at this window to terminate a backend mid-claim.
constexpr const char *kSlowClaimSql =
    "SELECT sem_claim($1, $2, $3::interval), pg_catalog.pg_sleep(0.005)";
constexpr const char *kSlotSql = "SELECT slot FROM pgsem.claims WHERE id = $1";
constexpr const char *kReleaseSql = "SELECT sem_release($1)";
constexpr const char *kRenewSql = "SELECT sem_renew($1)";
constexpr const char *kHeldSql = "SELECT sem_held($1)";

long long to_ll(const std::string &text) {
    return std::strtoll(text.c_str(), nullptr, 10);
}

// ---- The checker -------------------------------------------------------------------------------

// One claim as a record saw it: held throughout [begin, end), on the record's one clock.
struct Interval {
    std::string name;
    int n = 0;
    int slot = -1;     // -1: unknown
    long long id = 0;  // 0: unknown
    long long begin = 0;
    long long end = 0;
};

Interval make_interval(const std::string &name, int n, int slot, long long id, long long begin,
                       long long end) {
    Interval interval;
    interval.name = name;
    interval.n = n;
    interval.slot = slot;
    interval.id = id;
    interval.begin = begin;
    interval.end = end;
    return interval;
}

struct Verdict {
    std::vector<std::string> too_many;     // more holders at once than allowed
    std::vector<std::string> slot_shared;  // one slot held twice at once
    std::vector<std::string> slot_range;   // a slot at or above its claim's n
    std::vector<std::string> id_order;     // repeated ids, ids not increasing per slot
    std::map<std::string, int> max_depth;  // deepest overlap per name (and per n group)
};

using Group = std::vector<const Interval *>;

struct Sweep {
    int max_depth = 0;
    bool exceeded = false;
    long long at = 0;  // the first instant where the depth exceeded the limit
};

// Sweeps the non-empty intervals in time order. Intervals are half-open: one that ends at t and
// one that begins at t do not overlap, so at equal times ends (-1) come before begins (+1).
Sweep sweep(const Group &group, int limit) {
    std::vector<std::pair<long long, int>> events;
    for (const Interval *interval : group) {
        if (interval->end <= interval->begin) continue;
        events.emplace_back(interval->begin, +1);
        events.emplace_back(interval->end, -1);
    }
    std::sort(events.begin(), events.end());
    Sweep result;
    int depth = 0;
    for (const auto &[at, step] : events) {
        depth += step;
        result.max_depth = std::max(result.max_depth, depth);
        if (depth > limit && !result.exceeded) {
            result.exceeded = true;
            result.at = at;
        }
    }
    return result;
}

std::string describe(const Interval &interval) {
    return "id " + std::to_string(interval.id) + " (n " + std::to_string(interval.n) + ", slot " +
           std::to_string(interval.slot) + ", " + std::to_string(interval.begin) + ".." +
           std::to_string(interval.end) + ")";
}

// Who held at instant `at` (the first few).
std::string holders_at(const Group &group, long long at) {
    constexpr int kShown = 6;
    std::string out = "at " + std::to_string(at) + ":";
    int shown = 0;
    for (const Interval *interval : group) {
        if (interval->begin > at || at >= interval->end) continue;
        if (++shown > kShown) return out + " ...";
        out += " " + describe(*interval);
    }
    return out;
}

// Per name, for each n k in use: the holders that claimed with n <= k all sit in slots below k,
// so never more than k of them overlap. For the largest k that is the whole name.
void judge_depth(const std::map<std::string, Group> &by_name, Verdict *verdict) {
    for (const auto &[name, group] : by_name) {
        std::set<int> ns;
        for (const Interval *interval : group) ns.insert(interval->n);
        for (const int k : ns) {
            Group subset;
            for (const Interval *interval : group)
                if (interval->n <= k) subset.push_back(interval);
            const Sweep result = sweep(subset, k);
            const std::string label =
                k == *ns.rbegin() ? name : name + " (callers with n <= " + std::to_string(k) + ")";
            verdict->max_depth[label] = result.max_depth;
            if (result.exceeded)
                verdict->too_many.push_back(label + ": " + std::to_string(result.max_depth) +
                                            " holders at once, n is " + std::to_string(k) + "; " +
                                            holders_at(subset, result.at));
        }
    }
}

// Per slot: one holder at a time, ids growing in the order the slot was granted. Empty intervals
// prove nothing about order (their holder may never have held at all) and are left out.
void judge_slots(const std::map<std::pair<std::string, int>, Group> &by_slot, Verdict *verdict) {
    for (const auto &[key, group] : by_slot) {
        const std::string label = key.first + " slot " + std::to_string(key.second);
        const Sweep result = sweep(group, 1);
        if (result.exceeded)
            verdict->slot_shared.push_back(label + ": " + holders_at(group, result.at));
        Group ordered;
        for (const Interval *interval : group)
            if (interval->end > interval->begin && interval->id != 0) ordered.push_back(interval);
        std::sort(ordered.begin(), ordered.end(),
                  [](const Interval *a, const Interval *b) { return a->begin < b->begin; });
        for (std::size_t i = 1; i < ordered.size(); ++i)
            if (ordered[i]->id <= ordered[i - 1]->id)
                verdict->id_order.push_back(label + ": " + describe(*ordered[i]) +
                                            " granted after " + describe(*ordered[i - 1]));
    }
}

Verdict judge(const std::vector<Interval> &record) {
    Verdict verdict;
    std::map<std::string, Group> by_name;
    std::map<std::pair<std::string, int>, Group> by_slot;
    std::map<long long, int> id_count;
    for (const Interval &interval : record) {
        by_name[interval.name].push_back(&interval);
        if (interval.slot >= 0) by_slot[{interval.name, interval.slot}].push_back(&interval);
        if (interval.slot >= interval.n)
            verdict.slot_range.push_back(interval.name + ": " + describe(interval));
        if (interval.id != 0 && ++id_count[interval.id] == 2)
            verdict.id_order.push_back("id " + std::to_string(interval.id) + " granted twice");
    }
    judge_depth(by_name, &verdict);
    judge_slots(by_slot, &verdict);
    return verdict;
}

// The checker must be able to fail: plants each kind of violation in a small record and expects
// it found, and expects a dense but legal record to pass.
bool self_test() {
    int failures = 0;
    auto expect = [&failures](const char *what, bool ok) {
        std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
        if (!ok) ++failures;
    };
    std::vector<Interval> five;
    for (long long i = 0; i < 5; ++i) five.push_back(make_interval("a", 4, -1, 0, 10 * i, 100));
    expect("five overlapping holders of n = 4 are too many", !judge(five).too_many.empty());

    std::vector<Interval> small;
    for (long long i = 0; i < 3; ++i) small.push_back(make_interval("m", 2, -1, 0, i, 50));
    small.push_back(make_interval("m", 4, -1, 0, 0, 50));
    expect("three overlapping n = 2 holders are too many beside an n = 4 one",
           !judge(small).too_many.empty());

    std::vector<Interval> shared{make_interval("a", 4, 1, 1, 0, 11),
                                 make_interval("a", 4, 1, 2, 10, 20)};
    expect("one slot held twice for one tick is found", !judge(shared).slot_shared.empty());

    std::vector<Interval> range{make_interval("m", 2, 3, 7, 0, 10)};
    expect("a slot at or above n is found", !judge(range).slot_range.empty());

    std::vector<Interval> order{make_interval("a", 4, 0, 9, 0, 10),
                                make_interval("a", 4, 0, 8, 10, 20)};
    expect("ids shrinking on one slot are found", !judge(order).id_order.empty());
    std::vector<Interval> twice{make_interval("a", 4, 0, 5, 0, 10),
                                make_interval("a", 4, 1, 5, 0, 10)};
    expect("an id granted twice is found", !judge(twice).id_order.empty());

    // Legal: chains of touching holds on every slot, two n = 2 and two n = 4 holders at once,
    // and any number of empty intervals.
    std::vector<Interval> legal;
    long long id = 1;
    for (int slot = 0; slot < 4; ++slot)
        for (long long i = 0; i < 3; ++i)
            legal.push_back(make_interval("m", slot < 2 ? 2 : 4, slot, id++, 10 * i, 10 * i + 10));
    for (int i = 0; i < 5; ++i) legal.push_back(make_interval("m", 2, -1, 0, 15, 15));
    Verdict verdict = judge(legal);
    expect("a full but legal record passes",
           verdict.too_many.empty() && verdict.slot_shared.empty() && verdict.slot_range.empty() &&
               verdict.id_order.empty());
    expect("the legal record's depth is seen",
           verdict.max_depth["m"] == 4 && verdict.max_depth["m (callers with n <= 2)"] == 2);
    std::printf("self-test: %d failed\n", failures);
    return failures == 0;
}

// ---- libpq -------------------------------------------------------------------------------------

struct ConnCloser {
    void operator()(PGconn *conn) const { PQfinish(conn); }
};
using Conn = std::unique_ptr<PGconn, ConnCloser>;

Conn connect_to(const std::string &conninfo, const std::string &app, std::string *error) {
    const char *keys[] = {"dbname", "application_name", "options", nullptr};
    const char *values[] = {conninfo.c_str(), app.c_str(), kSessionOptions, nullptr};
    Conn conn(PQconnectdbParams(keys, values, 1));
    if (conn != nullptr && PQstatus(conn.get()) == CONNECTION_OK) return conn;
    *error = conn != nullptr ? PQerrorMessage(conn.get()) : "out of memory";
    return nullptr;
}

enum class Outcome : unsigned char { kOk, kLost, kSerialization, kError };

struct Reply {
    Outcome outcome = Outcome::kError;
    std::vector<std::vector<std::string>> rows;  // NULL reads as ""
    bool null = true;  // the first column of the first row is NULL, or there is no row
    std::string value;
    std::string tag;    // command tag: COMMIT, ROLLBACK, SELECT 1...
    std::string error;  // SQLSTATE and message
    Clock::time_point sent;
    Clock::time_point received;

    [[nodiscard]] bool ok() const { return outcome == Outcome::kOk; }
    [[nodiscard]] bool truth() const { return ok() && !null && value == "t"; }
};

void read_result(PGconn *conn, PGresult *result, Reply *reply) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        reply->outcome = Outcome::kOk;
        reply->tag = PQcmdStatus(result);
        for (int row = 0; row < PQntuples(result); ++row) {
            std::vector<std::string> cells;
            cells.reserve(PQnfields(result));
            for (int col = 0; col < PQnfields(result); ++col)
                cells.emplace_back(PQgetvalue(result, row, col));
            reply->rows.push_back(std::move(cells));
        }
        if (PQntuples(result) > 0 && PQnfields(result) > 0 && PQgetisnull(result, 0, 0) == 0) {
            reply->null = false;
            reply->value = PQgetvalue(result, 0, 0);
        }
        return;
    }
    const char *state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state != nullptr ? state : "";
    std::string message = PQerrorMessage(conn);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    std::replace(message.begin(), message.end(), '\n', ' ');  // one line per report entry
    reply->error = (code.empty() ? "(no SQLSTATE)" : code) + " " + message;
    // 57P01: terminated by pg_terminate_backend(); a dead socket has no SQLSTATE at all.
    if (PQstatus(conn) == CONNECTION_BAD || code == "57P01")
        reply->outcome = Outcome::kLost;
    else if (code == "40001")
        reply->outcome = Outcome::kSerialization;
    else
        reply->outcome = Outcome::kError;
}

Reply exec(PGconn *conn, const std::string &sql, const std::vector<std::string> &params = {}) {
    std::vector<const char *> values;
    values.reserve(params.size());
    for (const std::string &param : params) values.push_back(param.c_str());
    Reply reply;
    reply.sent = Clock::now();
    PGresult *result = PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                    values.empty() ? nullptr : values.data(), nullptr, nullptr, 0);
    reply.received = Clock::now();
    read_result(conn, result, &reply);
    PQclear(result);
    return reply;
}

// ---- State shared by clients, killer and checks ------------------------------------------------

struct Options {
    std::string conninfo = "dbname=pgsem_stress";
    int clients = 20;
    int cycles = 300;
    std::uint64_t seed = 0;
    bool self_test = false;
};

enum class Isolation : unsigned char {
    kAutocommit,
    kReadCommitted,
    kRepeatableRead,
    kSerializable
};
constexpr std::array<const char *, 4> kIsolationNames{"autocommit", "read committed",
                                                      "repeatable read", "serializable"};

struct Stats {
    std::atomic<long> attempts{0};
    std::atomic<long> nulls{0};
    std::atomic<long> given_up{0};               // cycles that got only NULL answers
    std::array<std::atomic<long>, 4> granted{};  // by Isolation
    std::atomic<long> rolled_back{0};
    std::atomic<long> pooled_releases{0};
    std::atomic<long> renewals{0};
    std::atomic<long> slowest_claim_micros{0};
    std::atomic<long> kills_holding{0};
    std::atomic<long> kills_claiming{0};
    std::atomic<long> kills_seen{0};  // connection losses the clients traced to the killer
    std::atomic<long> reconnects{0};
    std::atomic<long> lease_overruns{0};
    std::atomic<long> unheld_after_kill{0};  // sem_held() false: the transaction was killed
};

// What may go wrong while the clients run; each kind becomes one check at the end.
constexpr const char *kUnexpectedError = "no unexpected error on any connection";
constexpr const char *kReleaseFalse = "every release of a held claim returned true";
constexpr const char *kRenewFalse = "every renewal of a held claim returned true";
constexpr const char *kOwnRow = "every holder sees its own claim's row";
constexpr const char *kHeldFalse =
    "sem_held() on another connection is true while a claim is held, also before commit";
constexpr const char *kHeldAfterRollback = "sem_held() is false once the claim is rolled back";
constexpr std::array<const char *, 6> kProblemKinds{
    kUnexpectedError, kReleaseFalse, kRenewFalse, kOwnRow, kHeldFalse, kHeldAfterRollback};

class Problems {
  public:
    void note(const std::string &kind, const std::string &detail) {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::string> &samples = samples_[kind];
        if (samples.size() < kMaxSamples) samples.push_back(detail);
        ++counts_[kind];
    }
    long count(const std::string &kind) {
        const std::lock_guard<std::mutex> lock(mutex_);
        return counts_[kind];
    }
    std::map<std::string, long> counts() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return counts_;
    }
    std::vector<std::string> samples(const std::string &kind) {
        const std::lock_guard<std::mutex> lock(mutex_);
        return samples_[kind];
    }

  private:
    static constexpr std::size_t kMaxSamples = 5;
    std::mutex mutex_;
    std::map<std::string, long> counts_;
    std::map<std::string, std::vector<std::string>> samples_;
};

// What a client knows of how its claim ended; the server's history must agree.
// kOrphaned: committed, and its holder was killed before any release of it got through -- the
// claim must keep its slot until its lease runs out and then show as timed out.
enum class Fate : unsigned char { kUnknown, kReleased, kCommitted, kRolledBack, kOrphaned };

struct Held {
    Interval interval;  // client clock, nanoseconds since the start
    Fate fate = Fate::kUnknown;
};

class Record {
  public:
    void add(Held held) {
        const std::lock_guard<std::mutex> lock(mutex_);
        held_.push_back(std::move(held));
    }
    std::vector<Held> all() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return held_;
    }

  private:
    std::mutex mutex_;
    std::vector<Held> held_;
};

// What the killer sees of one client.
enum class Phase : unsigned char { kIdle, kClaiming, kClaimingSlow, kHolding, kReconnecting };

struct Target {
    std::mutex mutex;
    int pid = 0;
    Phase phase = Phase::kIdle;
    std::optional<Clock::time_point> killed_at;  // set just before the killer strikes
};

struct Pooled {
    std::mutex mutex;
    Conn conn;
};

struct Shared {
    Options options;
    Clock::time_point start = Clock::now();
    Stats stats;
    Problems problems;
    Problems expected;  // expected errors, by kind and statement
    Record record;
    std::vector<std::unique_ptr<Pooled>> pool;
    std::vector<std::unique_ptr<Target>> targets;
    std::atomic<int> running{0};

    [[nodiscard]] long long nanos(Clock::time_point at) const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(at - start).count();
    }
};

// ---- A client ----------------------------------------------------------------------------------

enum class Mode : unsigned char { kAutocommit, kReleaseInside, kCommitThenRelease, kRollback };
enum class Step : unsigned char { kOther, kCommit, kRelease };

struct Plan {
    Mode mode = Mode::kAutocommit;
    Isolation isolation = Isolation::kAutocommit;
    std::string name;
    int n = 0;
    bool slow = false;            // claim with the killer's window after it
    bool pooled_release = false;  // release from a pooled connection, not the claiming one
    bool renew = false;
    bool cross_check = false;  // ask sem_held() from a pooled connection while holding
    int hold_millis = 0;
};

struct OpenHold {
    std::string name;
    int n = 0;
    int slot = -1;
    long long id = 0;
    Clock::time_point begin;        // the claim call returned
    Clock::time_point end;          // valid once closed
    Clock::time_point lease_until;  // the server's lease surely lasts until then
    bool closed = false;
};

class Client {
  public:
    Client(Shared *shared, int index, std::uint64_t seed)
        : shared_(*shared), target_(*shared->targets[index]), index_(index), rng_(seed) {}

    void run() {
        if (!reconnect()) return;
        for (int i = 0; i < shared_.options.cycles && conn_ != nullptr; ++i) cycle();
        const std::lock_guard<std::mutex> lock(target_.mutex);
        target_.pid = 0;
        target_.phase = Phase::kIdle;
        conn_.reset();
    }

  private:
    int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
    bool chance(int percent) { return uniform(0, 99) < percent; }
    static void sleep_millis(int millis) { std::this_thread::sleep_for(milliseconds(millis)); }
    std::string who() const { return "client " + std::to_string(index_) + ": "; }

    void set_phase(Phase phase) {
        const std::lock_guard<std::mutex> lock(target_.mutex);
        target_.phase = phase;
    }
    std::optional<Clock::time_point> killed_at() {
        const std::lock_guard<std::mutex> lock(target_.mutex);
        return target_.killed_at;
    }

    bool reconnect() {
        {
            const std::lock_guard<std::mutex> lock(target_.mutex);
            target_.pid = 0;
            target_.phase = Phase::kReconnecting;
        }
        const bool first = !connected_once_;
        conn_.reset();
        std::string error;
        for (int attempt = 0; attempt < 50 && conn_ == nullptr; ++attempt) {
            conn_ = connect_to(shared_.options.conninfo,
                               std::string(kClientApp) + " " + std::to_string(index_), &error);
            if (conn_ == nullptr) sleep_millis(20);
        }
        if (conn_ == nullptr) {
            shared_.problems.note(kUnexpectedError, who() + "cannot connect: " + error);
            return false;
        }
        connected_once_ = true;
        if (!first) ++shared_.stats.reconnects;
        const std::lock_guard<std::mutex> lock(target_.mutex);
        target_.pid = PQbackendPID(conn_.get());
        target_.phase = Phase::kIdle;
        target_.killed_at.reset();
        return true;
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
        plan.slow = chance(12);
        plan.pooled_release = chance(35);
        plan.renew = chance(25);
        plan.cross_check = chance(25);
        plan.hold_millis = uniform(0, kMaxHoldMillis);
        return plan;
    }

    static const char *begin_sql(Isolation isolation) {
        switch (isolation) {
            case Isolation::kRepeatableRead:
                return "BEGIN ISOLATION LEVEL REPEATABLE READ";
            case Isolation::kSerializable:
                return "BEGIN ISOLATION LEVEL SERIALIZABLE";
            default:
                return "BEGIN ISOLATION LEVEL READ COMMITTED";
        }
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
                run_main(plan.slow ? kSlowClaimSql : kClaimSql,
                         {plan.name, std::to_string(plan.n), kLease}, Step::kOther);
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

    // Claims; false when the cycle ends here (no slot, or a failure).
    bool claim(const Plan &plan) {
        const std::optional<Reply> reply = ask(plan);
        if (!reply) return false;
        OpenHold hold;
        hold.name = plan.name;
        hold.n = plan.n;
        hold.id = to_ll(reply->value);
        hold.begin = reply->received;
        hold.lease_until = reply->sent + kLeaseLength;  // granted after it was sent
        hold_ = hold;
        set_phase(Phase::kHolding);
        ++shared_.stats.granted[static_cast<int>(plan.isolation)];
        const std::optional<Reply> slot =
            run_main(kSlotSql, {std::to_string(hold.id)}, Step::kOther);
        if (!slot) return false;
        if (slot->null)
            shared_.problems.note(kOwnRow, who() + "no row for claim " + std::to_string(hold.id));
        else
            hold_->slot = static_cast<int>(to_ll(slot->value));
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
        Held held;
        held.interval = make_interval(hold_->name, hold_->n, hold_->slot, hold_->id,
                                      shared_.nanos(hold_->begin), shared_.nanos(hold_->end));
        held.fate = fate;
        shared_.record.add(held);
        hold_.reset();
    }

    std::optional<Reply> run_main(const std::string &sql, const std::vector<std::string> &params,
                                  Step step) {
        Reply reply = exec(conn_.get(), sql, params);
        if (reply.ok()) return reply;
        fail(sql, reply, step);
        return std::nullopt;
    }

    // A statement on the client's own connection failed. The hold (if any) ends when the
    // statement was sent, or when the killer struck if that was earlier: a killed transaction's
    // claim is gone from then on.
    void fail(const std::string &sql, const Reply &reply, Step step) {
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

    Shared &shared_;
    Target &target_;
    int index_;
    std::mt19937_64 rng_;
    Conn conn_;
    bool connected_once_ = false;
    bool in_txn_ = false;
    Isolation isolation_ = Isolation::kAutocommit;  // of the transaction open, if any
    std::optional<OpenHold> hold_;
};

void run_client(Shared *shared, int index, std::uint64_t seed) {
    try {
        Client client(shared, index, seed);
        client.run();
    } catch (const std::exception &e) {
        shared->problems.note(kUnexpectedError,
                              "client " + std::to_string(index) + ": exception: " + e.what());
    }
    --shared->running;
}

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
        if (!kill_one(shared, conn.get(), mid_claim ? Phase::kClaimingSlow : Phase::kHolding, &rng))
            continue;
        ++(mid_claim ? shared->stats.kills_claiming : shared->stats.kills_holding);
    }
}

// ---- Checks ------------------------------------------------------------------------------------

class Tally {
  public:
    void check(bool ok, const std::string &what, const std::vector<std::string> &details = {}) {
        std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
        for (std::size_t i = 0; i < details.size() && i < 5; ++i)
            std::printf("    %s\n", details[i].c_str());
        if (details.size() > 5) std::printf("    ... %zu in all\n", details.size());
        ++(ok ? passed_ : failed_);
    }
    [[nodiscard]] int passed() const { return passed_; }
    [[nodiscard]] int failed() const { return failed_; }

  private:
    int passed_ = 0;
    int failed_ = 0;
};

void report_depth(const char *whose, const Verdict &verdict) {
    std::printf("max concurrency (%s):", whose);
    for (const auto &[label, depth] : verdict.max_depth)
        std::printf(" %s %d;", label.c_str(), depth);
    std::printf("\n");
}

void check_verdict(Tally *tally, const char *whose, const Verdict &verdict) {
    const std::string prefix = std::string(whose) + ": ";
    tally->check(verdict.too_many.empty(),
                 prefix +
                     "never more than n holders at once (callers with n <= k: never more "
                     "than k)",
                 verdict.too_many);
    tally->check(verdict.slot_shared.empty(), prefix + "no slot held twice at once",
                 verdict.slot_shared);
    tally->check(verdict.slot_range.empty(), prefix + "every slot below its claim's n",
                 verdict.slot_range);
    tally->check(verdict.id_order.empty(), prefix + "ids unique and increasing per slot",
                 verdict.id_order);
}

void check_client_record(Tally *tally, Shared *shared, const std::vector<Held> &record) {
    std::vector<Interval> intervals;
    intervals.reserve(record.size());
    for (const Held &held : record) intervals.push_back(held.interval);
    const Verdict verdict = judge(intervals);
    report_depth("client record", verdict);
    check_verdict(tally, "client record", verdict);
    for (const char *kind : kProblemKinds)
        tally->check(shared->problems.count(kind) == 0, kind, shared->problems.samples(kind));
    const auto plain = verdict.max_depth.find(kPlainName);
    tally->check(
        plain != verdict.max_depth.end() && plain->second == kPlainN && shared->stats.nulls > 0,
        "the clients contended: all 4 slots of stress.plain held at once, some claims "
        "refused");
    tally->check(shared->stats.kills_holding > 0 && shared->stats.kills_seen > 0,
                 "the killer terminated holders and their clients reconnected");
}

// Waits (bounded) until a query's first value is "0".
bool wait_for_zero(PGconn *conn, const char *sql, int max_seconds) {
    const auto deadline = Clock::now() + std::chrono::seconds(max_seconds);
    while (Clock::now() < deadline) {
        const Reply reply = exec(conn, sql);
        if (!reply.ok()) return false;
        if (reply.value == "0") return true;
        std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
}

// Every lease has run out; then n claims of each name succeed, the next is NULL.
void check_all_free(Tally *tally, PGconn *conn) {
    const bool gone = wait_for_zero(
        conn,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'pgsem_stress client%'",
        10);
    tally->check(gone, "every killed backend has exited");
    const bool expired = wait_for_zero(
        conn,
        "SELECT count(*) FROM pgsem.claims WHERE ended_at IS NULL "
        "AND expires_at > clock_timestamp() AND name IN ('stress.plain', 'stress.mixed')",
        10);
    tally->check(expired, "every lease has run out");
    std::vector<std::string> ids;
    auto claims = [&](const char *name, int n, int count) {
        bool ok = true;
        for (int i = 0; i <= count; ++i) {
            const Reply reply = exec(conn, kClaimSql, {name, std::to_string(n), kLease});
            const bool want_null = i == count;
            ok = ok && reply.ok() && reply.null == want_null;
            if (reply.ok() && !reply.null) ids.push_back(reply.value);
        }
        return ok;
    };
    tally->check(claims(kPlainName, kPlainN, kPlainN),
                 "stress.plain is free again: 4 fresh claims granted, the 5th refused");
    tally->check(claims(kMixedName, kMixedSmallN, kMixedSmallN) &&
                     claims(kMixedName, kMixedLargeN, kMixedLargeN - kMixedSmallN),
                 "stress.mixed is free again: 2 claims with n = 2, then 2 with n = 4 granted, "
                 "the 3rd of each refused");
    bool released = true;
    for (const std::string &id : ids) released = released && exec(conn, kReleaseSql, {id}).truth();
    const Reply holders = exec(conn,
                               "SELECT count(*) FROM sem_holders "
                               "WHERE name IN ('stress.plain', 'stress.mixed')");
    tally->check(released && holders.value == "0",
                 "the fresh claims release, leaving sem_holders empty");
}

struct ServerClaim {
    std::string name;
    int n = 0;
    int slot = 0;
    std::string status;
};

// The server's own record: [claimed_at, ended_at or expires_at) of every committed claim.
std::map<long long, ServerClaim> check_server_history(Tally *tally, PGconn *conn) {
    const Reply reply =
        exec(conn,
             "SELECT id, name, n, slot, status, "
             "(extract(epoch FROM claimed_at) * 1000000)::bigint, "
             "(extract(epoch FROM coalesce(ended_at, expires_at)) * 1000000)::bigint "
             "FROM sem_history WHERE name IN ('stress.plain', 'stress.mixed')");
    std::map<long long, ServerClaim> claims;
    std::vector<Interval> intervals;
    for (const std::vector<std::string> &row : reply.rows) {
        const long long id = to_ll(row[0]);
        const int n = static_cast<int>(to_ll(row[2]));
        const int slot = static_cast<int>(to_ll(row[3]));
        claims[id] = ServerClaim{row[1], n, slot, row[4]};
        intervals.push_back(make_interval(row[1], n, slot, id, to_ll(row[5]), to_ll(row[6])));
    }
    tally->check(reply.ok() && !intervals.empty(), "the server's history can be read",
                 reply.ok() ? std::vector<std::string>{} : std::vector<std::string>{reply.error});
    const Verdict verdict = judge(intervals);
    report_depth("server history", verdict);
    check_verdict(tally, "server history", verdict);
    const Reply timed_out = exec(conn,
                                 "SELECT count(*) FROM pgsem.claims WHERE outcome = 'timed out' "
                                 "AND ended_at IS DISTINCT FROM expires_at");
    tally->check(timed_out.value == "0", "server history: timed-out claims ended with their lease");
    std::printf("server history: %zu claims\n", claims.size());
    return claims;
}

// What each client knows of its claims' ends must be what the server recorded.
void check_fates(Tally *tally, const std::vector<Held> &record,
                 const std::map<long long, ServerClaim> &server) {
    std::vector<std::string> resurrected;
    std::vector<std::string> not_released;
    std::vector<std::string> not_timed_out;
    long orphans = 0;
    std::vector<std::string> mismatched;
    for (const Held &held : record) {
        const Interval &claim = held.interval;
        const auto found = server.find(claim.id);
        const std::string id = "claim " + std::to_string(claim.id);
        if (held.fate == Fate::kRolledBack) {
            if (found != server.end()) resurrected.push_back(id + " is " + found->second.status);
            continue;
        }
        if (held.fate == Fate::kUnknown) continue;
        if (found == server.end()) {
            mismatched.push_back(id + " was committed but is not in the history");
            continue;
        }
        const ServerClaim &row = found->second;
        if (row.name != claim.name || row.n != claim.n ||
            (claim.slot >= 0 && row.slot != claim.slot))
            mismatched.push_back(id + ": the server has " + row.name + " n " +
                                 std::to_string(row.n) + " slot " + std::to_string(row.slot));
        if (held.fate == Fate::kReleased && row.status != "released")
            not_released.push_back(id + " is " + row.status);
        if (held.fate == Fate::kOrphaned) {
            ++orphans;
            if (row.status != "timed out") not_timed_out.push_back(id + " is " + row.status);
        }
    }
    tally->check(resurrected.empty(), "rolled-back claims left no row", resurrected);
    tally->check(not_released.empty(), "released claims show as 'released' in sem_history",
                 not_released);
    tally->check(orphans > 0 && not_timed_out.empty(),
                 "claims of killed holders (" + std::to_string(orphans) +
                     ") kept their slot until their lease ran out: all 'timed out'",
                 not_timed_out);
    tally->check(mismatched.empty(),
                 "committed claims are in the history with the name, n and slot their holder saw",
                 mismatched);
}

// ---- The run -----------------------------------------------------------------------------------

bool parse_options(int argc, char **argv, Options *options) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--self-test") {
            options->self_test = true;
        } else if (arg == "--conninfo" && has_value) {
            options->conninfo = argv[++i];
        } else if (arg == "--clients" && has_value) {
            options->clients = std::atoi(argv[++i]);
        } else if (arg == "--cycles" && has_value) {
            options->cycles = std::atoi(argv[++i]);
        } else if (arg == "--seed" && has_value) {
            options->seed = std::strtoull(argv[++i], nullptr, 10);
        } else {
            std::fprintf(stderr,
                         "usage: pgsem_stress [--conninfo STR] [--clients N] [--cycles N] "
                         "[--seed N] | --self-test\n");
            return false;
        }
    }
    return options->clients > 0 && options->cycles > 0;
}

bool open_pool(Shared *shared, std::string *error) {
    for (int i = 0; i < kPoolSize; ++i) {
        auto pooled = std::make_unique<Pooled>();
        pooled->conn =
            connect_to(shared->options.conninfo, "pgsem_stress pool " + std::to_string(i), error);
        if (pooled->conn == nullptr) return false;
        shared->pool.push_back(std::move(pooled));
    }
    return true;
}

void run_threads(Shared *shared) {
    const int clients = shared->options.clients;
    for (int i = 0; i < clients; ++i) shared->targets.push_back(std::make_unique<Target>());
    shared->running = clients;
    std::vector<std::thread> threads;
    threads.reserve(clients + 1);
    for (int i = 0; i < clients; ++i)
        threads.emplace_back(run_client, shared, i, shared->options.seed * 1000 + i);
    threads.emplace_back(run_killer, shared, shared->options.seed * 1000 + 999);
    for (std::thread &thread : threads) thread.join();
}

void print_stats(Shared &shared, double seconds) {
    const Stats &stats = shared.stats;
    long granted = 0;
    for (const auto &count : stats.granted) granted += count;
    std::printf("claims: %ld calls, %ld granted, %ld NULL; %ld cycles gave up after %d NULLs\n",
                stats.attempts.load(), granted, stats.nulls.load(), stats.given_up.load(),
                kMaxAttempts);
    std::printf("granted by mode:");
    for (std::size_t i = 0; i < kIsolationNames.size(); ++i)
        std::printf(" %s %ld;", kIsolationNames[i], stats.granted[i].load());
    std::printf("\n");
    std::printf("rolled back %ld, released from a pooled connection %ld, renewed %ld\n",
                stats.rolled_back.load(), stats.pooled_releases.load(), stats.renewals.load());
    std::printf("kills: %ld mid-hold, %ld mid-claim; %ld noticed by clients, %ld reconnects\n",
                stats.kills_holding.load(), stats.kills_claiming.load(), stats.kills_seen.load(),
                stats.reconnects.load());
    std::printf("holds that outlived their lease %ld, slowest claim call %.1f ms\n",
                stats.lease_overruns.load(), stats.slowest_claim_micros.load() / 1000.0);
    std::printf("claims gone with their killed transaction before sem_held() asked: %ld\n",
                stats.unheld_after_kill.load());
    for (const auto &[kind, count] : shared.expected.counts()) {
        const std::vector<std::string> samples = shared.expected.samples(kind);
        std::printf("expected: %ld x %s (%s)\n", count, kind.c_str(),
                    samples.empty() ? "" : samples.front().c_str());
    }
    std::printf("duration: %.1f s\n", seconds);
}

int run(const Options &options) {
    auto shared = std::make_unique<Shared>();
    shared->options = options;
    std::printf("pgsem stress: %d clients x %d cycles, seed %llu, lease %s, holds 0-%d ms\n",
                options.clients, options.cycles, static_cast<unsigned long long>(options.seed),
                kLease, kMaxHoldMillis);
    std::string error;
    const Conn checker = connect_to(options.conninfo, "pgsem_stress checker", &error);
    if (checker == nullptr || !open_pool(shared.get(), &error)) {
        std::printf("cannot connect: %s\nstress: 0 checks passed, 1 failed\n", error.c_str());
        return 1;
    }
    run_threads(shared.get());
    const double seconds = std::chrono::duration<double>(Clock::now() - shared->start).count();
    print_stats(*shared, seconds);
    const std::vector<Held> record = shared->record.all();
    Tally tally;
    check_client_record(&tally, shared.get(), record);
    check_all_free(&tally, checker.get());
    const std::map<long long, ServerClaim> server = check_server_history(&tally, checker.get());
    check_fates(&tally, record, server);
    std::printf("total duration: %.1f s\n",
                std::chrono::duration<double>(Clock::now() - shared->start).count());
    std::printf("stress: %d checks passed, %d failed\n", tally.passed(), tally.failed());
    return tally.failed() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the report survives a crash, line by line
    try {
        Options options;
        options.seed = static_cast<std::uint64_t>(std::random_device{}()) % 1000000;
        if (!parse_options(argc, argv, &options)) return 2;
        if (options.self_test) return self_test() ? 0 : 1;
        return run(options);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "pgsem_stress: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "pgsem_stress: unknown exception\n");
    }
    return 2;
}
