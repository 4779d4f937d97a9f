#include "pg/base/postgres_api.hpp"
#include "pg/xact/statement_depth.hpp"
#include "tcop/pquery.h"

namespace pgsem {

namespace {

// Queries being executed, one inside another: the top-level statement's is 1; a query run by an
// SQL function, a trigger or a cursor inside it makes 2.
int executor_depth = 0;
// Procedural code running: DO blocks, CALL, and calls of functions in procedural languages
// (PL/pgSQL and the like), whose expressions PL/pgSQL may evaluate without a query of its own.
int procedural_depth = 0;
// DO blocks and CALLs run as the top-level statement outside a transaction block: non-atomic,
// their code may COMMIT and ROLLBACK.
int nonatomic_depth = 0;
// The client's portal while a top-level utility statement runs (EXECUTE of a prepared statement
// runs its query in a portal of its own, which is then the active one).
Portal client_portal = nullptr;

// The client's own statement is being run with a row limit: an extended-protocol Execute with
// max_rows, after which its portal is suspended with its transaction still open, and the client
// has read those rows before the statement (and its transaction) ends.
bool client_row_limit = false;

ExecutorRun_hook_type previous_run = nullptr;
ExecutorFinish_hook_type previous_finish = nullptr;
ProcessUtility_hook_type previous_utility = nullptr;
needs_fmgr_hook_type previous_needs_fmgr = nullptr;
fmgr_hook_type previous_fmgr = nullptr;

void depth_run(QueryDesc *query, ScanDirection direction, uint64 count, bool execute_once) {
    // Only a run whose rows go to the client as an Execute's (DestRemoteExecute) is the client's
    // portal: a procedure's statements (PL/pgSQL fetches one or two rows of a SELECT INTO), its
    // cursors and an SQL function's lazy fetches run with counts of their own, which nobody
    // outside sees. (Not told by depth: the statement that loads the library has none yet.)
    const bool clients = query->dest != nullptr && query->dest->mydest == DestRemoteExecute;
    if (clients) client_row_limit = count != 0;
    ++executor_depth;
    PG_TRY();
    {
        if (previous_run != nullptr)
            previous_run(query, direction, count, execute_once);
        else
            standard_ExecutorRun(query, direction, count, execute_once);
    }
    PG_FINALLY();
    {
        --executor_depth;
        if (clients) client_row_limit = false;
    }
    PG_END_TRY();
}

// AFTER triggers run from ExecutorFinish: queries they run are nested too.
void depth_finish(QueryDesc *query) {
    ++executor_depth;
    PG_TRY();
    {
        if (previous_finish != nullptr)
            previous_finish(query);
        else
            standard_ExecutorFinish(query);
    }
    PG_FINALLY();
    { --executor_depth; }
    PG_END_TRY();
}

// DO and CALL run procedural code. Other utility statements that run a query -- EXECUTE of a
// prepared statement, EXPLAIN ANALYZE, CREATE TABLE AS, COPY (query) -- run it as the statement
// itself, and do not count.
void depth_utility(PlannedStmt *statement, const char *query_string, bool read_only_tree,
                   ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                   DestReceiver *dest, QueryCompletion *completion) {
    const bool procedural =
        IsA(statement->utilityStmt, DoStmt) || IsA(statement->utilityStmt, CallStmt);
    // As ExecuteDoStmt and ExecuteCallStmt decide atomicity.
    const bool nonatomic =
        procedural && context == PROCESS_UTILITY_TOPLEVEL && !IsTransactionBlock();
    if (procedural) ++procedural_depth;
    if (nonatomic) ++nonatomic_depth;
    const Portal outer_portal = client_portal;
    if (context == PROCESS_UTILITY_TOPLEVEL) client_portal = ActivePortal;
    PG_TRY();
    {
        if (previous_utility != nullptr)
            previous_utility(statement, query_string, read_only_tree, context, params, query_env,
                             dest, completion);
        else
            standard_ProcessUtility(statement, query_string, read_only_tree, context, params,
                                    query_env, dest, completion);
    }
    PG_FINALLY();
    {
        if (procedural) --procedural_depth;
        if (nonatomic) --nonatomic_depth;
        client_portal = outer_portal;
    }
    PG_END_TRY();
}

// Functions in procedural languages get the fmgr hook around their calls. Built-in, C and SQL
// functions do not: built-ins never ask, C functions run no statements of their own, and SQL
// functions that are not inlined run theirs through the executor -- saying "no" for them keeps
// SQL-function inlining, which the planner skips for any function that needs the hook.
bool needs_depth_hook(Oid function) {
    if (previous_needs_fmgr != nullptr && previous_needs_fmgr(function)) return true;
    if (function < FirstNormalObjectId) return false;
    const HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
    if (!HeapTupleIsValid(tuple)) return false;
    const Oid language = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple))->prolang;
    ReleaseSysCache(tuple);
    return language != ClanguageId && language != INTERNALlanguageId && language != SQLlanguageId;
}

