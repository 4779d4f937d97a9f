// The lock manager, for pgsem: every lock pgsem takes on a tag of its own goes through here (in
// the style of Postgres' lmgr.c), and so does every look at who holds one. Each lock's mode is
// written down once, here. All are advisory tags (pg_locks.locktype = 'advisory'), so waits on
// them show in pg_locks, obey lock_timeout and meet the deadlock detector; pgsem's own carry a
// class of their own in pg_locks.objsubid, which Postgres' advisory locks (1 for bigint keys, 2
// for int4 pairs) never use, so they cannot collide with any application's locks.
//
// The locks of one semaphore:
//  - the slot mutex (per slot, exclusive): held by a claimer for the microseconds between its read
//    of the slot and its insert or lock, and by a renewal for its write. Never held while waiting
//    for anything but itself.
//  - the slot holder (per slot, exclusive): held by the transaction or session that holds the
//    slot by a transaction or session claim: the slot's occupancy for every other claimer.
//  - the holders of a name (per name, share): held beside every slot-holder lock, so that the
//    deadlock check can find who holds slots of a name (slot tags hash name and slot together).
//  - the request key (per name, role and key, exclusive): held by the transaction of a claim made
//    with a request key, from before it looks for the key's claim until it ends, so that a retry
//    finds the first attempt's claim committed (or rolled back), never in flight.
//  - the line (per name): the first waiter holds it exclusively and the other waiters wait for it
//    in the lock manager's queue, first come first served; a claimer that does not wait looks for
//    a slot holding it in share mode, which it gets only if nobody waits.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// pgsem's tag classes (pg_locks.objsubid).
enum class LockClass : uint16 {
    kOther = 0,
    kSlotMutex = 0x5053,    // "PS", 20563
    kSlotHolder = 0x504C,   // "PL", 20556
    kNameHolders = 0x504E,  // "PN", 20558
    kQueue = 0x5051,        // "PQ", 20561: the line
    kRequestKey = 0x504B,   // "PK", 20555
    kBucket = 0x5042,       // "PB", 20546: a token bucket's mutex
    kRateKinds = 0x5052,    // "PR", 20562: rate grants against rate declarations, per database
};

// ---- tags ------------------------------------------------------------------------------------

// The key of a text or bytea: FNV-1a 64 over its bytes (a text's in the database encoding).
int64 varlena_key(const varlena *value);

// Exactly the tag pg_advisory_lock(key bigint) and friends use in this database.
void bigint_key_locktag(LOCKTAG *tag, int64 key);

// What pgsem tag `tag` is, in this database; kOther for any other lock.
LockClass pgsem_lock_class(const LOCKTAG &tag);

// The 64-bit key of one of pgsem's tags. A name's tags (line, holders) share the name's key; a
// slot's tags (mutex, holder) share the key of name and slot hashed together. Two names whose
// hashes collide share these locks: a slot mutex then costs a little concurrency, a slot holder
// lock makes a free slot look held -- 64 bits make either negligible.
uint64 locktag_key(const LOCKTAG &tag);
uint64 name_key(const text *name);
uint64 slot_key(const text *name, int32 slot);

// ---- a token bucket's mutex -------------------------------------------------------------------

// Whoever holds it reads and writes the name's bucket rows (store/buckets.hpp): a look holds it
// for its read and write alone, and gives it back before its transaction ends.
void lock_bucket_mutex(const text *name);
void unlock_bucket_mutex(const text *name);
// Takes the mutex only if nobody holds it (pruning idle rows waits for no grant).
bool try_lock_bucket_mutex(const text *name);

// ---- rate grants against rate declarations (one tag per database) ----------------------------

// Every rate grant (a sliding window's or a token bucket's) holds it in share mode from before it
// reads the name's declaration until its transaction ends; a declaration that makes names a rate
// limit holds it exclusively from before it looks for grants of the other kind in force until
// its own transaction ends. So that look sees every grant made under the rules before the
// declaration, and no grant is made under those rules after it. Waits as any lock does
// (lock_timeout, cancels): a declaration made in autocommit holds the grants back for
// microseconds.
// A waiter lets go of it before it sleeps (it granted nothing under the rules it read) and takes
// it again for its next look: a declaration waits for grants in flight, never for waiters.
void lock_rate_grants();
void unlock_rate_grants();
void lock_rate_declarations();

