#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/claim_counts.hpp"
#include "pg/store/timed_locks.hpp"
#include "pg/xact/pending_stats.hpp"

namespace pgsem {

void count_answer(const text *name, int32 permits, bool writes_row, bool granted, bool waited,
                  TimestampTz start) {
    using core::ClaimOutcome;
    const ClaimOutcome outcome =
        granted ? (waited ? ClaimOutcome::kGrantedAfterWait : ClaimOutcome::kGranted)
                : (waited ? ClaimOutcome::kTimedOut : ClaimOutcome::kRefused);
    const int64 waited_micros = waited ? wait_clock_now() - start : 0;
    const core::ClaimTally delta =
        PGSEM_NOTHROW(core::tally_answer(outcome, permits, waited_micros));
    count_event(name, delta, granted && writes_row);
}

}  // namespace pgsem
