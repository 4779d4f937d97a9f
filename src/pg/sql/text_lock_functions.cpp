// SQL glue for text-keyed advisory locks (the locking itself is in text_locks.cpp).
#include "pg/base/boundary.hpp"
#include "pg/claim/text_locks.hpp"

namespace {

using pgsem::LockScope;
using pgsem::LockWait;
using pgsem::TextLock;

// The key argument; a null key is an error, never a silent "locked nothing".
const text *key_argument(FunctionCallInfo fcinfo, const char *sql_name) {
    if (PG_ARGISNULL(0))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: the lock key must not be null", sql_name),
                        errdetail("A null key cannot name a lock; nothing was locked.")));
    return PG_GETARG_TEXT_PP(0);
}

bool acquire(FunctionCallInfo fcinfo, const TextLock &lock) {
    return pgsem::text_lock_acquire(lock, key_argument(fcinfo, lock.sql_name));
}

bool release(FunctionCallInfo fcinfo, const char *sql_name, LOCKMODE mode) {
    return pgsem::text_lock_release(key_argument(fcinfo, sql_name), mode);
}

constexpr TextLock kXactExclusive{"advisory_lock_text()", LockScope::kTransaction, ExclusiveLock,
                                  LockWait::kBlock};
constexpr TextLock kXactShared{"advisory_lock_text_shared()", LockScope::kTransaction, ShareLock,
                               LockWait::kBlock};
constexpr TextLock kXactTryExclusive{"advisory_try_lock_text()", LockScope::kTransaction,
                                     ExclusiveLock, LockWait::kTry};
constexpr TextLock kXactTryShared{"advisory_try_lock_text_shared()", LockScope::kTransaction,
                                  ShareLock, LockWait::kTry};
constexpr TextLock kSessionExclusive{"advisory_session_lock_text()", LockScope::kSession,
                                     ExclusiveLock, LockWait::kBlock};
constexpr TextLock kSessionShared{"advisory_session_lock_text_shared()", LockScope::kSession,
                                  ShareLock, LockWait::kBlock};
constexpr TextLock kSessionTryExclusive{"advisory_session_try_lock_text()", LockScope::kSession,
                                        ExclusiveLock, LockWait::kTry};
constexpr TextLock kSessionTryShared{"advisory_session_try_lock_text_shared()", LockScope::kSession,
                                     ShareLock, LockWait::kTry};

}  // namespace

PGSEM_SQL_FUNCTION(pgsem_advisory_lock_text) {
    acquire(fcinfo, kXactExclusive);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_lock_text_shared) {
    acquire(fcinfo, kXactShared);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_try_lock_text) {
    PG_RETURN_BOOL(acquire(fcinfo, kXactTryExclusive));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_try_lock_text_shared) {
    PG_RETURN_BOOL(acquire(fcinfo, kXactTryShared));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_lock_text) {
    acquire(fcinfo, kSessionExclusive);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_lock_text_shared) {
    acquire(fcinfo, kSessionShared);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_try_lock_text) {
    PG_RETURN_BOOL(acquire(fcinfo, kSessionTryExclusive));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_try_lock_text_shared) {
    PG_RETURN_BOOL(acquire(fcinfo, kSessionTryShared));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_unlock_text) {
    PG_RETURN_BOOL(release(fcinfo, "advisory_session_unlock_text()", ExclusiveLock));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_unlock_text_shared) {
    PG_RETURN_BOOL(release(fcinfo, "advisory_session_unlock_text_shared()", ShareLock));
}
