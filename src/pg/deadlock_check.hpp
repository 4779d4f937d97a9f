// Cycles of waits that pass through a semaphore's first waiter, which sleeps on its latch where
// Postgres' deadlock detector does not look. The first waiter checks for them itself: it builds
// the wait-for graph from one consistent copy of the lock table (GetLockStatusData, as pg_locks)
// and the semaphores' uncommitted lease claims, and asks src/core/deadlock.hpp whether it can ever
// get a slot. Only lock-manager facts make edges: lock waits (AND: every conflicting holder), the
// first waiters of semaphores (OR: any holder of a slot, by a transaction or session claim, or by
// an uncommitted lease), and leases committed and live, which always end (so their semaphore's
// first waiter is never stuck).
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

// True when this backend -- the first waiter of `name`, every slot below its n held -- can never
// get a slot: each holder waits, directly or through others, for something this backend holds.
bool first_waiter_deadlocked(const text *name);

// The error for it: 40P01, like Postgres' own deadlocks.
[[noreturn]] void raise_semaphore_deadlock(const text *name);

}  // namespace pgsem
