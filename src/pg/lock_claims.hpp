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
bool slot_held_by_lock(const text *name, int32 slot);

// Takes `slot` for a transaction or session claim of this backend; false when it is held. Called
// under the slot mutex, after the slot's rows were found free.
bool take_slot_lock(ClaimKind kind, const text *name, int32 slot, int32 n);

// Releases a session claim of this backend; false when it holds none of that slot.
bool release_session_claim(const text *name, int32 slot);

}  // namespace pgsem
