#include "core/arguments.hpp"
#include "pg/claim/claim_views.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/registry.hpp"

namespace pgsem {

namespace {

enum LiveClaimColumn : int {
    kId,
    kName,
    kSlot,
    kN,
    kClaimedAt,
    kExpiresAt,
    kLease,
    kPid,
    kRole,
    kApplicationName,
    kCommitted,
    kXid,
    kTransactionPid,
    kTransactionStarted,
    kColumnCount1_1,  // pgsem.live_claims() of 1.1 stops here; 1.2's live_claims_1_2() goes on:
    // An open or prepared transaction that locks or changes this committed claim (a fence, a
    // release or renewal in flight): past its lease, the claim holds its slot until that ends.
    kLockerXid = kColumnCount1_1,
    kLockerPid,
    kLockerStarted,
    kPermits,  // the claim's k: each of its slots is a row of its own
    kColumnCount
};

// When the transaction run by `pid` started; false when no backend of that pid is known.
bool transaction_start_of(int pid, TimestampTz *started) {
    const int backends = pgstat_fetch_stat_numbackends();
    for (int i = 1; i <= backends; ++i) {
        const LocalPgBackendStatus *local = pgstat_fetch_stat_local_beentry(i);
        if (local == nullptr || local->backendStatus.st_procpid != pid) continue;
        *started = local->backendStatus.st_xact_start_timestamp;
        return *started != 0;
    }
    return false;
}

// A row inserted by an open transaction is either a claim of its own or the new version of a
// committed claim being renewed; only the first is shown (the second shows as its committed
// version).
bool is_new_claim(ClaimsTable *table, const ClaimRow &row) {
    ClaimRow preferred;
    return claims_find(table, row.id, &preferred) && preferred.insert_in_progress;
}

// The transaction running in backend `pid` (0: a prepared one, or none): its pid and start.
void put_transaction(int pid, int pid_column, int started_column, Datum *values, bool *nulls) {
    if (pid == 0) return;
    values[pid_column] = Int32GetDatum(pid);
    nulls[pid_column] = false;
    TimestampTz started = 0;
    if (transaction_start_of(pid, &started)) {
        values[started_column] = TimestampTzGetDatum(started);
        nulls[started_column] = false;
    }
}

// For 1.2's columns: the first open transaction that locks the committed row the scan is on.
void put_locker(const ClaimScan &scan, const ClaimRow &row, Datum *values, bool *nulls) {
    nulls[kLockerXid] = nulls[kLockerPid] = nulls[kLockerStarted] = true;
    TransactionId locker = InvalidTransactionId;
    if (row.insert_in_progress || claim_scan_row_lockers(&scan, &locker, 1) == 0) return;
    values[kLockerXid] = TransactionIdGetDatum(locker);
    nulls[kLockerXid] = false;
    put_transaction(
        TransactionIdIsCurrentTransactionId(locker) ? MyProcPid : BackendXidGetPid(locker),
        kLockerPid, kLockerStarted, values, nulls);
}

void put_row(Tuplestorestate *store, TupleDesc desc, const ClaimScan &scan, const ClaimRow &row) {
    Datum values[kColumnCount];
    bool nulls[kColumnCount];
    memset(nulls, 0, sizeof(nulls));
    Interval *lease = static_cast<Interval *>(palloc0(sizeof(Interval)));
    lease->time = row.lease;
    values[kId] = Int64GetDatum(row.id);
    values[kName] = PointerGetDatum(claim_scan_name(&scan));
    values[kSlot] = Int32GetDatum(row.slot);
    values[kN] = Int32GetDatum(row.n);
    values[kClaimedAt] = TimestampTzGetDatum(row.claimed_at);
    values[kExpiresAt] = TimestampTzGetDatum(row.expires_at);
    values[kLease] = IntervalPGetDatum(lease);
    values[kPid] = Int32GetDatum(row.holder_pid);
    values[kRole] = ObjectIdGetDatum(row.holder_role);
    values[kApplicationName] = PointerGetDatum(claim_scan_application_name(&scan));
    values[kCommitted] = BoolGetDatum(!row.insert_in_progress);
    nulls[kXid] = nulls[kTransactionPid] = nulls[kTransactionStarted] = true;
    if (row.insert_in_progress) {
        // A claim made in a savepoint carries a subtransaction's xid; report the transaction.
        const TransactionId top = SubTransGetTopmostTransaction(row.inserter);
        values[kXid] = TransactionIdGetDatum(top);
        nulls[kXid] = false;
        put_transaction(BackendXidGetPid(top), kTransactionPid, kTransactionStarted, values, nulls);
    }
    if (desc->natts == kColumnCount) {
        put_locker(scan, row, values, nulls);
        values[kPermits] = Int32GetDatum(row.permits);
    }
    tuplestore_putvalues(store, desc, values, nulls);
}

void require_columns(TupleDesc desc, int columns, const char *function) {
    if (desc->natts != columns)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s must return %d columns", function, columns)));
}

const char *kind_name(ClaimKind kind) {
    switch (kind) {
        case ClaimKind::kTransaction:
            return "transaction";
        case ClaimKind::kSession:
            return "session";
        default:
            return "lease";
    }
}

}  // namespace

void live_claim_rows(Tuplestorestate *store, TupleDesc desc) {
    if (desc->natts != kColumnCount1_1) require_columns(desc, kColumnCount, "pgsem.live_claims()");
    ClaimsTable table;
    claims_open(&table, AccessShareLock);
    ClaimScan scan;
    ClaimRow row;
    live_scan_begin(&table, &scan);
    while (claim_scan_next(&scan, &row)) {
        if (row.ended) continue;  // an in-progress release's new version, not in the index
        if (row.insert_in_progress && !is_new_claim(&table, row)) continue;
        put_row(store, desc, scan, row);
        CHECK_FOR_INTERRUPTS();
    }
    claim_scan_end(&scan);
    claims_close(&table);
}

void lock_claim_rows(Tuplestorestate *store, TupleDesc desc) {
    enum Column { kName, kSlot, kKind, kN, kSince, kPid, kRole, kApp, kStarted, kCount };
    require_columns(desc, kCount, "pgsem.lock_claims()");
    RegistryCopy listed;
    registry_copy(&listed);
    // The slot key of each listed claim, to match against the locks actually held.
    uint64 *keys = static_cast<uint64 *>(palloc(sizeof(uint64) * Max(listed.claim_count, 1)));
    for (int i = 0; i < listed.claim_count; ++i)
        keys[i] = slot_key(cstring_to_text(listed.claims[i].name), listed.claims[i].slot);
    const LockData *locks = GetLockStatusData();
    for (int l = 0; l < locks->nelements; ++l) {
        const LockInstanceData &lock = locks->locks[l];
        if (!is_slot_holder(lock)) continue;
        Datum values[kCount];
        bool nulls[kCount];
        memset(nulls, 0, sizeof(nulls));
        const ListedClaim *claim = nullptr;
        for (int i = 0; i < listed.claim_count && claim == nullptr; ++i)
            if (listed.claims[i].pid == lock.pid && keys[i] == locktag_key(lock.locktag))
                claim = &listed.claims[i];
        if (claim != nullptr) {
            values[kName] = CStringGetTextDatum(claim->name);
            values[kSlot] = Int32GetDatum(claim->slot);
            values[kKind] = CStringGetTextDatum(kind_name(claim->kind));
            values[kN] = Int32GetDatum(claim->n);
            values[kSince] = TimestampTzGetDatum(claim->since);
            values[kRole] = ObjectIdGetDatum(claim->role);
            values[kApp] = CStringGetTextDatum(claim->application_name);
        } else {  // held, but not listed: its session had more claims than the registry shows
            nulls[kName] = nulls[kSlot] = nulls[kKind] = nulls[kN] = nulls[kSince] = true;
            nulls[kRole] = nulls[kApp] = true;
        }
        values[kPid] = Int32GetDatum(lock.pid);
        TimestampTz started = 0;
        if (claim != nullptr && claim->kind == ClaimKind::kTransaction &&
            transaction_start_of(lock.pid, &started))
            values[kStarted] = TimestampTzGetDatum(started);
        else
            nulls[kStarted] = true;
        tuplestore_putvalues(store, desc, values, nulls);
    }
}

void waiter_rows(Tuplestorestate *store, TupleDesc desc) {
    // 1.1's pgsem.waiters() has the first eight columns, 1.2's pgsem.line_waiters() permits too.
    enum Column {
        kName,
        kN,
        kKind,
        kPid,
        kRole,
        kApp,
        kSince,
        kPosition,
        kCount1_1,
        kPermits = kCount1_1,
        kCount
    };
    if (desc->natts != kCount1_1) require_columns(desc, kCount, "pgsem.line_waiters()");
    RegistryCopy listed;
    registry_copy(&listed);
    const LockData *locks = GetLockStatusData();
    // A listed wait counts when the lock manager agrees: its backend holds the line's lock
    // exclusively (first) or waits for it (in line, ordered by when it began to wait).
    for (int w = 0; w < listed.wait_count; ++w) {
        const ListedWait &wait = listed.waits[w];
        const uint64 line = name_key(cstring_to_text(wait.name));
        bool first = false;
        bool in_line = false;
        TimestampTz began = 0;
        for (int l = 0; l < locks->nelements; ++l) {
            const LockInstanceData &lock = locks->locks[l];
            if (lock.pid != wait.pid || locktag_key(lock.locktag) != line) continue;
            first = first || is_first_place(lock);
            if (waits_for_first_place(lock)) {
                in_line = true;
                began = lock.waitStart;
            }
        }
        if (!first && !in_line) continue;
        int position = 1;
        if (!first) {
            // Behind the first waiter, and behind everybody who began to wait earlier.
            for (int l = 0; l < locks->nelements; ++l) {
                const LockInstanceData &lock = locks->locks[l];
                if (locktag_key(lock.locktag) != line || lock.pid == wait.pid) continue;
                if (is_first_place(lock) ||
                    (waits_for_first_place(lock) &&
                     (lock.waitStart < began || (lock.waitStart == began && lock.pid < wait.pid))))
                    ++position;
            }
        }
        Datum values[kCount];
        bool nulls[kCount];
        memset(nulls, 0, sizeof(nulls));
        values[kName] = CStringGetTextDatum(wait.name);
        values[kN] = Int32GetDatum(wait.n);
        values[kKind] = CStringGetTextDatum(wait.timed ? "bucket" : kind_name(wait.kind));
        values[kPid] = Int32GetDatum(wait.pid);
        values[kRole] = ObjectIdGetDatum(wait.role);
        values[kApp] = CStringGetTextDatum(wait.application_name);
        values[kSince] = TimestampTzGetDatum(wait.since);
        values[kPosition] = Int32GetDatum(position);
        if (desc->natts == kCount) values[kPermits] = Int32GetDatum(wait.permits);
        tuplestore_putvalues(store, desc, values, nulls);
    }
}

}  // namespace pgsem
