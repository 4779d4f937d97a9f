#include "core/claim_tally.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace pgsem::core {
namespace {

TEST(ClaimTally, AGrantAtOnceCountsItsPermitsAndNoWait) {
    const ClaimTally t = tally_answer(ClaimOutcome::kGranted, 3, 1234);
    EXPECT_EQ(t.granted, 1U);
    EXPECT_EQ(t.permits_granted, 3U);
    EXPECT_EQ(t.wait_micros, 0U);
    EXPECT_EQ(t.granted_after_wait + t.refused + t.timed_out + t.wait_errors, 0U);
}

TEST(ClaimTally, AGrantAfterAWaitCountsTheWait) {
    const ClaimTally t = tally_answer(ClaimOutcome::kGrantedAfterWait, 1, 5000);
    EXPECT_EQ(t.granted, 0U);
    EXPECT_EQ(t.granted_after_wait, 1U);
    EXPECT_EQ(t.permits_granted, 1U);
    EXPECT_EQ(t.wait_micros, 5000U);
    EXPECT_EQ(t.wait_max_micros, 5000U);
}

TEST(ClaimTally, RefusalsGrantNoPermitsAndTimeoutsKeepTheirWait) {
    const ClaimTally refused = tally_answer(ClaimOutcome::kRefused, 2, 0);
    EXPECT_EQ(refused.refused, 1U);
    EXPECT_EQ(refused.permits_granted, 0U);
    const ClaimTally timed_out = tally_answer(ClaimOutcome::kTimedOut, 2, 700);
    EXPECT_EQ(timed_out.timed_out, 1U);
    EXPECT_EQ(timed_out.permits_granted, 0U);
    EXPECT_EQ(timed_out.wait_micros, 700U);
    const ClaimTally ended = tally_answer(ClaimOutcome::kWaitEnded, 1, -5);
    EXPECT_EQ(ended.wait_errors, 1U);
    EXPECT_EQ(ended.wait_micros, 0U);  // a clock that stepped back counts no time
}

TEST(ClaimTally, MergeAddsCountsAndKeepsTheLongestWait) {
    ClaimTally total;
    merge(total, tally_answer(ClaimOutcome::kGrantedAfterWait, 1, 300));
    merge(total, tally_answer(ClaimOutcome::kTimedOut, 1, 900));
    merge(total, tally_answer(ClaimOutcome::kGrantedAfterWait, 2, 100));
    merge(total, tally_release(2500));
    EXPECT_EQ(total.granted_after_wait, 2U);
    EXPECT_EQ(total.timed_out, 1U);
    EXPECT_EQ(total.permits_granted, 3U);
    EXPECT_EQ(total.wait_micros, 1300U);
    EXPECT_EQ(total.wait_max_micros, 900U);
    EXPECT_EQ(total.released, 1U);
    EXPECT_EQ(total.held_micros, 2500U);
}

TEST(ClaimTally, CountsStopAtTheTopInsteadOfWrapping) {
    ClaimTally total;
    total.held_micros = std::numeric_limits<std::uint64_t>::max() - 1;
    merge(total, tally_release(10));
    EXPECT_EQ(total.held_micros, std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(total.released, 1U);
}

TEST(ClaimTally, AnEmptyDeltaIsKnownAsSuch) {
    EXPECT_TRUE(empty(ClaimTally{}));
    EXPECT_FALSE(empty(tally_answer(ClaimOutcome::kRefused, 1, 0)));
    ClaimTally renewed;
    renewed.renewed = 1;
    EXPECT_FALSE(empty(renewed));
}

TEST(PauseSpan, APauseCountsAsFarAsItHasRun) {
    PauseSpan span;
    EXPECT_EQ(paused_by(span, 1000), 0U);
    pause_change(span, 1000, 5000);  // paused from 1000 until 5000
    EXPECT_EQ(paused_by(span, 3000), 2000U);
    EXPECT_EQ(paused_by(span, 9000), 4000U);  // it ended at 5000
}

TEST(PauseSpan, AMovedOrLiftedPauseKeepsWhatRanBefore) {
    PauseSpan span;
    pause_change(span, 1000, 5000);
    pause_change(span, 2000, 8000);  // moved later at 2000: 1000 paused so far
    EXPECT_EQ(paused_by(span, 4000), 3000U);
    pause_change(span, 4000, 0);  // lifted at 4000
    EXPECT_EQ(paused_by(span, 9000), 3000U);
    pause_change(span, 10000, 9000);  // a pause already over is none
    EXPECT_EQ(paused_by(span, 12000), 3000U);
}

TEST(PauseSpan, ALateChangeAfterThePauseEndedCountsTheWholePause) {
    PauseSpan span;
    pause_change(span, 1000, 2000);
    pause_change(span, 7000, 0);
    EXPECT_EQ(paused_by(span, 8000), 1000U);
}

}  // namespace
}  // namespace pgsem::core
