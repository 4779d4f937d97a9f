// The semaphore operations behind sem_claim, sem_release, sem_renew, sem_held and sem_fence.
//
// How a claim stays within n holders without a table lock and without ever waiting for another
// transaction:
//   1. Candidate slots come from dirty reads of the partial unique index over live claims
//      (src/core/slot_choice.hpp decides what each row means and which slot to try).
//   2. A candidate is taken under a lock-manager lock on (name, slot), held for microseconds: the
//      claimer re-reads the slot, records an expired holder as timed out (never waiting for a
//      row lock), and inserts its row. Other claimers of that slot wait on this lock only for
//      that span, never for the claimer's transaction: the slot lock is released at once, and
//      the uncommitted row already shows as held to every dirty read.
//   3. The unique index over (name, slot) WHERE ended_at IS NULL is the final arbiter: if the
//      logic above were wrong, the insert would fail, never oversubscribe.
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

struct ClaimRequest {
    text *name;
    int32 n;
    int64 lease;  // microseconds
};

// Returns the claim id, or 0 when all slots below request.n are held.
int64 semaphore_claim(const ClaimRequest &request);

// True when claim `id` was live and is now released.
bool semaphore_release(int64 id);

// True when claim `id` was live and now expires `lease` microseconds from now (or its own lease
// from now when has_lease is false).
bool semaphore_renew(int64 id, bool has_lease, int64 lease);

// Whether claim `id` holds its slot right now.
bool semaphore_held(int64 id);

// Locks claim `id` against release, renewal and reaping until the transaction ends; an error
// unless the claim is live.
void semaphore_fence(int64 id);

// Deletes history older than pgsem.history_retention, at most `max_rows` rows; returns how many.
int64 semaphore_prune_history(int64 max_rows);

}  // namespace pgsem
