// The table pgsem.pauses (1.2): names on which nothing is granted before a time (sem_pause), read
// by every claim from a copy each backend keeps -- loaded whole with the latest committed state,
// dropped when the relcache says the table changed (its trigger says so at commit), as
// store/declarations.hpp keeps the declarations.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Called from _PG_init.
void install_pauses_cache_invalidation();

// Until when `name` is paused, or 0: not paused (or the pause has passed, or SQL objects older
// than 1.2). Every claim asks: the clock is read only for a name that has a pause.
TimestampTz pause_until(const text *name);

// How many pauses have not passed at `now`: all of them, and those `role` set.
int pauses_in_force(TimestampTz now);
int pauses_in_force_by(Oid role, TimestampTz now);

// Pauses `name` until `until` (a later pause of the name stays), or, with `clear`, lifts its
// pause; and removes every pause that has passed. As the table's owner (the caller checked the
// right to). Returns the pause in force afterwards, or 0.
TimestampTz pauses_set(const text *name, TimestampTz until, bool clear);

}  // namespace pgsem
