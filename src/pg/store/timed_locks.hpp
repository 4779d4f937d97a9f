// A lock-manager wait with a deadline of pgsem's own. The lock manager knows only lock_timeout,
// so the wait runs with lock_timeout set to the time left, inside a subtransaction (catching the
// timeout's error needs one), whose commit hands the lock on to the caller's transaction.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Runs `wait(name)`, a lock wait of store/locks.hpp, until `deadline` at most; true once the lock
// is held, false when the deadline passed first. `lock_deadline` (0: none) is when the caller's
// own lock_timeout runs out: when that comes first its 55P03 stands, as for any lock. Cancels,
// statement_timeout and the deadlock detector end the wait with their errors.
bool wait_for_lock_until(void (*wait)(const text *name), const text *name, TimestampTz deadline,
                         TimestampTz lock_deadline);

// Milliseconds from `now` until `when`, rounded up (0 when it has passed).
int64 millis_until(TimestampTz when, TimestampTz now);

// When the caller's lock_timeout, counted from `start`, runs out (0: it is off).
TimestampTz lock_timeout_deadline(TimestampTz start);

}  // namespace pgsem
