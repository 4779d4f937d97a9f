// A claim row this transaction holds a tuple lock on, and the writes that need one.
//
// Only claims_lock makes a LockedClaim, and the writes that change a claim take one: a write can
// name no row that was not locked. Each LockedClaim keeps the locked version in a tuple slot of
// its own, apart from the slots of scans, so locking a row while a scan is open disturbs neither.
#pragma once

#include "pg/claims_table.hpp"

namespace pgsem {

struct LockedClaim {
    TupleTableSlot *tuple;  // the locked version; made by the first claims_lock into this value
    ClaimRow row;           // its columns
};

// Locks the row version at tid. On TM_Ok, *locked is the locked version; the lock lasts until the
// transaction ends. LockWaitSkip returns TM_WouldBlock instead of waiting; LockWaitBlock waits in
// the lock manager (visible in pg_locks, subject to lock_timeout and the deadlock detector).
// `locked` starts zeroed ({}) and may be reused for another lock, which replaces the first.
TM_Result claims_lock(ClaimsTable *table, ItemPointerData tid, LockTupleMode mode,
                      LockWaitPolicy wait, LockedClaim *locked);

// The semaphore name of a locked claim (valid while `locked` holds that lock).
const text *locked_claim_name(const LockedClaim &locked);

// Writes to the locked version. Each makes its change visible to the rest of the transaction.
void claims_end(ClaimsTable *table, const LockedClaim &locked, TimestampTz ended_at,
                Outcome outcome);
void claims_extend(ClaimsTable *table, const LockedClaim &locked, TimestampTz expires_at);
void claims_delete(ClaimsTable *table, const LockedClaim &locked);

}  // namespace pgsem
