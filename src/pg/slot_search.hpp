// The slot logic: finding a free slot of a semaphore and taking it, for each kind of claim.
//
// A slot is held by a lease claim -- a row of pgsem.claims -- or by a transaction or session
// claim -- a slot-holder lock in the lock manager. Every kind counts against the same n, so a
// claimer of any kind checks both, under the slot's mutex (a lock-manager lock held for the
// microseconds between reading the slot and taking it):
//   1. Candidate slots come from dirty reads of the partial unique index over live claims and
//      from conditional probes of slot-holder locks (src/core/slot_choice.hpp decides what each
//      row means and which slot to try).
//   2. Under the slot mutex the claimer reads the slot's rows again, records an expired lease
//      holder as timed out (a lease claimer, which is about to insert; others merely see it as
//      free), checks the slot-holder lock, and takes the slot: inserts its row, or takes the
//      slot-holder lock for its transaction or session. It never waits for another transaction.
//      A transaction or session claimer does not wait for another claimer either: it counts a
//      slot whose mutex is taken as held. Whoever holds the mutex takes the slot if it is free
//      (or renews the lease that holds it), so the slot is held or being taken, as an insert in
//      progress is; and lock claimers racing for a freed slot never sleep in the lock manager
//      behind each other (measured: a quarter more transaction claims at 8 clients on one
//      semaphore of 4). A lease claimer waits for the mutex: it is about to wait for its own
//      durable commit anyway, and those waits keep a retry storm of lease callers (which skipping
//      made faster) from taking the CPU that the holders need to release (measured: 32 callers
//      retrying at once on 4 slots made half as many pairs when they skipped).
//   3. For leases the unique index over (name, slot) WHERE ended_at IS NULL is the final arbiter:
//      if the logic above were wrong, the insert would fail, never oversubscribe.
// The line of waiters (wait_queue.hpp) decides who may look for a slot at all.
#pragma once

#include "pg/claims_table.hpp"
#include "pg/lock_tags.hpp"

namespace pgsem {

enum class ClaimKind : unsigned char { kLease, kTransaction, kSession };

struct SlotRequest {
    const text *name;
    int32 n;
    ClaimKind kind;
    int64 lease;  // microseconds, for kLease
};

struct SlotGrant {
    bool granted;
    int32 slot;
    int64 claim_id;  // kLease
    // When not granted: the earliest expiry of a lease that holds a slot below n, the moment a
    // slot may free up with no release at all (0: none).
    TimestampTz next_expiry;
};

enum class Reap : unsigned char {
    kVacant,   // recorded as timed out now, or found ended already
    kHeld,     // someone holds the row (a fence, a release, a renewal): leave it alone
    kChanged,  // the row changed since it was read: read it again
};

// Records an expired lease claim as timed out, never waiting for a row lock.
Reap reap(ClaimsTable *table, ItemPointerData tid, TimestampTz now);

// Takes a free slot below request.n, or answers that every one is held. `table` is open with
// RowExclusiveLock for leases (a lease claim inserts) or AccessShareLock otherwise.
SlotGrant take_free_slot(ClaimsTable *table, const SlotRequest &request);

// Runs `write` under the mutex of one slot: the lock every claimer of the slot takes between
// reading the slot and taking it. Renewals take it too: a renewed row may get a new index entry.
// With `wait` false it runs `write` only if nobody holds the mutex, and says whether it did.
template <typename Write>
bool under_slot_mutex(const text *name, int32 slot, bool wait, Write &&write) {
    static_assert(std::is_trivially_destructible_v<std::decay_t<Write>>);
    LOCKTAG tag;
    slot_locktag(&tag, LockClass::kSlotMutex, name, slot);
    if (LockAcquire(&tag, ExclusiveLock, false, !wait) == LOCKACQUIRE_NOT_AVAIL) return false;
    write();
    // Released now rather than at commit: the row or lock taken speaks for the slot from here on.
    (void)LockRelease(&tag, ExclusiveLock, false);
    return true;
}

}  // namespace pgsem
