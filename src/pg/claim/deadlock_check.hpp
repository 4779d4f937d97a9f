// Cycles of waits that pass through a semaphore's first waiter, which sleeps on its latch where
// Postgres' deadlock detector does not look. The first waiter checks for them itself: it builds
// the wait-for graph from one consistent copy of the lock table (GetLockStatusData, as pg_locks)
// and the semaphores' unended lease claims, and asks src/core/deadlock.hpp whether it can ever
// get a slot. The edges:
//  - lock waits (AND): every holder in the way, and every waiter queued ahead that asked for a
//    conflicting mode (so a VACUUM FULL queued behind a first waiter, and a release queued behind
//    the VACUUM FULL, close a cycle);
//  - first waiters of semaphores (any m slots below the waiter's n that free up will do; m is 1
//    but for a claim of several permits, which lacks permits minus the free slots it saw):
//    the holders of those slots by a transaction or session claim, the transactions inserting
//    leases on them, and, for a committed lease that a transaction locks or changes (a fence, a
//    release or renewal in flight), a node that frees once all of those transactions have ended.
//    A committed lease nobody is at work on ends by itself: a slot that frees whatever happens.
// A first waiter's n comes from its registry entry; without one, every holder of the semaphore
// counts, which can only hide a deadlock, never invent one. Other first waiters count as lacking
// one slot (the registry does not say their permits): that too can only hide a deadlock.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// True when this backend -- the first waiter of `name`, lacking `lacking` slots below `n` -- can
// never get them: too few of their holders can ever let go, the others waiting, directly or
// through others, for something this backend holds.
bool first_waiter_deadlocked(const text *name, int32 n, int32 lacking);

// The error for it: 40P01, like Postgres' own deadlocks.
[[noreturn]] void raise_semaphore_deadlock(const text *name);

}  // namespace pgsem
