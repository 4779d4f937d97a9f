// What the counters of one semaphore or rate limit add up (sem_stats): a tally of claims by how
// they ended, merged from each backend's events into the name's shared counters.
//
// Pure C++ (no Postgres header): the shared memory (src/pg/store/name_stats.hpp) holds a tally per
// name as atomics and adds a delta built here to it; the glue decides what each event was.
#pragma once

#include "core/cpp_only.hpp"

#include <cstdint>

namespace pgsem::core {

// One claim's answer, as the counters tell them apart.
enum class ClaimOutcome : std::uint8_t {
    kGranted,           // granted at once
    kGrantedAfterWait,  // granted after waiting in line
    kRefused,           // NULL (false) at once: no room and no wait asked for, or others waiting
    kTimedOut,          // NULL after waiting its whole wait
    kWaitEnded,         // a wait ended by an error: cancel, terminate, lock_timeout, deadlock
};

struct ClaimTally {
    std::uint64_t granted = 0;
    std::uint64_t granted_after_wait = 0;
    std::uint64_t refused = 0;
    std::uint64_t timed_out = 0;
    std::uint64_t wait_errors = 0;
    std::uint64_t released = 0;         // claims released (a set's counts once on each name)
    std::uint64_t expired_permits = 0;  // lease permits recorded as timed out after their lease
    std::uint64_t renewed = 0;          // leases renewed
    std::uint64_t permits_granted = 0;  // permits of the claims granted
    std::uint64_t wait_micros = 0;      // total time waited in line, by waits that ended
    std::uint64_t wait_max_micros = 0;  // the longest of those waits
    std::uint64_t held_micros = 0;      // total time held by claims released
};

// How long a name has been paused (sem_pause), as changes of its pause arrive: the time already
// paused, and the pause in force since `from` until `until` (0: none). Times in microseconds on
// the server's clock.
struct PauseSpan {
    std::int64_t from = 0;
    std::int64_t until = 0;
    std::uint64_t paused_micros = 0;  // paused before `from`
};

// The pause in force from `now` on ends at `until` (0: lifted): the span in force so far counts.
void pause_change(PauseSpan &span, std::int64_t now, std::int64_t until) noexcept;

// All the time paused up to `now`, the pause in force included as far as it has run.
std::uint64_t paused_by(const PauseSpan &span, std::int64_t now) noexcept;

// The tally of one claim's answer: `permits` granted (when granted), `waited` microseconds in line
// (0 when it did not wait; negative counts as 0).
ClaimTally tally_answer(ClaimOutcome outcome, std::int32_t permits, std::int64_t waited) noexcept;

// The tally of a claim's end: released after `held` microseconds (negative counts as 0).
ClaimTally tally_release(std::int64_t held) noexcept;

// Adds `delta` to `total`: counts and times add up, the longest wait is the longer one; a count
// that would pass 2^64 - 1 stays there.
void merge(ClaimTally &total, const ClaimTally &delta) noexcept;

// Whether a tally counts nothing (a delta not worth a trip to shared memory).
bool empty(const ClaimTally &tally) noexcept;

}  // namespace pgsem::core
