#include "core/slot_choice.hpp"
#include "pg/boundary.hpp"
#include "pg/history_pruning.hpp"
#include "pg/locked_claim.hpp"

namespace pgsem {

namespace {

constexpr uint32 kPruneOneIn = 32;
constexpr int64 kBatchRows = 128;  // 4 rows of pruning capacity per claim on average
// Rows still live (or ended recently) but older than the retention are skipped; bound the work
// spent on them per batch and resume after them next time.
constexpr int64 kScanBudget = 1024;

// Where this backend's next batch starts; 0 means from the oldest claim.
int64 resume_from_id = 0;

int64 retention_micros() {
    if (history_retention_seconds < 0) return -1;
    return static_cast<int64>(history_retention_seconds) * USECS_PER_SEC;
}

bool is_prunable(const ClaimRow &row, TimestampTz now, int64 retention) {
    return PGSEM_NOTHROW(core::prunable(row.ended, row.ended_at, row.expires_at, now, retention));
}

enum class BatchEnd : unsigned char { kCaughtUp, kBudgetSpent };

// One batch: deletes up to max_rows. A claim whose lease ran out long ago but was never recorded
// as timed out still occupies the live index; deleting it marks it busy to every claimer until
// the deleting transaction ends. So such rows are deleted only where that happens at once: in a
// transaction that ends with the current statement.
BatchEnd prune_batch(ClaimsTable *table, TimestampTz now, int64 retention, int64 max_rows,
                     int64 *deleted) {
    const bool may_delete_unended = !IsTransactionBlock();
    int64 scanned = 0;
    int64 next_resume = 0;
    BatchEnd end = BatchEnd::kCaughtUp;
    ClaimScan scan;
    ClaimRow row;
    id_scan_begin(table, &scan, resume_from_id);
    while (claim_scan_next(&scan, &row)) {
        if (++scanned > kScanBudget || *deleted >= max_rows) {
            next_resume = row.id;
            end = BatchEnd::kBudgetSpent;
            break;
        }
        if (!row.insert_in_progress && !row.change_in_progress &&
            (row.ended || may_delete_unended) && is_prunable(row, now, retention)) {
            LockedClaim locked{};
            if (claims_lock(table, row.tid, LockTupleExclusive, LockWaitSkip, &locked) == TM_Ok &&
                is_prunable(locked.row, now, retention)) {
                claims_delete(table, locked);
                ++*deleted;
            }
        } else if (row.claimed_at > now - retention) {
            break;  // ids follow claim time: every later claim is younger than the retention
        }
        CHECK_FOR_INTERRUPTS();
    }
    claim_scan_end(&scan);
    resume_from_id = next_resume;
    return end;
}

}  // namespace

void prune_history_sometimes(ClaimsTable *table, TimestampTz now) {
    if (history_retention_seconds < 0) return;
    if (pg_prng_uint32(&pg_global_prng_state) % kPruneOneIn != 0) return;
    int64 deleted = 0;
    (void)prune_batch(table, now, retention_micros(), kBatchRows, &deleted);
}

int64 prune_history(ClaimsTable *table, TimestampTz now, int64 max_rows) {
    const int64 retention = retention_micros();
    int64 deleted = 0;
    if (retention < 0) return 0;
    // Batch after batch until max_rows are gone or the oldest claims are all young or live.
    while (deleted < max_rows &&
           prune_batch(table, now, retention, max_rows, &deleted) == BatchEnd::kBudgetSpent) {
    }
    return deleted;
}

}  // namespace pgsem
