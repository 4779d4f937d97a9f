// Transaction and session claims: a slot held by a lock-manager lock instead of a row, so that
// taking one writes nothing to disk and costs about what an advisory lock costs.
//
// A slot so held is a kSlotHolder lock on the slot, taken exclusively for the transaction (freed at
// commit, rollback, or the rollback of the savepoint it was taken in) or for the session (freed by
// sem_release_session or when the session ends, whatever the way: a SIGKILL of the backend resets
// every lock of the server). Beside it the holder takes kNameHolders on the semaphore in share
// mode, which says who holds slots of it (the deadlock check reads that).
#pragma once

#include "pg/slot_search.hpp"

namespace pgsem {

// Registers the transaction and exit callbacks. Called once, from _PG_init.
void install_lock_claim_callbacks();

// Whether a transaction or session -- another's or this backend's own -- holds `slot` now.
// Called under the slot mutex only: it takes the slot-holder lock for a moment (the lock manager
// has no other way to ask about a session-level lock of an idle backend), and a claimer taking
// the slot meanwhile would find it held. Under the mutex nobody else is taking it.
bool slot_held_by_lock(const text *name, int32 slot);

// Takes `slot` for a transaction or session claim of this backend, in two steps under the slot
// mutex. begin_slot_lock takes the slot-holder lock, or answers false when a transaction or
// session holds the slot already (this backend included) -- the cheap thing to find out first.
// Then the caller reads the slot's rows: if a lease holds the slot, abandon_slot_lock gives the
// lock back; else finish_slot_lock records the claim. An error in between takes it back too.
bool begin_slot_lock(ClaimKind kind, const text *name, int32 slot, int32 n);
void abandon_slot_lock(ClaimKind kind, const text *name, int32 slot);
void finish_slot_lock(ClaimKind kind, const text *name);

// Releases a session claim of this backend; false when it holds none of that slot.
bool release_session_claim(const text *name, int32 slot);

}  // namespace pgsem
