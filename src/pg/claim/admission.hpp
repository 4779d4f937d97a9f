// Whether a call that changes semaphores may run here and now: the first step of the claim
// sequence, and of every act on a lease by id.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Refused on a hot standby (25006), where the claims table cannot be written and a lock would
// exclude nobody on the primary. `refuse_in_read_only` also refuses them in a read-only
// transaction (they write).
void require_primary(const char *function, bool refuse_in_read_only);

}  // namespace pgsem
