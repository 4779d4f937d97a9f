#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"

namespace pgsem {

void require_primary(const char *function, bool refuse_in_read_only) {
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("%s cannot run on a hot standby", function),
                        errdetail("Semaphores live on the primary: in a table only the primary can "
                                  "write, and in locks that would exclude nobody on the primary."),
                        errhint("Connect to the primary.")));
    if (refuse_in_read_only) PreventCommandIfReadOnly(function);
}

void require_outside_transaction_block(const char *function) {
    // A subtransaction (a savepoint, a PL/pgSQL block with EXCEPTION) rolls back as well.
    if (IsTransactionBlock() || IsSubTransaction())
        ereport(ERROR,
                (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
                 errmsg("%s cannot run inside a transaction block or subtransaction", function),
                 errdetail("A grant rolled back with the transaction would give its permits "
                           "back after the call it allowed was made."),
                 errhint("Call it in a statement of its own (autocommit), before the work it "
                         "limits.")));
    // A pipeline (extended protocol, no Sync between statements) is an implicit transaction too:
    // the client reads this statement's answer while a later statement of the pipeline can still
    // fail and roll it back. Refused after the pipeline's first statement, as
    // PreventInTransactionBlock refuses VACUUM there.
    if ((MyXactFlags & XACT_FLAGS_PIPELINING) != 0)
        ereport(ERROR, (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
                        errmsg("%s cannot run inside a pipeline", function),
                        errdetail("A grant rolled back by a later statement of the pipeline "
                                  "would give its permits back after the call it allowed was "
                                  "made."),
                        errhint("Send a Sync before it, or call it outside the pipeline.")));
    // The first statement of a pipeline: committed as soon as it completes, not at the Sync.
    MyXactFlags |= XACT_FLAGS_NEEDIMMEDIATECOMMIT;
}

}  // namespace pgsem
