#include "core/token_bucket.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace pgsem::core;

constexpr std::int64_t kSecond = 1000000;

TEST(BucketInterval, PerOverNRoundedUp) {
    EXPECT_EQ(bucket_interval(kSecond, 200), 5000);
    EXPECT_EQ(bucket_interval(60 * kSecond, 100000), 600);
    // 1 s / 3 is 333,333.33 us: rounded up, three permits take a little more than a second.
    EXPECT_EQ(bucket_interval(kSecond, 3), 333334);
    // Faster than one permit a microsecond: one a microsecond.
    EXPECT_EQ(bucket_interval(1000, 1000000), 1);
}

TEST(BucketRefill, AtMostADayFromEmpty) {
    constexpr std::int64_t kDay = 86400 * kSecond;
    // burst = n: the window itself, whatever n (per / n need not divide evenly).
    EXPECT_TRUE(bucket_refill_within_limit(kDay, 7, 7));
    EXPECT_TRUE(bucket_refill_within_limit(kDay, 1000000, 1000000));
    // A burst of 24 at one per hour refills in a day exactly; 25 takes an hour more.
    EXPECT_TRUE(bucket_refill_within_limit(3600 * kSecond, 1, 24));
    EXPECT_FALSE(bucket_refill_within_limit(3600 * kSecond, 1, 25));
    // The review's poisoning rule: 1 per day with a burst of a million.
    EXPECT_FALSE(bucket_refill_within_limit(kDay, 1, 1000000));
    EXPECT_TRUE(bucket_refill_within_limit(kSecond, 1, 86400));
    EXPECT_FALSE(bucket_refill_within_limit(kSecond, 1, 86401));
}

TEST(BucketDecide, AFullBucketGrantsItsBurstAtOnceThenOneAnInterval) {
    const std::int64_t interval = 100;
    std::int64_t tat = 0;
    const std::int64_t now = 50 * kSecond;
    for (int i = 0; i < 5; ++i) {
        const BucketDecision d = bucket_decide(now, tat, interval, 5, 1);
        ASSERT_TRUE(d.granted) << i;
        tat = d.tat;
    }
    const BucketDecision sixth = bucket_decide(now, tat, interval, 5, 1);
    EXPECT_FALSE(sixth.granted);
    EXPECT_EQ(sixth.tat, tat);
    EXPECT_EQ(sixth.fits_at, now + interval);
    EXPECT_FALSE(bucket_decide(now + interval - 1, tat, interval, 5, 1).granted);
    EXPECT_TRUE(bucket_decide(now + interval, tat, interval, 5, 1).granted);
}

TEST(BucketDecide, WeightedGrantsAreWholeAndWaitForAllTheirPermits) {
    const std::int64_t interval = 10;
    const BucketDecision first = bucket_decide(1000, 0, interval, 4, 3);
    ASSERT_TRUE(first.granted);
    EXPECT_EQ(first.tat, 1030);
    // One permit is left: a request for 3 waits until two more came back.
    const BucketDecision three = bucket_decide(1000, first.tat, interval, 4, 3);
    EXPECT_FALSE(three.granted);
    EXPECT_EQ(three.fits_at, 1020);
    EXPECT_TRUE(bucket_decide(1000, first.tat, interval, 4, 1).granted);
    EXPECT_TRUE(bucket_decide(1020, first.tat, interval, 4, 3).granted);
}

TEST(BucketDecide, AnOldStateIsAFullBucket) {
    // A TAT long past is no credit beyond the burst.
    const BucketDecision d = bucket_decide(10 * kSecond, 1, 1000, 2, 2);
    ASSERT_TRUE(d.granted);
    EXPECT_EQ(d.tat, 10 * kSecond + 2000);
    EXPECT_FALSE(bucket_decide(10 * kSecond, d.tat, 1000, 2, 1).granted);
}

TEST(BucketDecide, AStateBeyondAnyRuleCountsAsADayAhead) {
    // A TAT no rule can set (a row edited by hand, up to 'infinity'): refused, and told to come
    // back within a day and the request's own intervals, with no overflow.
    constexpr std::int64_t kNow = 10 * kSecond;
    for (const std::int64_t tat : {INT64_MAX, kNow + 2 * kMaxBucketRefillMicros}) {
        const BucketDecision d = bucket_decide(kNow, tat, 1000, 2, 1);
        EXPECT_FALSE(d.granted);
        EXPECT_EQ(d.fits_at, kNow + kMaxBucketRefillMicros + 1000 - 2 * 1000);
        EXPECT_EQ(bucket_available(kNow, tat, 1000, 2), 0);
    }
    EXPECT_TRUE(bucket_decide(kNow, INT64_MIN, 1000, 2, 1).granted);  // '-infinity': full
    EXPECT_EQ(bucket_available(kNow, INT64_MIN, 1000, 2), 2);
}

// Under any sequence of requests, no span of time t holds more than burst + t / interval
// permits: a simulated stream of requests at random moments, checked over every span.
TEST(BucketDecide, NeverMoreThanBurstPlusTheRateOverAnySpan) {
    const std::int64_t interval = 7;
    const std::int32_t burst = 3;
    std::int64_t tat = 0;
    std::uint64_t seed = 42;
    std::vector<std::int64_t> grants;  // one entry per permit
    std::int64_t now = 1000;
    for (int i = 0; i < 20000; ++i) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        now += static_cast<std::int64_t>((seed >> 33) % 6);
        const auto permits = static_cast<std::int32_t>(1 + (seed >> 40) % burst);
        const BucketDecision d = bucket_decide(now, tat, interval, burst, permits);
        if (!d.granted) {
            EXPECT_GT(d.fits_at, now);
            continue;
        }
        tat = d.tat;
        for (int p = 0; p < permits; ++p) grants.push_back(now);
    }
    ASSERT_GT(grants.size(), 2000U);
    std::size_t begin = 0;
    for (std::size_t end = 0; end < grants.size(); ++end) {
        // Every permit in [grants[begin], grants[end]]: the span is grants[end] - grants[begin].
        while (grants[end] - grants[begin] > 200) ++begin;
        const std::int64_t span = grants[end] - grants[begin];
        EXPECT_LE(static_cast<std::int64_t>(end - begin + 1), burst + span / interval)
            << "at " << grants[end];
    }
}

TEST(BucketAvailable, CountsWhatWouldBeGrantedNow) {
    EXPECT_EQ(bucket_available(1000, 0, 10, 4), 4);
    EXPECT_EQ(bucket_available(1000, 1030, 10, 4), 1);
    EXPECT_EQ(bucket_available(1000, 1031, 10, 4), 0);  // 3.1 permits out: not yet 1 back
    EXPECT_EQ(bucket_available(1000, 5000, 10, 4), 0);
    for (std::int32_t p = 1; p <= 4; ++p)
        EXPECT_EQ(bucket_decide(1000, 1030, 10, 4, p).granted,
                  p <= bucket_available(1000, 1030, 10, 4));
}

}  // namespace
