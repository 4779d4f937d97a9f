// Keeps pgsem.claims bounded without an external scheduler: claimers delete a little old history
// as they go, at least pgsem.history_retention after each claim ended.
#pragma once

#include "pg/claims_table.hpp"

namespace pgsem {

// pgsem.history_retention in seconds; -1 keeps history forever. Defined in module.cpp.
extern int history_retention_seconds;

// Called by every claim: about one claim in kPruneOneIn prunes a batch. Random, not counted, so
// that short-lived connections prune their share too. Pruning capacity is a multiple of the rate
// at which claims add rows, so history cannot outgrow retention by more than a few batches.
void prune_history_sometimes(ClaimsTable *table, TimestampTz now);

// Deletes up to max_rows claims that ended (or whose lease ran out) at least the retention ago,
// in id order, skipping any row another transaction holds. Returns how many it deleted.
int64 prune_history(ClaimsTable *table, TimestampTz now, int64 max_rows);

}  // namespace pgsem
