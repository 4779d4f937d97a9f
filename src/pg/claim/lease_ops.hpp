// What is done to a lease by its id: sem_release, sem_renew, sem_held, sem_fence, and
// sem_prune_history. A lease outlives the session that took it and ends when released or when its
// lease runs out; its id is a fencing token. Taking one is the claim sequence's
// (claim_sequence.hpp).
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// True when claim `id` was live and is now released.
bool lease_release(int64 id);

// True when claim `id` was live and now expires `lease` microseconds from now (or its own lease
// from now when has_lease is false).
bool lease_renew(int64 id, bool has_lease, int64 lease);

// Whether claim `id` holds its slot right now.
bool lease_held(int64 id);

// Locks claim `id` against release, renewal and reaping until the transaction ends; an error
// unless the claim is live.
void lease_fence(int64 id);

// Deletes history older than pgsem.history_retention, at most `max_rows` rows; returns how many.
int64 prune_claim_history(int64 max_rows);

}  // namespace pgsem
