#include "core/deadlock.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace pgsem::core;

constexpr WaitKind R = WaitKind::kRunning;
constexpr WaitKind All = WaitKind::kAll;
constexpr WaitKind Any = WaitKind::kAny;

bool stuck(const std::vector<WaitKind> &kinds, const std::vector<WaitEdge> &edges, std::size_t me) {
    return deadlocked(kinds.data(), kinds.size(), edges.data(), edges.size(), me);
}

TEST(Deadlock, TwoFirstWaitersHoldingEachOthersOnlySlot) {
    // 0 holds x and waits for y; 1 holds y and waits for x (n = 1 each).
    EXPECT_TRUE(stuck({Any, Any}, {{0, 1}, {1, 0}}, 0));
    EXPECT_TRUE(stuck({Any, Any}, {{0, 1}, {1, 0}}, 1));
}

TEST(Deadlock, AnotherHolderWhoCanLetGoBreaksIt) {
    // As above, but x has a second holder (2) who is running: 1 will get x, then release y.
    EXPECT_FALSE(stuck({Any, Any, R}, {{0, 1}, {1, 0}, {1, 2}}, 0));
    EXPECT_FALSE(stuck({Any, Any, R}, {{0, 1}, {1, 0}, {1, 2}}, 1));
}

TEST(Deadlock, ASecondHolderStuckInTheSameCycleDoesNot) {
    // x held by 0 and 2, y held by 1; 0 and 2 wait for y, 1 waits for x: all stuck.
    EXPECT_TRUE(stuck({Any, Any, Any}, {{0, 1}, {2, 1}, {1, 0}, {1, 2}}, 1));
}

TEST(Deadlock, WaitingForItsOwnSlot) {
    EXPECT_TRUE(stuck({Any}, {{0, 0}}, 0));
}

TEST(Deadlock, NoHolderMeansASlotIsFree) {
    EXPECT_FALSE(stuck({Any}, {}, 0));
}

TEST(Deadlock, LockWaitNeedsEveryBlocker) {
    // 0 (a lock waiter) is blocked by a running 1 and by 2, who waits for a slot only 0 holds.
    EXPECT_TRUE(stuck({All, R, Any}, {{0, 1}, {0, 2}, {2, 0}}, 0));
    EXPECT_TRUE(stuck({All, R, Any}, {{0, 1}, {0, 2}, {2, 0}}, 2));
    EXPECT_FALSE(stuck({All, R, Any}, {{0, 1}, {2, 0}}, 0));  // without the second blocker
}

TEST(Deadlock, CycleThroughTheLineBehindAFirstWaiter) {
    // 0: first waiter of y, y held by 1. 1: first waiter of x, x held by 2. 2: in line for y,
    // behind 0 (a lock wait on the line). Every one is stuck.
    EXPECT_TRUE(stuck({Any, Any, All}, {{0, 1}, {1, 2}, {2, 0}}, 0));
    // If 1 could also get a slot from a running holder 3, the knot unties.
    EXPECT_FALSE(stuck({Any, Any, All, R}, {{0, 1}, {1, 2}, {1, 3}, {2, 0}}, 0));
}

TEST(Deadlock, RunningNodesAreNeverStuck) {
    EXPECT_FALSE(stuck({R, Any}, {{1, 0}}, 0));
    EXPECT_FALSE(stuck({R, Any}, {{1, 0}}, 1));
}

bool stuck_lacking(const std::vector<WaitKind> &kinds, const std::vector<std::int32_t> &lacks,
                   const std::vector<WaitEdge> &edges, std::size_t me) {
    return deadlocked(kinds.data(), lacks.data(), kinds.size(), edges.data(), edges.size(), me);
}

TEST(Deadlock, AClaimOfSeveralPermitsNeedsThatManySlotsToFree) {
    // 0 waits for 2 more slots of a semaphore whose held slots are held by 1 (running) and 2
    // (waiting for a lock only 0 holds): only one slot can free, so 0 and 2 are stuck.
    EXPECT_TRUE(stuck_lacking({Any, R, All}, {2, 0, 0}, {{0, 1}, {0, 2}, {2, 0}}, 0));
    EXPECT_TRUE(stuck_lacking({Any, R, All}, {2, 0, 0}, {{0, 1}, {0, 2}, {2, 0}}, 2));
    // Lacking one slot, the running holder is enough.
    EXPECT_FALSE(stuck_lacking({Any, R, All}, {1, 0, 0}, {{0, 1}, {0, 2}, {2, 0}}, 0));
    // Two slots held by the one running holder: two edges, both can free.
    EXPECT_FALSE(stuck_lacking({Any, R, All}, {2, 0, 0}, {{0, 1}, {0, 1}, {0, 2}, {2, 0}}, 0));
}

TEST(Deadlock, BelowOneCountsAsOne) {
    EXPECT_FALSE(stuck_lacking({Any, R}, {0, 0}, {{0, 1}}, 0));
    EXPECT_TRUE(stuck_lacking({Any, Any}, {-3, 0}, {{0, 1}, {1, 0}}, 0));
}

TEST(Deadlock, OutOfRangeIsNotStuck) {
    EXPECT_FALSE(stuck({Any}, {{0, 5}, {-1, 0}}, 3));
    // Edges naming unknown nodes are ignored: node 0 has no (known) holder.
    EXPECT_FALSE(stuck({Any}, {{0, 5}}, 0));
}

}  // namespace
