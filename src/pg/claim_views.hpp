// The rows behind the monitoring views that MVCC cannot give them: claims made by transactions
// still open or prepared, which already hold their slots (claimers count them) but which no
// snapshot of another session shows.
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

// Puts every unended claim -- committed or not -- into `store`, one row per claim, in the shape
// of pgsem.live_claims() (pgsem--1.0--1.1.sql): the claim's columns, whether it is committed,
// and for one that is not, its transaction's top-level xid, the pid running it (NULL when it is
// prepared) and when that transaction started.
void live_claim_rows(Tuplestorestate *store, TupleDesc desc);

}  // namespace pgsem