// ---- the slot mutex --------------------------------------------------------------------------

// Takes the slot's mutex; with `wait` false only if nobody holds it, and says whether it did.
bool lock_slot_mutex(const text *name, int32 slot, bool wait);
void unlock_slot_mutex(const text *name, int32 slot);

// Runs `write` under the slot's mutex (see lock_slot_mutex), and says whether it did.
template <typename Write>
bool under_slot_mutex(const text *name, int32 slot, bool wait, Write &&write) {
    static_assert(std::is_trivially_destructible_v<std::decay_t<Write>>);
    if (!lock_slot_mutex(name, slot, wait)) return false;
    write();
    // Released now rather than at commit: the row or lock taken speaks for the slot from here on.
    unlock_slot_mutex(name, slot);
    return true;
}

// ---- slot holders: transaction and session claims --------------------------------------------

enum class SlotLock : unsigned char {
    kTaken,        // this backend holds it now, for its transaction or session
    kHeldByOther,  // another transaction or session holds the slot
    kHeldByMe,     // this backend held it already, by another claim
};

// Takes the slot-holder lock for this transaction (`session` false) or session, never waiting.
SlotLock take_slot_holder(const text *name, int32 slot, bool session);
void release_slot_holder(const text *name, int32 slot, bool session);
bool slot_holder_held_by_me(const text *name, int32 slot);

// Whether a transaction or session -- another's or this backend's own -- holds `slot` now. Called
// under the slot mutex only: it takes the slot-holder lock for a moment (the lock manager has no
// other way to ask about a session-level lock of an idle backend), and a claimer taking the slot
// meanwhile would find it held. Under the mutex nobody else is taking it.
bool slot_held_by_lock(const text *name, int32 slot);

// The holders of a name: taken (share) beside every slot-holder lock; released with the last
// of them, if held.
// Whether any backend (this one included) holds a transaction or session claim of `name`: its
// name-holders lock is held. A no-wait try of a conflicting mode, given back at once.
bool name_has_lock_claims(const text *name);
void take_name_holders(const text *name, bool session);
void release_name_holders(const text *name, bool session);

// ---- request keys ----------------------------------------------------------------------------

// Takes the lock of request key `key` of `role` on `name` for this transaction, waiting for a
// transaction that holds it (in the lock manager: lock_timeout, cancels and the deadlock detector
// apply).
void lock_request_key(const text *name, Oid role, const text *key);

// ---- the line --------------------------------------------------------------------------------

// Holds the line in share mode if nobody waits in it, and says whether it does: a caller that
// looks for a slot so passes nobody, and nobody who comes to wait meanwhile passes it.
bool hold_line_if_empty(const text *name);
void let_go_of_line(const text *name);

// Waits in the lock manager's queue for first place in the line (lock_timeout, cancels and the
// deadlock detector end the wait with an error, as for any lock).
void wait_for_first_place(const text *name);
// Gives first place up; the next in the queue gets it. The lock was taken in a subtransaction,
// whose commit handed it to the transaction's resource owner.
void leave_first_place(const text *name);

// What one entry of GetLockStatusData (as pg_locks shows it) is, for pgsem.
bool is_first_place(const LockInstanceData &lock);         // a first waiter's hold on its line
bool waits_for_first_place(const LockInstanceData &lock);  // a waiter behind it, in the queue
bool is_slot_holder(const LockInstanceData &lock);         // a transaction or session claim
bool is_name_holders(const LockInstanceData &lock);        // beside one of those

// Wakes the first waiter of `name`, if any, or of every semaphore of this database.
void wake_first_waiter(const text *name);
void wake_every_first_waiter();

}  // namespace pgsem
