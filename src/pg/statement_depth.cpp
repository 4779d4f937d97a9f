#include "pg/postgres_api.hpp"
#include "pg/statement_depth.hpp"

namespace pgsem {

namespace {

int nesting_depth = 0;
ExecutorRun_hook_type previous_run = nullptr;
ExecutorFinish_hook_type previous_finish = nullptr;
ProcessUtility_hook_type previous_utility = nullptr;

void depth_run(QueryDesc *query, ScanDirection direction, uint64 count, bool execute_once) {
    ++nesting_depth;
    PG_TRY();
    {
        if (previous_run != nullptr)
            previous_run(query, direction, count, execute_once);
        else
            standard_ExecutorRun(query, direction, count, execute_once);
    }
    PG_FINALLY();
    { --nesting_depth; }
    PG_END_TRY();
}

// AFTER triggers run from ExecutorFinish: queries they run are nested too.
void depth_finish(QueryDesc *query) {
    ++nesting_depth;
    PG_TRY();
    {
        if (previous_finish != nullptr)
            previous_finish(query);
        else
            standard_ExecutorFinish(query);
    }
    PG_FINALLY();
    { --nesting_depth; }
    PG_END_TRY();
}

// DO blocks and CALL run their statements inside a utility command: those are nested as well.
void depth_utility(PlannedStmt *statement, const char *query_string, bool read_only_tree,
                   ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                   DestReceiver *dest, QueryCompletion *completion) {
    ++nesting_depth;
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
    { --nesting_depth; }
    PG_END_TRY();
}

}  // namespace

void install_statement_depth_hooks() {
    previous_run = ExecutorRun_hook;
    ExecutorRun_hook = depth_run;
    previous_finish = ExecutorFinish_hook;
    ExecutorFinish_hook = depth_finish;
    previous_utility = ProcessUtility_hook;
    ProcessUtility_hook = depth_utility;
}

bool transaction_ends_with_statement() {
    return !IsTransactionBlock() && nesting_depth <= 1;
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
