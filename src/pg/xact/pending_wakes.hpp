// First waiters to wake when this transaction ends, commit or rollback: the semaphores of every
// lease row it wrote or locked (a claim, a release, a renewal, a fence, a recorded timeout, a
// pruned abandoned claim) and of its transaction claims. Until it ends, other claimers see those
// rows in flight and count their slots as held; at its end a slot may be free, or a lease may
// have the expiry a first waiter's timer must wait for.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Whether the slot can free when the transaction commits, or only when it rolls back (a lease
// claim's own row: its commit holds the slot, with the expiry a first waiter's timer waits for).
enum class FreesAt : unsigned char { kCommitOrRollback, kRollbackOnly };

void wake_first_waiter_at_end(const text *name, FreesAt frees = FreesAt::kCommitOrRollback);

// Every semaphore's first waiter, when this transaction ends: a declaration changed, which may
// have raised the n of names nobody lists here (a prefix covers names the writer never saw).
void wake_every_first_waiter_at_end();

// For the transaction-event dispatcher: the transaction is about to end (PRE_COMMIT, or ABORT
// when it never got there): the slots it may free that way are about to free, which claimers
// that look meanwhile must know of (store/release_epochs.hpp).
void begin_pending_releases(bool is_commit);

// For the transaction-event dispatcher (xact_events.cpp): once the transaction's or a
// subtransaction's locks are gone (RESOURCE_RELEASE_AFTER_LOCKS; at XACT_EVENT_COMMIT they are
// still held, and a waiter woken then would find the slot taken).
void fire_pending_wakes(bool is_commit, bool is_top_level);

}  // namespace pgsem
