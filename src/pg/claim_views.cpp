#include "pg/claim_views.hpp"
#include "pg/claims_table.hpp"

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
        const int pid = BackendXidGetPid(top);  // 0 for a prepared transaction
        TimestampTz started = 0;
        if (pid != 0) {
            values[kTransactionPid] = Int32GetDatum(pid);
            nulls[kTransactionPid] = false;
            if (transaction_start_of(pid, &started)) {
                values[kTransactionStarted] = TimestampTzGetDatum(started);
                nulls[kTransactionStarted] = false;
            }
        }
    }
    tuplestore_putvalues(store, desc, values, nulls);
}

}  // namespace

void live_claim_rows(Tuplestorestate *store, TupleDesc desc) {
    if (desc->natts != kColumnCount)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("pgsem.live_claims() must return %d columns", kColumnCount)));
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

}  // namespace pgsem
