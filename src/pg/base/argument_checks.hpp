// Turns the core's argument verdicts (src/core/arguments.hpp) into errors with SQLSTATEs, and
// SQL intervals into the core's. Each require_* function returns only when the argument is
// acceptable.
#pragma once

#include "core/arguments.hpp"
#include "pg/base/postgres_api.hpp"

namespace pgsem {

// `function` names the SQL function in messages, e.g. "sem_claim()".
void require_valid_name(const char *function, bool is_null, const text *name);
// A request key: NULL (no key) or 1 to core::kMaxRequestKeyBytes bytes.
void require_valid_request_key(const char *function, bool is_null, const text *key);
void require_valid_n(const char *function, bool is_null, int32 n);
// For a valid n.
void require_valid_permits(const char *function, bool is_null, int32 permits, int32 n);
// Returns the lease in microseconds.
int64 require_valid_lease(const char *function, bool is_null, const Interval *lease);
// Returns how long a claim may wait, in microseconds.
int64 require_valid_wait(const char *function, bool is_null, const Interval *wait);
// A slot number as sem_release_session takes it: in [0, kMaxN).
void require_valid_slot(const char *function, bool is_null, int32 slot);

// An interval's length in microseconds, months counting 30 days (as interval comparison does);
// saturates instead of overflowing.
int64 interval_micros(const Interval *interval);

}  // namespace pgsem
