// The line of waiters of a semaphore: claims that wait their turn, first come first served.
//
// The line is a lock in the lock manager (kQueue on the semaphore's name):
//  - A claim first looks for a free slot while holding that lock in share mode, which it gets
//    only if nobody waits: a caller never passes a waiter, whether it waits itself or not
//    (claim_sequence.cpp).
//  - A claim that found every slot held and may wait asks for the lock exclusively. The lock
//    manager queues such requests first come first served; pg_locks and pg_stat_activity show the
//    waiters; lock_timeout, statement_timeout, cancellation and Postgres' deadlock detector apply.
//  - The one that holds it is the first waiter: it alone looks for slots, sleeps on its latch in
//    between, and is woken by whoever frees a slot of the semaphore (a release, a rolled-back
//    claim, a transaction or session claim ending: after the locks are gone, from a resource-
//    release callback, xact/pending_wakes.hpp) or by its timer when a lease runs out. When it gets
//    its slot, or gives up, it lets go of the lock and the lock manager makes the next in line the
//    first waiter.
// Waiters pass different n? The line is one line: the first waiter waits for a slot below its own
// n, and everybody behind it waits for it (head-of-line blocking, as in fair semaphores with
// multi-permit acquires). This also leaves room for claims of k slots at once: the first waiter
// would take k slots or none.
//
// Postgres' deadlock detector sees the line but not the first waiter's latch sleep, so the first
// waiter checks for cycles itself (deadlock_check.hpp).
#pragma once

#include "pg/base/claim_types.hpp"

namespace pgsem {

// pgsem.first_waiter_recheck, in milliseconds (0: never): how often a first waiter looks for a
// slot again with nobody having woken it. Every path that frees a slot wakes the first waiter
// (xact/pending_wakes.hpp); the recheck serves the few that cannot (COMMIT PREPARED or ROLLBACK
// PREPARED of a transaction that wrote claims, run by a session that may not have loaded pgsem;
// a superuser's DELETE from pgsem.claims). Tests turn it off to see that no other path misses its
// wake-up. Defined in module.cpp.
extern int first_waiter_recheck_ms;

// A wait in line, step by step; the claim sequence drives it:
//   if (line_join(...)) {                  // in the lock manager's queue until first, or deadline
//       for (;;) {                         // first in line
//           line_begin_look(); look; line_end_look();
//           if (granted || !line_sleep(...)) break;
//       }
//       line_leave();
//   }
// Errors (cancellation, timeouts, a deadlock) leave no claim and no place in line.
struct LineWait {
    const SlotRequest *request;
    TimestampTz deadline;
    TimestampTz lock_deadline;  // the caller's own lock_timeout, counted from the start (0: none)
    int64 deadlock_interval;
    TimestampTz next_deadlock_check;
    bool deadlock_suspected;
    bool watch_client;
    MemoryContext caller;
    MemoryContext look_context;  // each look's, emptied before the next
    TimestampTz since;           // when the wait began, for the registry
    int32 noted_n;               // the n the registry shows (a declaration may change n)
    bool timed;                  // time alone ends the wait (a token bucket's): never deadlocked
};

// Waits in the lock manager's queue for first place; false when `deadline` came first. `timed`:
// the first waiter's room comes back with time alone (a token bucket, claim/bucket_grants.hpp),
// so it checks for no deadlock, and others' checks count it as able to go on.
bool line_join(LineWait *wait, const SlotRequest &request, TimestampTz start, TimestampTz deadline,
               bool timed = false);
// Brackets a look for a slot: in a memory context of its own, emptied before the next, so a wait
// of any length takes no more memory than one look.
void line_begin_look(LineWait *wait);
void line_end_look(LineWait *wait);
// After a look that found too few slots (`lacking` more are needed): checks for deadlocks (40P01)
// and the caller's lock_timeout (55P03), then -- unless it did check for deadlocks, after which
// the caller looks again at once -- sleeps until woken, until `next_expiry` (a lease the look saw
// may run out then; 0: none), the deadline, the next deadlock check or
// pgsem.first_waiter_recheck. False when the deadline has passed.
bool line_sleep(LineWait *wait, TimestampTz next_expiry, int32 lacking);
// Gives first place to the next in line.
void line_leave(LineWait *wait);

}  // namespace pgsem
