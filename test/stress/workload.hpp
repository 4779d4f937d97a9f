// The stress test's workload: the state that clients, the killer and the final checks share, and
// the threads that run them. See main.cpp for what the run proves.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checker.hpp"
#include "line.hpp"
#include "pq.hpp"

namespace stress {

using std::chrono::milliseconds;

// ---- What the test does ------------------------------------------------------------------------

// ---- What the test does ------------------------------------------------------------------------

inline constexpr const char *kPlainName = "stress.plain";  // every caller uses n = 4
inline constexpr const char *kMixedName = "stress.mixed";  // callers use n = 2 or n = 4
inline constexpr int kPlainN = 4;
inline constexpr int kMixedSmallN = 2;
inline constexpr int kMixedLargeN = 4;
inline constexpr const char *kLease = "2 seconds";
inline constexpr auto kLeaseLength = std::chrono::seconds(2);
inline constexpr int kMaxHoldMillis =
    20;  // far below the lease: a client's interval is in the server's
inline constexpr int kMaxAttempts = 25;  // NULL answers before a client gives up a cycle
inline constexpr int kPoolSize = 4;      // shared connections for releases and cross-checks
inline constexpr int kKillerMinGapMillis = 100;
inline constexpr int kKillerMaxGapMillis = 350;
inline constexpr int kLineStrikePercent = 70;  // of the killer's rounds, also strike a waiter
inline constexpr const char *kClientApp = "pgsem_stress client";

inline constexpr const char *kClaimSql = "SELECT sem_claim($1, $2, $3::interval)";
// A claim of several permits (1.2): all its slots at once, or none.
inline constexpr const char *kPermitsClaimSql =
    "SELECT sem_claim($1, $2, $3::interval, permits => $4)";
inline constexpr const char *kSlowPermitsClaimSql =
    "SELECT sem_claim($1, $2, $3::interval, permits => $4), pg_catalog.pg_sleep(0.005)";
inline constexpr int kPermitsPercent = 20;  // of the clients' claims, of 2 permits
// A set of two semaphores at once (1.2): both, or neither; one id on both.
inline constexpr const char *kSetClaimSql =
    "SELECT (sem_claim_all(ARRAY[$1, $2], ARRAY[$3::int, $4::int], $5::interval))[1]";
inline constexpr const char *kSlowSetClaimSql =
    "SELECT (sem_claim_all(ARRAY[$1, $2], ARRAY[$3::int, $4::int], $5::interval))[1], "
    "pg_catalog.pg_sleep(0.005)";
inline constexpr int kSetPercent = 15;  // of the clients' claims, sets of both semaphores
// Every slot of a claim, on each of its semaphores, as "name=slot,...".
inline constexpr const char *kSlotsSql =
    "SELECT pg_catalog.string_agg(name || '=' || slot, ',' ORDER BY name, slot) "
    "FROM pgsem.claims WHERE id = $1";
// Keeps the statement (and, in autocommit, the claim's transaction) open for a few milliseconds
// after the claim: the killer aims at this window to terminate a backend mid-claim.
inline constexpr const char *kSlowClaimSql =
    "SELECT sem_claim($1, $2, $3::interval), pg_catalog.pg_sleep(0.005)";
inline constexpr const char *kSlotSql = "SELECT slot FROM pgsem.claims WHERE id = $1";
inline constexpr const char *kReleaseSql = "SELECT sem_release($1)";
inline constexpr const char *kRenewSql = "SELECT sem_renew($1)";
inline constexpr const char *kHeldSql = "SELECT sem_held($1)";

inline long long to_ll(const std::string &text) {
    return std::strtoll(text.c_str(), nullptr, 10);
}

// ---- State shared by clients, killer and checks ------------------------------------------------

struct Options {
    std::string conninfo = "dbname=pgsem_stress";
    int clients = 20;
    int cycles = 300;
    int waiters = 6;  // clients that wait in line (waiting.cpp)
    int wait_cycles = 100;
    std::uint64_t seed = 0;
    bool self_test = false;
};

enum class Isolation : unsigned char {
    kAutocommit,
    kReadCommitted,
    kRepeatableRead,
    kSerializable
};
inline constexpr std::array<const char *, 4> kIsolationNames{"autocommit", "read committed",
                                                             "repeatable read", "serializable"};

inline const char *begin_sql(Isolation isolation) {
    switch (isolation) {
        case Isolation::kRepeatableRead:
            return "BEGIN ISOLATION LEVEL REPEATABLE READ";
        case Isolation::kSerializable:
            return "BEGIN ISOLATION LEVEL SERIALIZABLE";
        default:
            return "BEGIN ISOLATION LEVEL READ COMMITTED";
    }
}

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
inline constexpr const char *kUnexpectedError = "no unexpected error on any connection";
inline constexpr const char *kReleaseFalse = "every release of a held claim returned true";
inline constexpr const char *kRenewFalse = "every renewal of a held claim returned true";
inline constexpr const char *kOwnRow = "every holder sees its own claim's row";
inline constexpr const char *kHeldFalse =
    "sem_held() on another connection is true while a claim is held, also before commit";
inline constexpr const char *kHeldAfterRollback =
    "sem_held() is false once the claim is rolled back";
inline constexpr std::array<const char *, 6> kProblemKinds{
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

// What the killer sees of one client. kWaiting: in a call that may wait in line;
// kHoldingSession: holding a session claim.
enum class Phase : unsigned char {
    kIdle,
    kClaiming,
    kClaimingSlow,
    kHolding,
    kReconnecting,
    kWaiting,
    kHoldingSession
};

struct Target {
    std::mutex mutex;
    int pid = 0;
    Phase phase = Phase::kIdle;
    std::optional<Clock::time_point> killed_at;     // set just before the killer strikes
    std::optional<Clock::time_point> cancelled_at;  // the same, for pg_cancel_backend
    // While the killer strikes a waiting client, which must not send its next statement until
    // the signal is on its way: a cancel that came late would otherwise hit that statement.
    bool striking = false;
    std::condition_variable struck;
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
    LineStats line_stats;
    CallRecord calls;  // of the waiting clients
    std::vector<std::unique_ptr<Pooled>> pool;
    std::vector<std::unique_ptr<Target>> targets;
    std::atomic<int> running{0};

    [[nodiscard]] long long nanos(Clock::time_point at) const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(at - start).count();
    }
};

// One client thread: claims, holds and releases for options.cycles cycles.
void run_client(Shared *shared, int index, std::uint64_t seed);

// The killer thread: terminates backends mid-hold and mid-claim while clients run; cancels and
// terminates waiting clients in line, and terminates holders of session claims.
void run_killer(Shared *shared, std::uint64_t seed);

}  // namespace stress