void depth_fmgr(FmgrHookEventType event, FmgrInfo *flinfo, Datum *private_data) {
    if (event == FHET_START)
        ++procedural_depth;
    else if (procedural_depth > 0)
        --procedural_depth;  // FHET_END, or FHET_ABORT on the way out of an error
    if (previous_fmgr != nullptr) previous_fmgr(event, flinfo, private_data);
}

}  // namespace

void install_statement_depth_hooks() {
    previous_run = ExecutorRun_hook;
    ExecutorRun_hook = depth_run;
    previous_finish = ExecutorFinish_hook;
    ExecutorFinish_hook = depth_finish;
    previous_utility = ProcessUtility_hook;
    ProcessUtility_hook = depth_utility;
    previous_needs_fmgr = needs_fmgr_hook;
    needs_fmgr_hook = needs_depth_hook;
    previous_fmgr = fmgr_hook;
    fmgr_hook = depth_fmgr;
}

bool transaction_ends_with_statement() {
    return !IsTransactionBlock() && executor_depth <= 1 && procedural_depth == 0;
}

bool inside_transaction_control() {
    // The counter misses the statement that loaded the library (its hooks came after it began):
    // then the innermost SPI connection (PL/pgSQL's, when the DO or procedure calls directly),
    // and the client's portal, which is the DO's or CALL's own, tell.
    if (nonatomic_depth > 0 || SPI_inside_nonatomic_context()) return true;
    return ActivePortal != nullptr && !IsTransactionBlock() &&
           (ActivePortal->commandTag == CMDTAG_DO || ActivePortal->commandTag == CMDTAG_CALL);
}

namespace {

// A portal of the extended protocol (visible, as a simple query's is not) running now, whose rows
// are sent from a store its query fills first.
bool running_from_store(Portal portal) {
    if (portal == nullptr || !portal->visible || portal->status != PORTAL_ACTIVE) return false;
    switch (portal->strategy) {
        case PORTAL_ONE_RETURNING:
        case PORTAL_ONE_MOD_WITH:
        case PORTAL_UTIL_SELECT:
            return true;
        default:
            return false;
    }
}

}  // namespace

bool client_reads_rows_before_statement_ends() {
    if (client_row_limit) return true;
    // A portal whose query runs to its end into a store first (INSERT ... RETURNING, a WITH that
    // writes, EXECUTE of a prepared statement), and is then sent from the store: a row limit of
    // the client's applies to the sending alone, which runs no query, so it cannot be seen here.
    // Such a portal of the extended protocol may be fetched a row at a time: refused whatever
    // the limit. Inside a transaction block the block's own rule applies. The client's portal:
    // the active one, or the one a top-level utility statement (EXECUTE) runs in; and the
    // unnamed portal, most clients' one, when the library was loaded by this very statement.
    if (IsTransactionBlock()) return false;
    return running_from_store(client_portal != nullptr ? client_portal : ActivePortal) ||
           running_from_store(GetPortalByName(""));
}

void warn_if_statement_scoped(const char *what, const char *hint) {
    if (!transaction_ends_with_statement()) return;
    ereport(WARNING,
            (errcode(ERRCODE_NO_ACTIVE_SQL_TRANSACTION),
             errmsg("%s outside a transaction block protects nothing", what),
             errdetail("It ends with this statement's transaction, before any later statement "
                       "runs."),
             errhint("%s", hint)));
}

}  // namespace pgsem
