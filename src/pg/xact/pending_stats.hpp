// When each counted event reaches sem_stats' counters (store/name_stats.hpp).
//
// What a transaction writes to pgsem's tables -- a lease's grant, release, renewal, a lease
// recorded as timed out, a rate or bucket grant -- counts when that transaction commits: a
// rolled-back claim never held its slot, and sem_history never shows it. These wait here, per
// (sub)transaction, and are dropped with a rollback. The rest counts at once: refusals, waits that
// timed out or ended in an error, and transaction and session claims, which hold their slot from
// the grant whatever the transaction does.
#pragma once

#include "core/claim_tally.hpp"
#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Counts `delta` for `name`: at once, or (`at_commit`) when the transaction commits.
void count_event(const text *name, const core::ClaimTally &delta, bool at_commit);

// The pause in force on `name` ends at `until` (0: lifted), as of when the transaction commits.
void count_pause(const text *name, TimestampTz until);

// A claim's looks and wait in line begin, for the names of one claim (several for a set): a claim
// that an error ends before count_wait_ends() (cancel, terminate, lock_timeout, deadlock) is
// counted by the abort, for each name, with the time it waited; after it, the claim counts its
// own answer.
void count_wait_begins(const text *const *names, int count, TimestampTz since);
void count_wait_ends();

// Transaction events (xact_events.cpp).
void pending_stats_at_end(bool commit);
void pending_stats_at_subtransaction_end(bool commit);

}  // namespace pgsem
