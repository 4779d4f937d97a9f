// The waiting clients' part of the shared state: the semaphores they wait in line for, what they
// count, and their record of every call that could wait or pass a waiter. See main.cpp for what
// the run proves.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "checker.hpp"

namespace stress {

inline constexpr const char *kLineName = "stress.line";             // every caller uses n = 2
inline constexpr const char *kLineMixedName = "stress.line.mixed";  // callers use n = 1 or n = 3
inline constexpr int kLineN = 2;
inline constexpr int kLineMixedSmallN = 1;
inline constexpr int kLineMixedLargeN = 3;
// Longer than any lease claim's wait plus its hold: the server's lease, which ends no earlier than
// the call's send plus the lease, then outlasts every hold.
inline constexpr const char *kLineLease = "5 seconds";
inline constexpr auto kLineLeaseLength = std::chrono::seconds(5);
inline constexpr int kMinLineHoldMillis = 5;
inline constexpr int kMaxLineHoldMillis = 40;
// The order of the line can only be judged for waiters that wait longer than twice the margin
// below: now and then a holder of slot 0 of stress.line.mixed (an n = 1 caller) takes its time,
// and the line backs up behind the next n = 1 waiter, which nobody may pass.
inline constexpr int kSlowHoldPercent = 20;
inline constexpr int kMinSlowHoldMillis = 400;
inline constexpr int kMaxSlowHoldMillis = 800;
// A wait-0 caller refused tries again a few times, as one that polls instead of waiting would:
// its calls then fall into the long lines too, where they must be refused.
inline constexpr int kBargeAttempts = 6;
// Bounds how long a call takes to reach the server and its answer to come back, scheduling on
// a loaded machine included (see LineVerdict).
inline constexpr long long kFifoMarginNanos = 150'000'000;
inline constexpr long long kClockSlackNanos = 5'000'000;  // server and client clocks, rounding
inline constexpr const char *kLineClientApp = "pgsem_stress waiter";
inline constexpr const char *kStressNamesSql =
    "('stress.plain', 'stress.mixed', 'stress.line', 'stress.line.mixed')";

enum class Kind : unsigned char { kLease, kTransaction, kSession };
inline constexpr std::array<const char *, 3> kKindNames{"lease", "transaction", "session"};

// By Kind.
using KindCounts = std::array<std::atomic<long>, 3>;

struct LineStats {
    KindCounts granted{};
    KindCounts timed_out{};  // NULL after waiting
    KindCounts cancelled{};  // 57014 after the killer's pg_cancel_backend
    KindCounts killed{};     // connection lost after the killer's pg_terminate_backend
    KindCounts timeouts{};   // the transaction's own lock_timeout or statement_timeout struck
    std::atomic<long> barges_refused{0};  // wait-0 calls answered NULL
    std::atomic<long> barges_granted{0};
    std::atomic<long> cancels_sent{0};  // by the killer, at clients waiting in line
    std::atomic<long> waiter_kills_sent{0};
    std::atomic<long> session_kills_sent{0};  // holders of session claims terminated
    std::atomic<long> kills_seen{0};          // connection losses after a call, traced to a kill
    std::atomic<long> cancels_late{0};        // the call was done when the cancel came
    std::atomic<long> kept_after_error{0};    // claims found after a failed call or a rollback
    std::atomic<long> serialization{0};       // 40001 in serializable transactions
    std::atomic<long long> last_done{0};      // nanoseconds since the start
};

class CallRecord {
  public:
    void add(Call call) {
        const std::lock_guard<std::mutex> lock(mutex_);
        calls_.push_back(std::move(call));
    }
    std::vector<Call> all() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return calls_;
    }

  private:
    std::mutex mutex_;
    std::vector<Call> calls_;
};

}  // namespace stress
