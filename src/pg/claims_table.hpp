// Storage of claims: the table pgsem.claims, read with dirty snapshots and written through the
// executor's simple-relation routines (the ones logical replication uses), so that every index --
// the partial unique index over live claims above all -- and WAL are handled by Postgres itself.
//
// Nothing here decides what a row means; src/core/slot_choice.hpp does. Nothing here takes locks
// other than the table and tuple locks named in each function.
#pragma once

#include "pg/postgres_api.hpp"

namespace pgsem {

// Column numbers of pgsem.claims as created by pgsem--1.0.sql; claims_open() checks them against
// the catalog, so an altered table fails loudly instead of being misread.
enum ClaimColumn : AttrNumber {
    kColId = 1,
    kColName,
    kColSlot,
    kColSlots,
    kColClaimedAt,
    kColExpiresAt,
    kColLease,
    kColEndedAt,
    kColOutcome,
    kColHolderPid,
    kColHolderRole,
    kColApplicationName,
};
inline constexpr int kClaimColumnCount = kColApplicationName;

enum class Outcome : unsigned char { kReleased, kTimedOut };

// One claim row as a dirty read (or a tuple lock) saw it.
struct ClaimRow {
    ItemPointerData tid;
    int64 id;
    int32 slot;
    TimestampTz claimed_at;
    TimestampTz expires_at;
    int64 lease_micros;
    bool ended;
    TimestampTz ended_at;  // valid when ended
    bool released;         // when ended: released by its holder (else timed out)
    Oid holder_role;
    bool insert_in_progress;  // inserted by another, still open, transaction
    bool change_in_progress;  // updated or deleted by another, still open, transaction; when
                              // claims_find sees that change keep the claim unended (a renewal),
                              // expires_at is the later of the two versions' expiries
};

struct NewClaim {
    int64 id;
    text *name;
    int32 slot;
    int32 slots;
    TimestampTz claimed_at;
    TimestampTz expires_at;
    int64 lease_micros;
};

struct ClaimsTable {
    Relation rel;
    Oid pkey_index;
    Oid live_index;  // unique (name, slot) WHERE ended_at IS NULL
    Oid id_sequence;
    TupleTableSlot *read_slot;  // holds the row last read or locked
    // Created by the first write of a call.
    EState *estate;
    ResultRelInfo *result_rel;
    EPQState epq;
    TupleTableSlot *write_slot;
};

// Registers the relcache callback that keeps the cached OIDs of pgsem's relations honest.
// Called once, from _PG_init.
void install_claims_cache_invalidation();

// Opens pgsem.claims with the given table lock (RowExclusiveLock to write).
void claims_open(ClaimsTable *table, LOCKMODE lockmode);
void claims_close(ClaimsTable *table);

// A dirty-snapshot index scan over claims: one semaphore's rows in slot order, or all rows in id
// order.
struct ClaimScan {
    Relation index;
    IndexScanDesc scan;
    SnapshotData dirty;
    ScanKeyData keys[3];
};
// Rows of semaphore `name` with slots in [first_slot, end_slot).
void slot_scan_begin(ClaimsTable *table, ClaimScan *scan, text *name, int32 first_slot,
                     int32 end_slot);
// Rows with id >= first_id.
void id_scan_begin(ClaimsTable *table, ClaimScan *scan, int64 first_id);
bool claim_scan_next(ClaimsTable *table, ClaimScan *scan, ClaimRow *row);
void claim_scan_end(ClaimScan *scan);

// Finds the current version of claim `id` with a dirty read; false when there is none.
bool claims_find(ClaimsTable *table, int64 id, ClaimRow *row);

// Locks the row version at tid. On TM_Ok, *row is the locked version; the lock lasts until the
// transaction ends. LockWaitSkip returns TM_WouldBlock instead of waiting; LockWaitBlock waits in
// the lock manager (visible in pg_locks, subject to lock_timeout and the deadlock detector).
TM_Result claims_lock(ClaimsTable *table, ItemPointerData tid, LockTupleMode mode,
                      LockWaitPolicy wait, ClaimRow *row);

// The next claim id. Its sequence record is on disk (and on synchronous standbys) before this
// returns, so that no crash or failover can hand the id out again.
int64 claims_next_id(ClaimsTable *table);

// The name of the row claims_lock just locked (valid until the next read or lock).
text *claims_locked_name(ClaimsTable *table);

// Writes. Each makes its change visible to the rest of the transaction (CommandCounterIncrement).
// claims_end, claims_extend and claims_delete act on the row just locked by claims_lock.
void claims_insert(ClaimsTable *table, const NewClaim *claim);
void claims_end(ClaimsTable *table, TimestampTz ended_at, Outcome outcome);
void claims_extend(ClaimsTable *table, TimestampTz expires_at);
void claims_delete(ClaimsTable *table);

}  // namespace pgsem
