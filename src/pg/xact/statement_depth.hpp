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

// True inside a DO block or a procedure that may COMMIT and ROLLBACK (one CALLed, or a DO run,
// as the top-level statement outside a transaction block), at any depth of the code it calls:
// there a transaction ends while the code goes on, and a rollback can undo what it was told.
bool inside_transaction_control();

// True while the client's statement runs with a row limit (an extended-protocol Execute with
// max_rows, which libpq never sends), or runs in an extended-protocol portal whose rows are sent
// from a store, where a row limit cannot be seen: the rows go to the client and its portal is
// suspended, its transaction open, before the statement has ended -- the client can act on them
// and still roll the statement back.
bool client_reads_rows_before_statement_ends();

// Emits the WARNING that a transaction-scoped protection taken here protects nothing, when
// transaction_ends_with_statement() holds. `what` names the function; `hint` says what to do.
void warn_if_statement_scoped(const char *what, const char *hint);

}  // namespace pgsem
