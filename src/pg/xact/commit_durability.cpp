#include "pg/xact/commit_durability.hpp"
#include "pg/base/postgres_api.hpp"

namespace pgsem {

namespace {

enum class Writes : unsigned char { kNone, kOnlyLosable, kOther };

// What the current transaction has written, as far as pgsem can tell.
Writes writes = Writes::kNone;
// XactLastRecEnd after the last losable write: if it has not moved by commit time, nothing was
// written since.
XLogRecPtr losable_end = InvalidXLogRecPtr;
// A claim or renewal was made: the commit must be durable whatever the setting says by then.
bool durable_required = false;

void set_synchronous_commit_for_transaction(const char *value) {
    (void)set_config_option("synchronous_commit", value, PGC_USERSET, PGC_S_SESSION,
                            GUC_ACTION_LOCAL, true, 0, false);
}

}  // namespace

// The decision is taken at PRE_COMMIT, because no user code runs after it: a synchronous_commit
// set by SET LOCAL, set_config() or a function's SET clause after the claim has had its say, and
// is overridden here.
void durability_before_commit() {
    if (durable_required) {
        // "on" also waits for synchronous standbys; remote_apply is stronger still.
        if (synchronous_commit < SYNCHRONOUS_COMMIT_ON)
            set_synchronous_commit_for_transaction("on");
    } else if (writes == Writes::kOnlyLosable && XactLastRecEnd == losable_end) {
        set_synchronous_commit_for_transaction("off");
    }
}

// PREPARE TRANSACTION flushes its record and waits for synchronous standbys as the session's
// setting says; from then on the claim survives a crash or a failover, held by the prepared
// transaction. COMMIT PREPARED waits as the committing session's setting says, which pgsem cannot
// see (that session need not have loaded pgsem).
void durability_before_prepare() {
    if (durable_required && synchronous_commit < SYNCHRONOUS_COMMIT_ON)
        set_synchronous_commit_for_transaction("on");
}

void durability_at_end() {
    writes = Writes::kNone;
    durable_required = false;
}

void before_losable_write() {
    if (writes == Writes::kOther) return;
    if (!TransactionIdIsValid(GetTopTransactionIdIfAny()))
        writes = Writes::kOnlyLosable;  // nothing written yet: no xid
    else if (writes != Writes::kOnlyLosable || XactLastRecEnd != losable_end)
        writes = Writes::kOther;  // something else was written before
}

void after_losable_write() {
    if (writes == Writes::kOnlyLosable) losable_end = XactLastRecEnd;
}

void require_durable_commit() {
    writes = Writes::kOther;
    durable_required = true;
}

}  // namespace pgsem
