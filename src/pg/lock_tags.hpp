// The lock-manager tags pgsem uses. All are advisory tags (pg_locks.locktype = 'advisory'), so
// waits on them show in pg_locks, obey lock_timeout and meet the deadlock detector.
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

// The key of a text or bytea: FNV-1a 64 over its bytes (a text's in the database encoding).
int64 varlena_key(const varlena *value);

// Exactly the tag pg_advisory_lock(key bigint) and friends use in this database.
void bigint_key_locktag(LOCKTAG *tag, int64 key);

// Serialises the claimers of one slot of one semaphore for the few microseconds between their
// dirty read of the slot and their insert. Two names whose hashes collide share these locks: that
// costs a little concurrency, never correctness, because the unique index is the arbiter.
void slot_locktag(LOCKTAG *tag, const text *name, int32 slot);

}  // namespace pgsem
