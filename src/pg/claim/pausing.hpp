// Pauses of a name (sem_pause): who may set one, and its bounds. What a pause does to a claim is
// the claim sequence's (claim_sequence.cpp: every look of a paused name finds nothing until the
// pause ends, and a waiter's timer is set to its end).
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Pauses `name` until `until` (`clear`: lifts the pause), for a role with the right to claim it
// (42501 otherwise); 22023 for a pause more than a day ahead, 54000 past the number of pauses a
// database keeps. A pause only moves later; one whose time has passed changes nothing. Returns
// the pause in force afterwards, or 0.
TimestampTz pause_name(const char *function, const text *name, bool clear, TimestampTz until);

}  // namespace pgsem
