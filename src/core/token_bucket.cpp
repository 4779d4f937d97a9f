#include "core/token_bucket.hpp"

#include <algorithm>

namespace pgsem::core {

std::int64_t bucket_interval(std::int64_t per, std::int32_t n) noexcept {
    return std::max<std::int64_t>((per + n - 1) / n, 1);
}

bool bucket_refill_within_limit(std::int64_t per, std::int32_t n, std::int32_t burst) noexcept {
    return burst * per <= n * kMaxBucketRefillMicros;
}

namespace {

// No rule sets a TAT more than a refill ahead (bucket_refill_within_limit); one further ahead
// (a row edited by hand, up to 'infinity') counts as that, and no sum below overflows.
std::int64_t bounded_tat(std::int64_t now, std::int64_t tat) noexcept {
    return std::min(tat, now + kMaxBucketRefillMicros);
}

}  // namespace

BucketDecision bucket_decide(std::int64_t now, std::int64_t tat, std::int64_t interval,
                             std::int32_t burst, std::int32_t permits) noexcept {
    tat = bounded_tat(now, tat);
    const std::int64_t from = std::max(tat, now);
    const std::int64_t next_tat = from + permits * interval;
    // The request fits once its TAT is no more than `burst` intervals ahead.
    const std::int64_t fits_at = next_tat - burst * interval;
    if (fits_at <= now) return BucketDecision{true, next_tat, now};
    return BucketDecision{false, tat, fits_at};
}

std::int32_t bucket_available(std::int64_t now, std::int64_t tat, std::int64_t interval,
                              std::int32_t burst) noexcept {
    tat = bounded_tat(now, tat);
    if (tat <= now) return burst;
    const std::int64_t behind = (tat - now + interval - 1) / interval;  // permits still out
    return static_cast<std::int32_t>(std::max<std::int64_t>(burst - behind, 0));
}

}  // namespace pgsem::core
