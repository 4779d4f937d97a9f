// A lock-manager wait with a deadline of pgsem's own. The lock manager's sleep ends only with the
// grant or an error, so the deadline is a timer of pgsem's on the monotonic clock that cancels
// the wait, inside a subtransaction (catching the cancel needs one), whose commit hands the lock
// on to the caller's transaction.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// The clock a call's wait is measured on: the server's wall clock when the call began, moved on by
// CLOCK_MONOTONIC (instr_time) since. A wait's deadlines (start + wait, the caller's lock_timeout)
// are times on it, so a step of the wall clock (an NTP step, `date -s`) neither ends a wait early
// nor stretches it. What is stored on the wall clock (a lease's expiry, a window's edge, a pause)
// is still compared with GetCurrentTimestamp(). A backend makes one call at a time: each call
// that may wait starts the clock, and everything below reads it.
TimestampTz wait_clock_start();
TimestampTz wait_clock_now();

// Runs `wait(name)`, a lock wait of store/locks.hpp, until `deadline` (on the wait clock) at most;
// true once the lock is held, false when the deadline passed first. `lock_deadline` (0: none) is
// when the caller's own lock_timeout runs out: when that comes first its 55P03 stands, as for any
// lock. Cancels, statement_timeout and the deadlock detector end the wait with their errors.
bool wait_for_lock_until(void (*wait)(const text *name), const text *name, TimestampTz deadline,
                         TimestampTz lock_deadline);

// Milliseconds from `now` until `when`, rounded up (0 when it has passed).
int64 millis_until(TimestampTz when, TimestampTz now);

// When the caller's lock_timeout, counted from `start`, runs out (0: it is off).
TimestampTz lock_timeout_deadline(TimestampTz start);

}  // namespace pgsem
