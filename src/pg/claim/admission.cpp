#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"
#include "pg/xact/statement_depth.hpp"

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
    // A DO block or a procedure run outside a transaction block may ROLLBACK, at any point
    // after the grant answered true (and COMMIT, with its work on the grant half done).
    if (inside_transaction_control())
        ereport(ERROR,
                (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
                 errmsg("%s cannot run inside a DO block or procedure", function),
                 errdetail("Their ROLLBACK would give a grant's permits back after the call it "
                           "allowed was made."),
                 errhint("Call it in a statement of its own, before the CALL or DO.")));
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
    // A portal run a few rows at a time (Execute with max_rows): the client reads the answer,
    // and the portal waits, its transaction open, for the next Execute or the Sync; a failing
    // statement sent before the Sync would roll the grant back. (With no row limit the portal
    // runs to its end, and a first statement commits then: below.)
    if (client_reads_rows_before_statement_ends())
        ereport(ERROR, (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
                        errmsg("%s cannot run in a portal fetched with a row limit", function),
                        errdetail("Its answer would reach the client while the statement, and "
                                  "the grant, could still be rolled back."),
                        errhint("Execute it with no row limit (max_rows 0).")));
    // The first statement of a pipeline: committed as soon as it completes, not at the Sync.
    MyXactFlags |= XACT_FLAGS_NEEDIMMEDIATECOMMIT;
}

}  // namespace pgsem
