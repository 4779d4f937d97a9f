// Storage of leased claims: the table pgsem.claims, read with dirty snapshots and written through
// the executor's simple-relation routines (the ones logical replication uses), so that every
// index -- the partial unique index over live claims above all -- and WAL are handled by
// Postgres itself.
//
// Nothing here decides what a row means; src/core/slot_choice.hpp does. Nothing here takes locks
// other than the table and tuple locks named in each function. A row is changed only through a
// LockedClaim (below), which only claims_lock makes.
#pragma once

#include "core/slot_choice.hpp"
#include "pg/base/postgres_api.hpp"

namespace pgsem {

enum class Outcome : unsigned char { kReleased, kTimedOut };

// One claim row as a dirty read (or a tuple lock) saw it. Field names follow the table's columns
// (pgsem--1.0.sql); where the SQL API names a thing differently, the comment says so.
struct ClaimRow {
    ItemPointerData tid;
    int64 id;
    int32 slot;
    int32 n;  // column "slots": the n the claim was made with (sem_history.n)
    TimestampTz claimed_at;
    TimestampTz expires_at;
    int64 lease;  // column "lease" (sem_claim's timeout), in microseconds
    bool ended;
    TimestampTz ended_at;  // valid when ended
    bool released;         // column "outcome" when ended: 'released' (else 'timed out')
    int32 holder_pid;
    Oid holder_role;
    int32 permits;  // column "permits" (1.2): the claim's k; 1 where NULL or absent
    bool rate;      // column "rate" (1.2): a rate limit's grant (sem_rate), which nobody ends
    // Seen by a dirty read only:
    TransactionId inserter;   // the open transaction inserting this row, or invalid
    bool insert_in_progress;  // inserted by another, still open, transaction
    bool inserted_by_me;      // inserted by this transaction (a dirty read shows it as committed)
    bool change_in_progress;  // updated or deleted by another, still open, transaction; when
                              // claims_find sees that change keep the claim unended (a renewal),
                              // expires_at is the later of the two versions' expiries
    TransactionId changer;    // that transaction, when change_in_progress
};

// What a row is to src/core/slot_choice.hpp, which decides what it means.
inline core::ClaimRowState claim_state(const ClaimRow &row) {
    return core::ClaimRowState{row.ended, row.expires_at, row.insert_in_progress,
                               row.change_in_progress};
}

// A claim row read while another transaction changes it may need a second look; past this many,
// something is looping and an error is better than a spin.
constexpr int kMaxRowRetries = 100;

struct NewClaim {
    int64 id;
    text *name;
    int32 slot;
    int32 n;
    int32 permits;  // the claim's k: it inserts k rows, one per slot, sharing its id
    TimestampTz claimed_at;
    TimestampTz expires_at;
    int64 lease;        // microseconds
    text *request_key;  // written on this row when not nullptr (one row of a claim carries it)
    bool rate;          // a rate limit's grant: it holds its slots for its lease, `per`
};

struct ClaimsTable {
    Relation rel;
    LOCKMODE lockmode;
    Oid pkey_index;
    Oid live_index;         // unique (name, slot) WHERE ended_at IS NULL
    Oid request_key_index;  // unique (name, holder_role, request_key) of unended keyed rows (1.2)
    Oid rate_grants_index;  // (name, claimed_at) of unended rate grants (1.2)
    Oid id_sequence;
    // Scans begun on each index: each took a lock on it, which claims_close_unlocking gives back.
    int pkey_scans;
    int live_scans;
    int key_scans;
    int rate_scans;
    List *tuples;  // the tuple slots of locked rows, dropped by claims_close
    // Created by the first write of a call.
    EState *estate;
    ResultRelInfo *result_rel;
    // result_rel's indexes (see open_writer_indexes): the ones opened with it, first in its
    // arrays; the partial ones, opened when a row first belongs in them (live, key, rate).
    int eager_indexes;
    Relation partial_indexes[3];
    IndexInfo *partial_infos[3];
    EPQState epq;
    TupleTableSlot *new_tuple;
};

// Registers the relcache callback that keeps the cached OIDs of pgsem's relations honest.
// Called once, from _PG_init.
void install_claims_cache_invalidation();

// Opens pgsem.claims with the given table lock (RowExclusiveLock to write).
void claims_open(ClaimsTable *table, LOCKMODE lockmode);
// Closes it. The table lock is kept until the transaction ends, as Postgres keeps the locks of
// the tables a statement used.
void claims_close(ClaimsTable *table);
// Closes it and gives back the table lock that claims_open took and the index locks its scans
// took, unless this opening wrote (a write's locks last until the transaction ends). For looks at
// the table between which a backend sleeps: a table lock held across the sleep would queue a VACUUM
// FULL or REINDEX behind it, and behind that every release that would end the sleep. A lock the
// transaction held before claims_open stays held.
void claims_close_unlocking(ClaimsTable *table);

// A dirty-snapshot index scan over claims, with a tuple slot of its own (dropped by
// claim_scan_end): one semaphore's rows in slot order, or all rows in id order.
struct ClaimScan {
    Relation index;
    IndexScanDesc scan;
    SnapshotData dirty;
    ScanKeyData keys[3];
    TupleTableSlot *tuple;
    ScanDirection direction;
};
// Rows of semaphore `name` with slots in [first_slot, end_slot), lowest slot first (`backward`:
// highest first).
void slot_scan_begin(ClaimsTable *table, ClaimScan *scan, const text *name, int32 first_slot,
                     int32 end_slot, bool backward = false);
// The unended grants of rate limit `name`, earliest granted first; false (and no scan to end)
// before 1.2, which has no index of them.
bool rate_grants_scan_begin(ClaimsTable *table, ClaimScan *scan, const text *name);
// Every row in the live index: all unended claims of all semaphores, in (name, slot) order.
void live_scan_begin(ClaimsTable *table, ClaimScan *scan);
// Rows with id >= first_id.
void id_scan_begin(ClaimsTable *table, ClaimScan *scan, int64 first_id);
bool claim_scan_next(ClaimScan *scan, ClaimRow *row);
// Column values of the row claim_scan_next returned last (valid until the scan moves on).
const text *claim_scan_name(const ClaimScan *scan);
const text *claim_scan_application_name(const ClaimScan *scan);
void claim_scan_end(ClaimScan *scan);

// The transactions, still open, that lock or change the row claim_scan_next returned last: its
// xmax, read from the tuple header (one xid, or the members of a multixact), whether a lock-only
// xmax -- a FOR SHARE lock, which is what sem_fence takes, and which a dirty snapshot does not
// report -- or an update or delete. This transaction's own xid counts. Stores up to `max` xids
// (each a top-level transaction's) and returns how many there are.
int claim_scan_row_lockers(const ClaimScan *scan, TransactionId *lockers, int max);

// Finds the unended row that carries request key `key` of `role` on `name` (the row of its
// claim's lowest slot), with a dirty read; false when there is none.
bool claims_find_keyed(ClaimsTable *table, const text *name, Oid role, const text *key,
                       ClaimRow *row);

// Waits, in the lock manager, for the transaction changing `row` (change_in_progress) to end,
// taking no lock on the row itself; returns at once when none is.
void claims_wait_for_changer(ClaimsTable *table, const ClaimRow &row);

// Finds the current version of claim `id` with a dirty read; false when there is none.
bool claims_find(ClaimsTable *table, int64 id, ClaimRow *row);
// The current version of each row of claim `id` (a claim of k permits has k, one per slot; a
// claim of several semaphores has rows on each), in (name, slot) order; how many, at most `max` (0:
// no such claim).
int claims_find_all(ClaimsTable *table, int64 id, ClaimRow *rows, int max);
// The same for the rows of claim `id` on semaphore `name` alone (1.2's primary key, which begins
// (id, name)).
int claims_find_on(ClaimsTable *table, int64 id, const text *name, ClaimRow *rows, int max);

// The highest claim id in the table (0: none).
int64 claims_last_id(ClaimsTable *table);

// The next claim id. Its sequence record is on disk (and on synchronous standbys) before this
// returns, so that no crash or failover can hand the id out again.
int64 claims_next_id(ClaimsTable *table);

// Writes. Each makes its change visible to the rest of the transaction (CommandCounterIncrement).
// pgsem's own writes fire no triggers.
void claims_insert(ClaimsTable *table, const NewClaim &claim);

// ---- Locked claims ------------------------------------------------------------------------
//
// A claim row this transaction holds a tuple lock on, and the writes that need one.
//
// Only claims_lock makes a LockedClaim, and the writes that change a claim take one: a write can
// name no row that was not locked. Each LockedClaim keeps the locked version in a tuple slot of
// its own, apart from the slots of scans, so locking a row while a scan is open disturbs neither.
struct LockedClaim {
    TupleTableSlot *tuple;  // the locked version; made by the first claims_lock into this value
    ClaimRow row;           // its columns
};

// Locks the row version at tid. On TM_Ok, *locked is the locked version; the lock lasts until the
// transaction ends. LockWaitSkip returns TM_WouldBlock instead of waiting; LockWaitBlock waits in
// the lock manager (visible in pg_locks, subject to lock_timeout and the deadlock detector).
// `locked` starts zeroed ({}) and may be reused for another lock, which replaces the first.
TM_Result claims_lock(ClaimsTable *table, ItemPointerData tid, LockTupleMode mode,
                      LockWaitPolicy wait, LockedClaim *locked);

// The semaphore name of a locked claim (valid while `locked` holds that lock).
const text *locked_claim_name(const LockedClaim &locked);

// Writes to the locked version. Each makes its change visible to the rest of the transaction.
void claims_end(ClaimsTable *table, const LockedClaim &locked, TimestampTz ended_at,
                Outcome outcome);
void claims_extend(ClaimsTable *table, const LockedClaim &locked, TimestampTz expires_at);
void claims_delete(ClaimsTable *table, const LockedClaim &locked);

}  // namespace pgsem
