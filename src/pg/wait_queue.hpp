// The line of waiters of a semaphore: claims that wait their turn, first come first served.
//
// The line is a lock in the lock manager (kQueue on the semaphore's name):
//  - A claim first looks for a free slot while holding that lock in share mode, which it gets
//    only if nobody waits: a caller never passes a waiter, whether it waits itself or not.
//  - A claim that found every slot held and may wait asks for the lock exclusively. The lock
//    manager queues such requests first come first served; pg_locks and pg_stat_activity show the
//    waiters; lock_timeout, statement_timeout, cancellation and Postgres' deadlock detector apply.
//  - The one that holds it is the first waiter: it alone looks for slots, sleeps on its latch in
//    between, and is woken by whoever frees a slot of the semaphore (a release, a rolled-back
//    claim, a transaction or session claim ending: after the locks are gone, from a resource-
//    release callback) or by its timer when a lease runs out. When it gets its slot, or gives up,
//    it lets go of the lock and the lock manager makes the next in line the first waiter.
// Waiters pass different n? The line is one line: the first waiter waits for a slot below its own
// n, and everybody behind it waits for it (head-of-line blocking, as in fair semaphores with
// multi-permit acquires). This also leaves room for claims of k slots at once: the first waiter
// would take k slots or none.
//
// Postgres' deadlock detector sees the line but not the first waiter's latch sleep, so the first
// waiter checks for cycles itself (deadlock_check.hpp).
#pragma once

#include "pg/slot_search.hpp"

namespace pgsem {

// pgsem.first_waiter_recheck, in milliseconds (0: never): how often a first waiter looks for a
// slot again with nobody having woken it. Every path that frees a slot wakes the first waiter;
// the recheck serves the few that cannot (COMMIT PREPARED or ROLLBACK PREPARED of a transaction
// that wrote claims, run by a session that may not have loaded pgsem; a superuser's DELETE from
// pgsem.claims). Tests turn it off to see that no other path misses its wake-up. Defined in
// module.cpp.
extern int first_waiter_recheck_ms;

// Registers the resource-release callback that wakes first waiters. Called once, from _PG_init.
void install_wait_queue_callbacks();

// Claims a slot for `request`, waiting up to `wait` microseconds for one (0: not at all).
// Errors (cancellation, timeouts, a deadlock) leave no claim and no place in line.
SlotGrant claim_slot(const SlotRequest &request, int64 wait);

// This backend freed a slot of `name`, or changed what holds one, or may do so at the end of its
// transaction: wake the first waiter, now, or once the transaction's locks are gone (commit or
// rollback: either may free the slot or change the expiry the first waiter's timer waits for).
void wake_first_waiter_now(const text *name);
void wake_first_waiter_at_end(const text *name);

}  // namespace pgsem
