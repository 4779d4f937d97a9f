// How the transactions that write claims commit.
//
// Claims and renewals must survive a crash or a failover to a synchronous standby: a claim lost
// after its holder saw it commit would let a second holder in. So they commit with at least
// synchronous_commit = on, whatever the session asked for.
//
// Releases (and the timeouts recorded on the way) may be lost: the claim then just stays until
// its lease runs out. A transaction whose only writes are such records commits without waiting
// for its WAL flush, so the slot frees up one flush sooner. This cannot let a second holder in
// after a crash: the next claim of the slot commits synchronously, and flushing its commit record
// flushes every earlier record, the release's included. A transaction that writes anything else
// keeps the session's setting; the check is made at commit, from the WAL this backend wrote.
#pragma once

namespace pgsem {

// For the transaction-event dispatcher (xact_events.cpp): decides the commit's (or PREPARE's)
// synchronous_commit when nothing can change it any more, and forgets at the end.
void durability_before_commit();
void durability_before_prepare();
void durability_at_end();

// Brackets a write that may be lost in a crash (a release, a recorded timeout).
void before_losable_write();
void after_losable_write();

// For claims and renewals: this transaction commits with synchronous_commit at least 'on',
// decided at PRE_COMMIT, whatever the setting was changed to in between.
void require_durable_commit();

}  // namespace pgsem
