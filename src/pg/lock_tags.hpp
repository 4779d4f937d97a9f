// The lock-manager tags pgsem uses. All are advisory tags (pg_locks.locktype = 'advisory'), so
// waits on them show in pg_locks, obey lock_timeout and meet the deadlock detector. pgsem's own
// tags carry a class of their own in pg_locks.objsubid, which Postgres' advisory locks (1 for
// bigint keys, 2 for int4 pairs) never use, so they cannot collide with any application's locks.
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

// pgsem's tag classes (pg_locks.objsubid).
enum class LockClass : uint16 {
    kOther = 0,
    // Serialises the claimers of one slot for the microseconds between their read of the slot and
    // their insert or lock. Held briefly, never while waiting for anything but itself.
    kSlotMutex = 0x5053,  // "PS", 20563
    // Held, exclusively, by the transaction or session that holds a slot by a transaction or
    // session claim: the slot's occupancy for every other claimer.
    kSlotHolder = 0x504C,  // "PL", 20556
    // Held in share mode beside every kSlotHolder lock: who holds slots of a semaphore, for the
    // deadlock check (slot tags hash name and slot together and cannot be grouped by name).
    kNameHolders = 0x504E,  // "PN", 20558
    // The line of waiters of one semaphore: the first waiter holds it exclusively, the others
    // wait for it in the lock manager's FIFO queue, and claimers that do not wait take it in
    // share mode only if nobody waits.
    kQueue = 0x5051,  // "PQ", 20561
};

// The key of a text or bytea: FNV-1a 64 over its bytes (a text's in the database encoding).
int64 varlena_key(const varlena *value);

// Exactly the tag pg_advisory_lock(key bigint) and friends use in this database.
void bigint_key_locktag(LOCKTAG *tag, int64 key);

// Tags of one slot (kSlotMutex or kSlotHolder): name and slot hashed together. Two names whose
// hashes collide share these locks: a slot mutex then costs a little concurrency, a slot holder
// lock makes a free slot look held -- 64 bits make either negligible.
void slot_locktag(LOCKTAG *tag, LockClass lock_class, const text *name, int32 slot);

// Tags of one semaphore (kNameHolders or kQueue): its name hashed.
void name_locktag(LOCKTAG *tag, LockClass lock_class, const text *name);

// What pgsem tag `tag` is, in this database; kOther for any other lock.
LockClass pgsem_lock_class(const LOCKTAG &tag);

// The 64-bit key of one of pgsem's tags, to compare with the tags made above.
uint64 locktag_key(const LOCKTAG &tag);

}  // namespace pgsem
