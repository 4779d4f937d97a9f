// Validation of the arguments every SQL function receives: semaphore names, slot counts, leases.
//
// Pure C++ (no Postgres header). The glue maps each Problem to a SQLSTATE and a message
// (src/pg/base/argument_checks.cpp); the limits here are the ones the README documents.
#pragma once

#include "core/cpp_only.hpp"

#include <cstddef>
#include <cstdint>

namespace pgsem::core {

// Names are compared bytewise and live in a btree key: keep them short enough never to be
// TOASTed or to approach the btree's per-entry size limit.
inline constexpr std::size_t kMaxNameBytes = 256;

// A request key (sem_claim's retry-safe claims) is compared bytewise and kept in a btree key, as a
// name is.
inline constexpr std::size_t kMaxRequestKeyBytes = 256;

// Far above any real pool, low enough that slot numbers, probes and counts stay small integers.
inline constexpr std::int64_t kMaxN = 1000000;

// Permits of one claim: each is a slot taken under its own mutex, all of them held at once while
// the claim is made (and, for a transaction or session claim, a slot-holder lock each for as long
// as it holds), so a claim's permits take that many entries of the server's lock table. A
// thousand is far above any weight a limiter gives one job, and well inside a default lock table.
inline constexpr std::int64_t kMaxPermits = 1000;

inline constexpr std::int64_t kMicrosPerMilli = 1000;
inline constexpr std::int64_t kMicrosPerSecond = 1000 * kMicrosPerMilli;
inline constexpr std::int64_t kMicrosPerDay = 86400 * kMicrosPerSecond;

// A lease shorter than a millisecond expires before the caller can use it; one longer than a day
// keeps a crashed holder's slot for more than a day. Long jobs renew instead.
inline constexpr std::int64_t kMinLeaseMicros = kMicrosPerMilli;
inline constexpr std::int64_t kMaxLeaseMicros = kMicrosPerDay;

// How long a claim may wait for a slot: 0 (answer at once) up to a day, like a lease.
inline constexpr std::int64_t kMaxWaitMicros = kMicrosPerDay;

enum class Problem : std::uint8_t {
    kNone,
    kNull,         // SQL NULL where a value is required
    kEmpty,        // empty name
    kTooLong,      // name longer than kMaxNameBytes, request key than kMaxRequestKeyBytes
    kNotPositive,  // n <= 0, lease <= 0
    kNegative,     // wait < 0
    kTooLarge,     // n > kMaxN, lease > kMaxLeaseMicros, wait > kMaxWaitMicros
    kTooShort,     // 0 < lease < kMinLeaseMicros
    kAboveN,       // permits > n: a claim that could never be granted
};

// An SQL interval as Postgres stores it. Months count as 30 days, as in interval comparison.
struct Interval {
    std::int32_t months;
    std::int32_t days;
    std::int64_t micros;
};

struct LeaseCheck {
    Problem problem;
    std::int64_t micros;  // the lease (or wait) length, valid when problem == kNone
};

Problem check_name(bool is_null, std::size_t bytes) noexcept;
// NULL is no key at all (kNone); an empty key is a mistake, not a key.
Problem check_request_key(bool is_null, std::size_t bytes) noexcept;
Problem check_n(bool is_null, std::int64_t n) noexcept;
// For a valid n: permits in [1, min(n, kMaxPermits)].
Problem check_permits(bool is_null, std::int64_t permits, std::int64_t n) noexcept;
LeaseCheck check_lease(bool is_null, Interval lease) noexcept;
LeaseCheck check_wait(bool is_null, Interval wait) noexcept;

// An interval's length in microseconds, saturating at the int64 range.
std::int64_t interval_micros(Interval interval) noexcept;

}  // namespace pgsem::core
