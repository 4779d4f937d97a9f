// Transaction and session claims: a slot held by a lock-manager lock instead of a row, so that
// taking one writes nothing to disk and costs about what an advisory lock costs. This module
// keeps the books of the ones this backend holds.
//
// A slot so held is a slot-holder lock (store/locks.hpp), for the transaction (freed at commit,
// rollback, or the rollback of the savepoint it was taken in) or for the session (freed by
// sem_release_session or when the session ends, whatever the way: a SIGKILL of the backend resets
// every lock of the server), beside the holders-of-a-name lock in share mode. A session claim is
// taken with its transaction: if that rolls back -- the claim's own statement cancelled after the
// grant, a later error, a ROLLBACK TO a savepoint before it -- the claim goes with it, so that no
// client holds a slot whose number it never saw. Once its transaction has committed it stays.
#pragma once

#include "pg/base/claim_types.hpp"

namespace pgsem {

// pgsem.max_held_slots: the most slots one session holds at once through transaction and session
// claims; -1 for no limit. Each such slot is a lock in the server's shared lock table, beside one
// lock per name, and that table is sized for max_locks_per_transaction per session on average:
// one session that claimed thousands would leave every other session of the server, pgsem's or
// not, "out of shared memory" (53200). The default, 32, keeps a session within that share.
extern int max_held_slots;

// Before a transaction or session claim of `permits` slots looks (or waits): 53400 when they would
// take this session past pgsem.max_held_slots, with nothing taken.
void require_room_for_held_slots(int32 permits);

// A request key's lock is held until the transaction ends, another lock of the shared table:
// before a keyed claim takes `keys` of them, 53400 as above when they would not fit beside the
// slots held; then they count until the transaction ends (a subtransaction's abort frees its
// locks, not the count: a retried batch may hit the bound early, never late).
void count_request_key_locks(int32 keys);

// Takes slots for a transaction or session claim of this backend, in two steps under each slot's
// mutex. begin_lock_claim takes the slot-holder lock, or answers false when a transaction or
// session holds the slot already (this backend included) -- the cheap thing to find out first.
// Then the caller reads the slot's rows: if a lease holds the slot, abandon_lock_claim gives the
// lock back. Once it has begun as many slots as the claim has permits, finish_lock_claim records
// them as one claim, named by its lowest slot; a claim that cannot have them all abandons each,
// the last begun first. An error in between takes them back too.
bool begin_lock_claim(ClaimKind kind, const text *name, int32 slot, int32 n);
void abandon_lock_claim(ClaimKind kind, const text *name, int32 slot);
void finish_lock_claim(ClaimKind kind, const text *name, int32 permits, int32 claim_slot);

// Releases a session claim of this backend -- every slot of the claim that `slot` belongs to;
// false when it holds none of that slot.
bool release_session_claim(const text *name, int32 slot);

// For the transaction-event dispatcher (xact_events.cpp).
void held_claims_before_prepare();        // refuses to PREPARE what it cannot carry
void held_claims_at_end(bool committed);  // commit or PREPARE; or abort
void held_claims_at_subtransaction_end(bool committed, SubTransactionId mine,
                                       SubTransactionId parent);
void held_claims_at_parallel_end();
void held_claims_at_exit();  // the session ends: its session claims go, waking their waiters

}  // namespace pgsem
