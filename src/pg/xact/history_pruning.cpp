#include "core/slot_choice.hpp"
#include "pg/base/boundary.hpp"
#include "pg/xact/history_pruning.hpp"
#include "pg/xact/pending_wakes.hpp"

namespace pgsem {

namespace {

constexpr uint32 kPruneOneIn = 32;
constexpr int64 kBatchRows = 128;  // 4 rows of pruning capacity per claim on average
// Rows still live (or ended recently) but older than the retention are skipped; bound the work
// spent on them per batch and resume after them next time.
constexpr int64 kScanBudget = 1024;

// Two kinds of rows are pruned, in two passes with a resume point each.
//  - Ended claims (released or recorded as timed out) are no longer in the live index: deleting
//    them changes nothing for claimers, so they are deleted wherever pruning runs.
//  - Abandoned claims -- unended, their lease long run out, their holder gone -- are still in
//    the live index. A claimer of that slot would see the deletion in progress and count the
//    slot as held until the deleting transaction ends, so these are deleted only at
//    PRE_COMMIT, when the transaction has nothing left to run but its commit.
enum class Kind : unsigned char { kEnded, kAbandoned };

struct Pass {
    int64 resume_from_id;  // where this backend's next batch starts; 0: the oldest claim
};
Pass passes[2] = {{0}, {0}};

// Set by a claim that drew a prune, and by sem_prune_history(): this transaction deletes a batch
// of abandoned claims at PRE_COMMIT, with the id limit of the cap that claim saw.
bool abandoned_pass_at_commit = false;
int64 abandoned_pass_id_limit = 0;

int64 retention_micros() {
    if (history_retention_seconds < 0) return -1;
    return static_cast<int64>(history_retention_seconds) * USECS_PER_SEC;
}

// The claims pgsem.history_max_claims keeps are the newest ones by id (ids are drawn in grant
// order, one per claim): a claim with an id at or below this is past the cap (0: no cap).
int64 id_limit_of(int64 latest_id) {
    if (history_max_claims < 0 || latest_id <= history_max_claims) return 0;
    return latest_id - history_max_claims;
}

// The window's own slots are rows of rate grants: deleting an unended grant past its window leaves
// a slot no grant looks for (slot_search.hpp), so those go by age alone, never by the cap.
bool is_prunable(Kind kind, const ClaimRow &row, TimestampTz now, int64 retention, int64 id_limit) {
    if (row.ended != (kind == Kind::kEnded)) return false;
    if (retention >= 0 &&
        PGSEM_NOTHROW(core::prunable(row.ended, row.ended_at, row.expires_at, now, retention)))
        return true;
    if (id_limit == 0 || row.id > id_limit || (kind == Kind::kAbandoned && row.rate)) return false;
    // Past the cap: as soon as it no longer holds its slot.
    return PGSEM_NOTHROW(core::prunable(row.ended, row.ended_at, row.expires_at, now, 0));
}

enum class BatchEnd : unsigned char { kCaughtUp, kBudgetSpent };

// One batch of one kind: deletes up to max_rows, never waiting for a row lock.
BatchEnd prune_batch(ClaimsTable *table, Kind kind, TimestampTz now, int64 retention,
                     int64 id_limit, int64 max_rows, int64 *deleted) {
    Pass &pass = passes[static_cast<int>(kind)];
    int64 scanned = 0;
    int64 next_resume = 0;
    BatchEnd end = BatchEnd::kCaughtUp;
    ClaimScan scan;
    ClaimRow row;
    id_scan_begin(table, &scan, pass.resume_from_id);
    while (claim_scan_next(&scan, &row)) {
        if (++scanned > kScanBudget || *deleted >= max_rows) {
            next_resume = row.id;
            end = BatchEnd::kBudgetSpent;
            break;
        }
        if (!row.insert_in_progress && !row.change_in_progress &&
            is_prunable(kind, row, now, retention, id_limit)) {
            LockedClaim locked{};
            if (claims_lock(table, row.tid, LockTupleExclusive, LockWaitSkip, &locked) == TM_Ok &&
                is_prunable(kind, locked.row, now, retention, id_limit)) {
                // An abandoned claim is in the live index: until the deletion commits, claimers
                // count its slot as held.
                if (kind == Kind::kAbandoned) wake_first_waiter_at_end(locked_claim_name(locked));
                claims_delete(table, locked);
                ++*deleted;
            }
        } else if (row.id > id_limit && (retention < 0 || row.claimed_at > now - retention)) {
            break;  // ids follow claim time: every later claim is younger and within the cap
        }
        CHECK_FOR_INTERRUPTS();
    }
    claim_scan_end(&scan);
    pass.resume_from_id = next_resume;
    return end;
}

// At PRE_COMMIT no user code runs any more: a deletion made now is in progress only while the
// commit itself is. Serializable transactions are left out, so that pruning adds no conflict to
// them at the last moment.
void prune_abandoned_at_commit(int64 id_limit) {
    const int64 retention = retention_micros();
    if ((retention < 0 && id_limit == 0) || IsolationIsSerializable()) return;
    const bool push_snapshot = !ActiveSnapshotSet();
    if (push_snapshot) PushActiveSnapshot(GetTransactionSnapshot());
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    int64 deleted = 0;
    (void)prune_batch(&table, Kind::kAbandoned, GetCurrentTimestamp(), retention, id_limit,
                      kBatchRows, &deleted);
    claims_close(&table);
    if (push_snapshot) PopActiveSnapshot();
}

}  // namespace

void pruning_before_commit() {
    if (!abandoned_pass_at_commit) return;
    abandoned_pass_at_commit = false;
    prune_abandoned_at_commit(abandoned_pass_id_limit);
}

void pruning_at_end() {
    abandoned_pass_at_commit = false;
}

void prune_history_sometimes(int64 latest_id) {
    const int64 id_limit = id_limit_of(latest_id);
    if (history_retention_seconds < 0 && id_limit == 0) return;
    if (pg_prng_uint32(&pg_global_prng_state) % kPruneOneIn != 0) return;
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    int64 deleted = 0;
    (void)prune_batch(&table, Kind::kEnded, GetCurrentTimestamp(), retention_micros(), id_limit,
                      kBatchRows, &deleted);
    claims_close(&table);
    abandoned_pass_at_commit = true;
    abandoned_pass_id_limit = id_limit;
}

int64 prune_history(ClaimsTable *table, TimestampTz now, int64 latest_id, int64 max_rows) {
    const int64 retention = retention_micros();
    const int64 id_limit = id_limit_of(latest_id);
    int64 deleted = 0;
    if (retention < 0 && id_limit == 0) return 0;
    // Batch after batch until max_rows are gone or the oldest claims are all young or live.
    while (deleted < max_rows && prune_batch(table, Kind::kEnded, now, retention, id_limit,
                                             max_rows, &deleted) == BatchEnd::kBudgetSpent) {
    }
    abandoned_pass_at_commit = true;
    abandoned_pass_id_limit = id_limit;
    return deleted;
}

}  // namespace pgsem
