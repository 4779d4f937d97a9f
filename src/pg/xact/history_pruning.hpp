// Keeps pgsem.claims bounded without an external scheduler: claimers delete a little old history
// as they go, at least pgsem.history_retention after each claim ended. Claims whose lease ran out
// without a release (their holder vanished, nobody reused the slot) are deleted only at commit:
// see history_pruning.cpp for why.
#pragma once

#include "pg/store/claims_table.hpp"

namespace pgsem {

// pgsem.history_retention in seconds; -1 keeps history forever. Defined in module.cpp.
extern int history_retention_seconds;
// pgsem.history_max_claims: at most this many of the newest claims are kept, whatever their
// age; -1: no cap. Defined in module.cpp.
extern int history_max_claims;

// For the transaction-event dispatcher (xact_events.cpp): at PRE_COMMIT, before the commit's
// durability is decided (this writes), deletes the batch of abandoned claims a claim drew; at
// the end of the transaction, forgets it.
void pruning_before_commit();
void pruning_at_end();

// Called by every claim, with the id it was granted (0: none): about one claim in kPruneOneIn
// prunes a batch. Random, not counted, so that short-lived connections prune their share too.
// Pruning capacity is a multiple of the rate at which claims add rows, so history cannot outgrow
// the retention or the cap by more than a few batches.
void prune_history_sometimes(int64 latest_id);

// Deletes up to max_rows claims that ended at least the retention ago or lie past the cap below
// latest_id, in id order, skipping any row another transaction holds, and returns how many it
// deleted; a batch of abandoned claims follows at commit.
int64 prune_history(ClaimsTable *table, TimestampTz now, int64 latest_id, int64 max_rows);

}  // namespace pgsem
