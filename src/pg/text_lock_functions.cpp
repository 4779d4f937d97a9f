// SQL glue for text-keyed advisory locks: each function takes, tries or releases exactly the lock
// that the matching pg_advisory_*(bigint) function takes on fnv1a_64(key).
#include "pg/boundary.hpp"
#include "pg/lock_tags.hpp"
#include "pg/statement_depth.hpp"

namespace pgsem {

namespace {

enum class Scope : unsigned char { kTransaction, kSession };
enum class Wait : unsigned char { kBlock, kTry };

struct TextLock {
    const char *sql_name;
    Scope scope;
    LOCKMODE mode;  // ExclusiveLock or ShareLock, as Postgres' advisory functions use
    Wait wait;
};

int64 key_argument(FunctionCallInfo fcinfo, const char *sql_name) {
    if (PG_ARGISNULL(0))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: the lock key must not be null", sql_name),
                        errdetail("A null key cannot name a lock; nothing was locked.")));
    return text_key(PG_GETARG_TEXT_PP(0));
}

// Returns whether the lock was taken (always true when waiting: failures are errors).
bool acquire(FunctionCallInfo fcinfo, const TextLock &lock) {
    const int64 key = key_argument(fcinfo, lock.sql_name);
    // Advisory locks are not replicated: one taken on a standby excludes nobody on the primary.
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("%s cannot run on a hot standby", lock.sql_name),
                        errdetail("Advisory locks are local to one server: a lock taken here "
                                  "would exclude nobody on the primary."),
                        errhint("Take the lock on the primary.")));
    if (lock.scope == Scope::kTransaction)
        warn_if_statement_scoped(lock.sql_name,
                                 "Call it between BEGIN and COMMIT, or use the "
                                 "advisory_session_* functions.");
    LOCKTAG tag;
    bigint_key_locktag(&tag, key);
    const LockAcquireResult result =
        LockAcquire(&tag, lock.mode, lock.scope == Scope::kSession, lock.wait == Wait::kTry);
    return result != LOCKACQUIRE_NOT_AVAIL;
}

// Like pg_advisory_unlock: false, with Postgres' own WARNING, when the lock was not held.
bool release(FunctionCallInfo fcinfo, const char *sql_name, LOCKMODE mode) {
    const int64 key = key_argument(fcinfo, sql_name);
    LOCKTAG tag;
    bigint_key_locktag(&tag, key);
    return LockRelease(&tag, mode, true);
}

constexpr TextLock kXactExclusive{"advisory_lock_text()", Scope::kTransaction, ExclusiveLock,
                                  Wait::kBlock};
constexpr TextLock kXactShared{"advisory_lock_text_shared()", Scope::kTransaction, ShareLock,
                               Wait::kBlock};
constexpr TextLock kXactTryExclusive{"advisory_try_lock_text()", Scope::kTransaction, ExclusiveLock,
                                     Wait::kTry};
constexpr TextLock kXactTryShared{"advisory_try_lock_text_shared()", Scope::kTransaction, ShareLock,
                                  Wait::kTry};
constexpr TextLock kSessionExclusive{"advisory_session_lock_text()", Scope::kSession, ExclusiveLock,
                                     Wait::kBlock};
constexpr TextLock kSessionShared{"advisory_session_lock_text_shared()", Scope::kSession, ShareLock,
                                  Wait::kBlock};
constexpr TextLock kSessionTryExclusive{"advisory_session_try_lock_text()", Scope::kSession,
                                        ExclusiveLock, Wait::kTry};
constexpr TextLock kSessionTryShared{"advisory_session_try_lock_text_shared()", Scope::kSession,
                                     ShareLock, Wait::kTry};

}  // namespace

}  // namespace pgsem

using pgsem::acquire;

PGSEM_SQL_FUNCTION(pgsem_advisory_lock_text) {
    acquire(fcinfo, pgsem::kXactExclusive);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_lock_text_shared) {
    acquire(fcinfo, pgsem::kXactShared);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_try_lock_text) {
    PG_RETURN_BOOL(acquire(fcinfo, pgsem::kXactTryExclusive));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_try_lock_text_shared) {
    PG_RETURN_BOOL(acquire(fcinfo, pgsem::kXactTryShared));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_lock_text) {
    acquire(fcinfo, pgsem::kSessionExclusive);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_lock_text_shared) {
    acquire(fcinfo, pgsem::kSessionShared);
    PG_RETURN_VOID();
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_try_lock_text) {
    PG_RETURN_BOOL(acquire(fcinfo, pgsem::kSessionTryExclusive));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_try_lock_text_shared) {
    PG_RETURN_BOOL(acquire(fcinfo, pgsem::kSessionTryShared));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_unlock_text) {
    PG_RETURN_BOOL(pgsem::release(fcinfo, "advisory_session_unlock_text()", ExclusiveLock));
}

PGSEM_SQL_FUNCTION(pgsem_advisory_session_unlock_text_shared) {
    PG_RETURN_BOOL(pgsem::release(fcinfo, "advisory_session_unlock_text_shared()", ShareLock));
}
