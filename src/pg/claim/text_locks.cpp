#include "pg/store/locks.hpp"
#include "pg/xact/statement_depth.hpp"
#include "pg/claim/text_locks.hpp"

namespace pgsem {

bool text_lock_acquire(const TextLock &lock, const text *key) {
    // Advisory locks are not replicated: one taken on a standby excludes nobody on the primary.
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("%s cannot run on a hot standby", lock.sql_name),
                        errdetail("Advisory locks are local to one server: a lock taken here "
                                  "would exclude nobody on the primary."),
                        errhint("Take the lock on the primary.")));
    if (lock.scope == LockScope::kTransaction)
        warn_if_statement_scoped(lock.sql_name,
                                 "Call it between BEGIN and COMMIT, or use the "
                                 "advisory_session_* functions.");
    LOCKTAG tag;
    bigint_key_locktag(&tag, varlena_key(key));
    const LockAcquireResult result = LockAcquire(&tag, lock.mode, lock.scope == LockScope::kSession,
                                                 lock.wait == LockWait::kTry);
    return result != LOCKACQUIRE_NOT_AVAIL;
}

bool text_lock_release(const text *key, LOCKMODE mode) {
    LOCKTAG tag;
    bigint_key_locktag(&tag, varlena_key(key));
    return LockRelease(&tag, mode, true);
}

}  // namespace pgsem
