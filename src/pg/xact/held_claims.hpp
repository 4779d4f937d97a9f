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

// pgsem.max_locks_per_session: how many entries of the server's shared lock table one session
// may hold through pgsem at once, counting what a claim will hold at its peak; -1 for no limit.
// That table is sized for max_locks_per_transaction entries per session on average: sessions that
// each took far more (thousands of session claims, waiting sets of 64 names, looks for 1,000
// permits) would leave every session of the server, pgsem's or not, "out of shared memory"
// (53200). The default, 64, is that share at Postgres' default.
extern int max_locks_per_session;

// What one claim holds in the lock table at its peak (the moment it takes its slots, or while it
// waits): for each of its names, the name's line (through the look, and through the wait), and,
// for a transaction or session claim, the name's holders lock; for each of its slots, the slot's
// mutex (through the look) and, for a transaction or session claim, the slot itself; for a keyed
// claim, each name's request key (until the transaction ends).
struct LockNeed {
    int32 names;
    int32 slots;
    bool holds_locks;  // a transaction or session claim
    bool keyed;
};

// Before a claim looks (or waits, or takes a request key): 53400 when what this session holds and
// what the claim needs at its peak exceed pgsem.max_locks_per_session, with nothing taken.
void require_lock_room(const LockNeed &need);

// A keyed claim's `keys` request-key locks, held until the transaction ends: they count until
// then (a subtransaction's abort frees its locks, not the count: a retried batch may hit the
// bound early, never late).
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
