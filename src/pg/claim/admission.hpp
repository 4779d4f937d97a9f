// Whether a call that changes semaphores may run here and now: the first step of the claim
// sequence, and of every act on a lease by id.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Refused on a hot standby (25006), where the claims table cannot be written and a lock would
// exclude nobody on the primary. `refuse_in_read_only` also refuses them in a read-only
// transaction (they write).
void require_primary(const char *function, bool refuse_in_read_only);

// A rate limit's grant tells its caller "go ahead" at once, but is made by the caller's
// transaction: inside a transaction block, the caller could act on it and then roll it back (a
// savepoint too, an error later, ROLLBACK PREPARED), and the permit would be granted again while
// the call it allowed had been made. Refused there, and in subtransactions (a PL/pgSQL block
// with EXCEPTION rolls back too): 25001. A statement of its own commits before its caller sees
// the answer.
void require_outside_transaction_block(const char *function);

}  // namespace pgsem
