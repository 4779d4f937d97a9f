#include "core/arguments.hpp"

namespace pgsem::core {

Problem check_name(bool is_null, std::size_t bytes) noexcept {
    if (is_null) return Problem::kNull;
    if (bytes == 0) return Problem::kEmpty;
    if (bytes > kMaxNameBytes) return Problem::kTooLong;
    return Problem::kNone;
}

Problem check_request_key(bool is_null, std::size_t bytes) noexcept {
    if (is_null) return Problem::kNone;
    if (bytes == 0) return Problem::kEmpty;
    if (bytes > kMaxRequestKeyBytes) return Problem::kTooLong;
    return Problem::kNone;
}

namespace {

// 128 bits: months * 30 days * 86400e6 overflows 64 bits long before INT32_MAX months.
__int128 total_micros(Interval interval) noexcept {
    return static_cast<__int128>(interval.months) * 30 * kMicrosPerDay +
           static_cast<__int128>(interval.days) * kMicrosPerDay + interval.micros;
}

}  // namespace

Problem check_n(bool is_null, std::int64_t n) noexcept {
    if (is_null) return Problem::kNull;
    if (n <= 0) return Problem::kNotPositive;
    if (n > kMaxN) return Problem::kTooLarge;
    return Problem::kNone;
}

Problem check_permits(bool is_null, std::int64_t permits, std::int64_t n) noexcept {
    if (is_null) return Problem::kNull;
    if (permits <= 0) return Problem::kNotPositive;
    if (permits > kMaxPermits) return Problem::kTooLarge;
    if (permits > n) return Problem::kAboveN;
    return Problem::kNone;
}

std::int64_t interval_micros(Interval interval) noexcept {
    const __int128 total = total_micros(interval);
    if (total > INT64_MAX) return INT64_MAX;
    if (total < INT64_MIN) return INT64_MIN;
    return static_cast<std::int64_t>(total);
}

LeaseCheck check_lease(bool is_null, Interval lease) noexcept {
    if (is_null) return {Problem::kNull, 0};
    const __int128 total = total_micros(lease);
    if (total <= 0) return {Problem::kNotPositive, 0};
    if (total < kMinLeaseMicros) return {Problem::kTooShort, 0};
    if (total > kMaxLeaseMicros) return {Problem::kTooLarge, 0};
    return {Problem::kNone, static_cast<std::int64_t>(total)};
}

}  // namespace pgsem::core

namespace pgsem::core {

LeaseCheck check_wait(bool is_null, Interval wait) noexcept {
    if (is_null) return {Problem::kNull, 0};
    const __int128 total = total_micros(wait);
    if (total < 0) return {Problem::kNegative, 0};
    if (total > kMaxWaitMicros) return {Problem::kTooLarge, 0};
    return {Problem::kNone, static_cast<std::int64_t>(total)};
}

}  // namespace pgsem::core
