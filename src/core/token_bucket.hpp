// A token bucket as the generic cell rate algorithm (GCRA): `n` permits per `per`, up to `burst`
// at once. Its whole state is one time, the theoretical arrival time (TAT): when the bucket
// would be full again if nothing more were granted. A grant of k permits moves it k intervals
// later; a grant fits when the new TAT is at most `burst` intervals ahead of now.
//
// Pure C++ (no Postgres header). Times are microseconds on any one clock -- the server's, read
// under the name's mutex -- so no client clock ever enters the state.
#pragma once

#include "core/arguments.hpp"
#include "core/cpp_only.hpp"

#include <cstdint>

namespace pgsem::core {

// The largest burst a bucket may have: the largest n.
inline constexpr std::int32_t kMaxBurst = 1000000;

// The longest a bucket may take to refill from empty -- `burst` permits at `n` per `per` -- is a
// day, a lease's longest. The TAT is then never more than a day (and a burst of microseconds of
// rounding) ahead of now, so no caller's rule can hold a name back for longer, and a row goes
// idle, and may be removed, a day after its last grant at most.
inline constexpr std::int64_t kMaxBucketRefillMicros = kMicrosPerDay;

// Whether a bucket of `burst` at `n` per `per` refills within kMaxBucketRefillMicros: burst * per
// / n, exactly (valid arguments: every product stays far inside 64 bits).
bool bucket_refill_within_limit(std::int64_t per, std::int32_t n, std::int32_t burst) noexcept;

// The time one permit takes to come back: per / n, rounded up to a whole microsecond, so that a
// rate that does not divide evenly admits a little less than n per `per`, never more. At least 1:
// a bucket refills at most a million permits a second. `per` and `n` are valid (positive).
std::int64_t bucket_interval(std::int64_t per, std::int32_t n) noexcept;

struct BucketDecision {
    bool granted;
    // Granted: the TAT to store. Refused: unchanged.
    std::int64_t tat;
    // Refused: the first time at which the same request fits, if nobody else is granted first.
    std::int64_t fits_at;
};

// Whether `permits` fit at `now` in a bucket whose TAT is `tat` (0, or anything at or before now:
// full), with `interval` per permit and room for `burst`. permits <= burst, interval <= a day
// and burst <= kMaxBurst keep every sum far inside 64 bits.
BucketDecision bucket_decide(std::int64_t now, std::int64_t tat, std::int64_t interval,
                             std::int32_t burst, std::int32_t permits) noexcept;

// The permits a bucket could grant at `now` (0 up to burst).
std::int32_t bucket_available(std::int64_t now, std::int64_t tat, std::int64_t interval,
                              std::int32_t burst) noexcept;

}  // namespace pgsem::core
