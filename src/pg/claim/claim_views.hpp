// The rows behind the monitoring views that MVCC cannot give them: claims made by transactions
// still open or prepared, which already hold their slots (claimers count them) but which no
// snapshot of another session shows; transaction and session claims, which are locks; and the
// waiters in line. What holds and who waits comes from the table (dirty reads) and the lock
// manager; names and since-when of lock-held claims and of waits from the registry.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Puts every unended claim -- committed or not -- into `store`, one row per claim, in the shape
// of pgsem.unended_claims() (pgsem--1.1--1.2.sql): the claim's columns, whether it is committed,
// and for one that is not, its transaction's top-level xid, the pid running it (NULL when it is
// prepared) and when that transaction started; for a committed one, the same of a transaction
// that locks or changes it (a fence, a release or renewal in flight). The 14 columns of 1.1's
// pgsem.live_claims() are served too, for 1.1 objects on this library.
void live_claim_rows(Tuplestorestate *store, TupleDesc desc);

// Every transaction and session claim of this database, one row per slot-holder lock, in the
// shape of pgsem.lock_claims(): name, slot, kind, n, since (NULL when the registry had no room
// to list it), pid, role, application_name, and the start of the holding transaction.
void lock_claim_rows(Tuplestorestate *store, TupleDesc desc);

// Every claim waiting in line in this database, in the shape of pgsem.waiters(): name, n, kind,
// pid, role, application_name, waiting since, and the position in line (1: first).
void waiter_rows(Tuplestorestate *store, TupleDesc desc);

}  // namespace pgsem
