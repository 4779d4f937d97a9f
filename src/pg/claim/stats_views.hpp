// The rows of sem_stats' counters (pgsem.stats()) and their reset.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Every name's counters into `store`, in the shape of pgsem.stats() (pgsem--1.1--1.2.sql). Without
// counters (pgsem not preloaded) no rows, and a notice that says why.
void stats_rows(Tuplestorestate *store, TupleDesc desc);

// sem_stats_reset(name): forgets `name`'s counters (NULL: every name's); how many rows it forgot.
int64 reset_stats(const text *name);

}  // namespace pgsem
