#include "core/slot_choice.hpp"

#include <set>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace pgsem::core;

// The glue keeps these objects alive across calls into Postgres: they must need no destructor.
static_assert(std::is_trivially_destructible_v<LowestFreeSlot>);
static_assert(std::is_trivially_destructible_v<ProbeSequence>);

constexpr std::int64_t kNow = 1'000'000'000;

ClaimRowState row(bool ended, std::int64_t expires_at, bool inserting = false,
                  bool changing = false) {
    return {ended, expires_at, inserting, changing};
}

TEST(Classify, EndedRowsAreVacant) {
    EXPECT_EQ(classify(row(true, kNow + 10), kNow), Occupancy::kVacant);
    EXPECT_EQ(classify(row(true, kNow - 10), kNow), Occupancy::kVacant);
}

TEST(Classify, UnexpiredRowsAreHeld) {
    EXPECT_EQ(classify(row(false, kNow + 1), kNow), Occupancy::kHeld);
}

TEST(Classify, ExpiryIsInclusive) {
    EXPECT_EQ(classify(row(false, kNow), kNow), Occupancy::kExpired);
    EXPECT_EQ(classify(row(false, kNow - 1), kNow), Occupancy::kExpired);
}

TEST(Classify, RowsOfOpenTransactionsAreHeldEvenWhenExpired) {
    EXPECT_EQ(classify(row(false, kNow - 1, true, false), kNow), Occupancy::kHeld);
    EXPECT_EQ(classify(row(false, kNow - 1, false, true), kNow), Occupancy::kHeld);
}

TEST(StatusOf, EndedBeforeAnythingElse) {
    EXPECT_EQ(status_of(row(true, kNow + 10, true, true), kNow), ClaimStatus::kEnded);
}

TEST(StatusOf, UncommittedClaimsAreNeitherLiveNorExpired) {
    EXPECT_EQ(status_of(row(false, kNow + 10, true), kNow), ClaimStatus::kUncommitted);
    EXPECT_EQ(status_of(row(false, kNow - 10, true), kNow), ClaimStatus::kUncommitted);
}

TEST(StatusOf, LeaseDecidesTheRest) {
    EXPECT_EQ(status_of(row(false, kNow + 1), kNow), ClaimStatus::kLive);
    EXPECT_EQ(status_of(row(false, kNow), kNow), ClaimStatus::kExpired);
    // A change in progress (a renewal, a release) does not change what the claim is yet.
    EXPECT_EQ(status_of(row(false, kNow + 1, false, true), kNow), ClaimStatus::kLive);
}

// Feeds rows (slot, held) in order and returns the answer.
int lowest(int n, const std::vector<std::pair<int, bool>> &rows, int first = 0) {
    LowestFreeSlot finder(n, first);
    for (const auto &[slot, held] : rows) {
        if (auto found = finder.observe(slot, held)) return *found;
    }
    auto found = finder.finish();
    return found ? *found : -1;
}

TEST(LowestFreeSlot, EmptySemaphoreGivesSlotZero) {
    EXPECT_EQ(lowest(4, {}), 0);
}

TEST(LowestFreeSlot, FindsTheFirstGap) {
    EXPECT_EQ(lowest(4, {{0, true}, {1, true}, {3, true}}), 2);
    EXPECT_EQ(lowest(4, {{1, true}, {2, true}}), 0);
}

TEST(LowestFreeSlot, FullSemaphoreGivesNothing) {
    EXPECT_EQ(lowest(3, {{0, true}, {1, true}, {2, true}}), -1);
    EXPECT_EQ(lowest(1, {{0, true}}), -1);
}

TEST(LowestFreeSlot, ExpiredRowsLeaveTheirSlotFree) {
    EXPECT_EQ(lowest(3, {{0, true}, {1, false}, {2, true}}), 1);
    EXPECT_EQ(lowest(2, {{0, false}, {1, true}}), 0);
}

TEST(LowestFreeSlot, AnyHeldVersionHoldsTheSlot) {
    // An expired row and a held row on one slot: the slot is held.
    EXPECT_EQ(lowest(3, {{0, false}, {0, true}, {1, true}}), 2);
    EXPECT_EQ(lowest(3, {{0, true}, {0, false}, {1, true}}), 2);
}

TEST(LowestFreeSlot, StartsAtFirst) {
    EXPECT_EQ(lowest(4, {{2, true}}, 2), 3);
    EXPECT_EQ(lowest(4, {{0, true}}, 1), 1);
    EXPECT_EQ(lowest(4, {{3, true}}, 3), -1);
}

TEST(LowestFreeSlot, RowsBeyondNAreIgnored) {
    // A caller with n = 2 on a semaphore others use with n = 4.
    EXPECT_EQ(lowest(2, {{0, true}, {1, true}, {2, false}}), -1);
}

TEST(ProbeSequence, VisitsEverySlotOnceBeforeRepeating) {
    for (int n : {1, 2, 3, 4, 10, 64, 65, 97, 100, 1000, 10000}) {
        for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xdeadbeefcafef00dULL, ~0ULL}) {
            ProbeSequence probes(n, seed);
            std::set<int> seen;
            for (int i = 0; i < n; ++i) {
                const int slot = probes.next();
                ASSERT_GE(slot, 0);
                ASSERT_LT(slot, n);
                seen.insert(slot);
            }
            EXPECT_EQ(static_cast<int>(seen.size()), n) << "n=" << n << " seed=" << seed;
        }
    }
}

TEST(ProbeSequence, DifferentSeedsStartApart) {
    std::set<int> starts;
    for (std::uint64_t seed = 0; seed < 64; ++seed)
        starts.insert(ProbeSequence(10000, seed * 0x9e3779b97f4a7c15ULL).next());
    EXPECT_GT(starts.size(), 50U);
}

TEST(LeaseEnd, AddsAndSaturates) {
    EXPECT_EQ(lease_end(100, 50), 150);
    EXPECT_EQ(lease_end(INT64_MAX - 10, 50), INT64_MAX);
}

TEST(Prunable, RespectsRetention) {
    const std::int64_t hour = 3600LL * 1000000;
    // Released two hours ago, retention one hour: prunable.
    EXPECT_TRUE(prunable(true, kNow - 2 * hour, kNow, kNow, hour));
    // Released half an hour ago: kept.
    EXPECT_FALSE(prunable(true, kNow - hour / 2, kNow, kNow, hour));
    // Never released, lease ran out two hours ago: prunable.
    EXPECT_TRUE(prunable(false, 0, kNow - 2 * hour, kNow, hour));
    // Still held, however old the claim: never.
    EXPECT_FALSE(prunable(false, 0, kNow + hour, kNow, 0));
    // Negative retention keeps everything.
    EXPECT_FALSE(prunable(true, 0, 0, kNow, -1));
    // Zero retention prunes anything that has ended.
    EXPECT_TRUE(prunable(true, kNow, kNow, kNow, 0));
}

}  // namespace
