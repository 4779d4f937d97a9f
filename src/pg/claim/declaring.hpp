// Declaring semaphores (sem_declare, sem_undeclare, sem_grant, sem_revoke and their PUBLIC
// forms): who may, as Postgres decides who may create and alter an object.
//   - Declaring a new name or prefix takes it from everyone else, so only the database's owner
//     (members of pg_database_owner) and superusers may; the declaring role owns it.
//   - Changing, undeclaring, granting and revoking: the owner (membership counts) and superusers.
// The rows are written as the table's owner (store/declarations.hpp); the trigger on the table
// tells every backend, and wakes the first waiters, once the transaction commits.
#pragma once

#include "pg/store/declarations.hpp"

namespace pgsem {

// Declares `pattern` or changes its limits (NULL maxima: none), a semaphore or a rate limit as
// `limits` says; `function` (sem_declare(), sem_declare_rate(), ...) names it in messages.
void declare(const char *function, const text *pattern, const DeclaredLimits &limits);
// False when `pattern` is not declared.
bool undeclare(const text *pattern);
// Gives (`granted`) or takes the right to claim names under `pattern` to `grantee`, InvalidOid
// meaning PUBLIC; 42704 when `pattern` is not declared.
void set_claim_right(const char *function, const text *pattern, Oid grantee, bool granted);

}  // namespace pgsem
