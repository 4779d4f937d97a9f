// Lease claims, the ones that are rows of pgsem.claims: sem_claim, sem_release, sem_renew,
// sem_held, sem_fence and sem_prune_history. A lease outlives the session that took it and ends
// when released or when its lease runs out; its id is a fencing token. Finding and taking a slot
// is src/pg/slot_search.hpp's job, waiting for one src/pg/wait_queue.hpp's.
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

// Returns the claim id, or 0 when no slot below n came free within `wait` microseconds.
int64 lease_claim(const text *name, int32 n, int64 lease, int64 wait);

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

// For the functions that change semaphores: refused on a hot standby (25006), where the claims
// table cannot be written and a lock would exclude nobody on the primary. `in_read_only` also
// refuses them in a read-only transaction (they write).
void require_primary(const char *function, bool refuse_in_read_only);

}  // namespace pgsem
