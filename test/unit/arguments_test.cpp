#include "core/arguments.hpp"

#include <gtest/gtest.h>

namespace {

using namespace pgsem::core;

TEST(CheckName, NullEmptyAndLength) {
    EXPECT_EQ(check_name(true, 5), Problem::kNull);
    EXPECT_EQ(check_name(false, 0), Problem::kEmpty);
    EXPECT_EQ(check_name(false, 1), Problem::kNone);
    EXPECT_EQ(check_name(false, kMaxNameBytes), Problem::kNone);
    EXPECT_EQ(check_name(false, kMaxNameBytes + 1), Problem::kTooLong);
}

TEST(CheckRequestKey, NullIsNoKeyEmptyAndLength) {
    EXPECT_EQ(check_request_key(true, 0), Problem::kNone);
    EXPECT_EQ(check_request_key(false, 0), Problem::kEmpty);
    EXPECT_EQ(check_request_key(false, 1), Problem::kNone);
    EXPECT_EQ(check_request_key(false, kMaxRequestKeyBytes), Problem::kNone);
    EXPECT_EQ(check_request_key(false, kMaxRequestKeyBytes + 1), Problem::kTooLong);
}

TEST(CheckN, Bounds) {
    EXPECT_EQ(check_n(true, 4), Problem::kNull);
    EXPECT_EQ(check_n(false, 0), Problem::kNotPositive);
    EXPECT_EQ(check_n(false, -1), Problem::kNotPositive);
    EXPECT_EQ(check_n(false, INT32_MIN), Problem::kNotPositive);
    EXPECT_EQ(check_n(false, 1), Problem::kNone);
    EXPECT_EQ(check_n(false, kMaxN), Problem::kNone);
    EXPECT_EQ(check_n(false, kMaxN + 1), Problem::kTooLarge);
    EXPECT_EQ(check_n(false, INT32_MAX), Problem::kTooLarge);
}

TEST(CheckPermits, OneUpToNAndTheLimit) {
    EXPECT_EQ(check_permits(true, 1, 4), Problem::kNull);
    EXPECT_EQ(check_permits(false, 0, 4), Problem::kNotPositive);
    EXPECT_EQ(check_permits(false, -1, 4), Problem::kNotPositive);
    EXPECT_EQ(check_permits(false, INT32_MIN, 4), Problem::kNotPositive);
    EXPECT_EQ(check_permits(false, 1, 1), Problem::kNone);
    EXPECT_EQ(check_permits(false, 4, 4), Problem::kNone);
    EXPECT_EQ(check_permits(false, 5, 4), Problem::kAboveN);
    EXPECT_EQ(check_permits(false, kMaxPermits, kMaxN), Problem::kNone);
    EXPECT_EQ(check_permits(false, kMaxPermits + 1, kMaxN), Problem::kTooLarge);
    // Above both: the limit is what the caller can do nothing about, so it is named first.
    EXPECT_EQ(check_permits(false, INT32_MAX, 4), Problem::kTooLarge);
}

TEST(CheckLease, NullZeroNegative) {
    EXPECT_EQ(check_lease(true, {0, 0, kMicrosPerSecond}).problem, Problem::kNull);
    EXPECT_EQ(check_lease(false, {0, 0, 0}).problem, Problem::kNotPositive);
    EXPECT_EQ(check_lease(false, {0, 0, -1}).problem, Problem::kNotPositive);
    EXPECT_EQ(check_lease(false, {0, -1, 0}).problem, Problem::kNotPositive);
    EXPECT_EQ(check_lease(false, {-1, 0, 0}).problem, Problem::kNotPositive);
}

TEST(CheckLease, ShortAndLongLimits) {
    EXPECT_EQ(check_lease(false, {0, 0, kMinLeaseMicros - 1}).problem, Problem::kTooShort);
    const LeaseCheck min = check_lease(false, {0, 0, kMinLeaseMicros});
    EXPECT_EQ(min.problem, Problem::kNone);
    EXPECT_EQ(min.micros, kMinLeaseMicros);
    const LeaseCheck day = check_lease(false, {0, 1, 0});
    EXPECT_EQ(day.problem, Problem::kNone);
    EXPECT_EQ(day.micros, kMicrosPerDay);
    EXPECT_EQ(check_lease(false, {0, 1, 1}).problem, Problem::kTooLarge);
    EXPECT_EQ(check_lease(false, {1, 0, 0}).problem, Problem::kTooLarge);
}

TEST(CheckLease, MixedSignsAddUpLikePostgresIntervals) {
    // '1 day -1 hour' is 23 hours.
    const LeaseCheck mixed = check_lease(false, {0, 1, -3600 * kMicrosPerSecond});
    EXPECT_EQ(mixed.problem, Problem::kNone);
    EXPECT_EQ(mixed.micros, 23 * 3600 * kMicrosPerSecond);
    // '1 mon -29 days 23:00' is 30 - 29 days + 23 h = 47 h: too long.
    EXPECT_EQ(check_lease(false, {1, -29, 23 * 3600 * kMicrosPerSecond}).problem,
              Problem::kTooLarge);
}

TEST(CheckLease, ExtremesDoNotOverflow) {
    EXPECT_EQ(check_lease(false, {INT32_MAX, INT32_MAX, INT64_MAX}).problem, Problem::kTooLarge);
    EXPECT_EQ(check_lease(false, {INT32_MIN, INT32_MIN, INT64_MIN}).problem, Problem::kNotPositive);
    // A time part alone far beyond a day.
    EXPECT_EQ(check_lease(false, {0, 0, INT64_MAX}).problem, Problem::kTooLarge);
}

}  // namespace

TEST(IntervalMicros, CountsMonthsAsThirtyDaysAndSaturates) {
    EXPECT_EQ(interval_micros(Interval{0, 0, 1500}), 1500);
    EXPECT_EQ(interval_micros(Interval{0, 1, 0}), kMicrosPerDay);
    EXPECT_EQ(interval_micros(Interval{1, 0, 0}), 30 * kMicrosPerDay);
    EXPECT_EQ(interval_micros(Interval{0, -2, 5}), -2 * kMicrosPerDay + 5);
    EXPECT_EQ(interval_micros(Interval{INT32_MAX, INT32_MAX, INT64_MAX}), INT64_MAX);
    EXPECT_EQ(interval_micros(Interval{INT32_MIN, INT32_MIN, INT64_MIN}), INT64_MIN);
}

TEST(CheckWait, ZeroUpToADay) {
    EXPECT_EQ(check_wait(true, {0, 0, 0}).problem, Problem::kNull);
    EXPECT_EQ(check_wait(false, {0, 0, 0}).problem, Problem::kNone);
    EXPECT_EQ(check_wait(false, {0, 0, 0}).micros, 0);
    EXPECT_EQ(check_wait(false, {0, 0, 1}).micros, 1);  // shorter than a lease may be
    EXPECT_EQ(check_wait(false, {0, 0, -1}).problem, Problem::kNegative);
    EXPECT_EQ(check_wait(false, {0, 1, 0}).micros, kMicrosPerDay);
    EXPECT_EQ(check_wait(false, {0, 1, 1}).problem, Problem::kTooLarge);
    EXPECT_EQ(check_wait(false, {INT32_MAX, INT32_MAX, INT64_MAX}).problem, Problem::kTooLarge);
    EXPECT_EQ(check_wait(false, {INT32_MIN, 0, 0}).problem, Problem::kNegative);
    // '1 day -1 hour' waits 23 hours.
    EXPECT_EQ(check_wait(false, {0, 1, -3600 * kMicrosPerSecond}).micros,
              23 * 3600 * kMicrosPerSecond);
}
