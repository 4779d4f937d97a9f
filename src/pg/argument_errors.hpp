// Turns the core's argument verdicts (src/core/arguments.hpp) into errors with SQLSTATEs.
// Each function returns only when the argument is acceptable.
#pragma once

#include "core/arguments.hpp"
#include "pg/postgres_api.hpp"

namespace pgsem {

// `function` names the SQL function in messages, e.g. "sem_claim()".
void require_valid_name(const char *function, bool is_null, const text *name);
void require_valid_slots(const char *function, bool is_null, int32 n);
// Returns the lease in microseconds.
int64 require_valid_lease(const char *function, bool is_null, const Interval *lease);

}  // namespace pgsem
