// Knows whether the current call is a statement of its own outside a transaction block, where a
// transaction-scoped lock or fence ends with the statement and so protects nothing after it.
#pragma once

namespace pgsem {

// Installs executor, utility and function-manager hooks that count statement nesting: queries
// inside queries (as pg_stat_statements does), and procedural code -- DO, CALL, and functions in
// procedural languages. Called once, from _PG_init.
void install_statement_depth_hooks();

// True when the transaction ends with the current top-level statement: outside BEGIN ... COMMIT
// (implicit multi-statement blocks count as blocks) and not nested in a query of a function, a
// DO block, a procedure or a procedural-language function. EXECUTE of a prepared statement and
// EXPLAIN ANALYZE run their query as the top-level statement. In the one statement that loads the
// library (unless it is preloaded) the depth is not known yet and counts as top level.
bool transaction_ends_with_statement();

// Emits the WARNING that a transaction-scoped protection taken here protects nothing, when
// transaction_ends_with_statement() holds. `what` names the function; `hint` says what to do.
void warn_if_statement_scoped(const char *what, const char *hint);

}  // namespace pgsem
