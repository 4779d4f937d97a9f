#include "core/token_bucket.hpp"
#include "pg/base/boundary.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/buckets.hpp"
#include "pg/store/config_tables.hpp"
#include "pg/store/locks.hpp"

namespace pgsem {

namespace {

constexpr const char *kTable = "buckets";
// A row made looks at this many rows after it (name order, wrapping) for idle ones to remove:
// rows are made at least as fast as names come and go, so idle rows never pile up, and the
// look is a short index range, whatever the table holds.
constexpr int kPruneBatch = 16;
constexpr int64 kIdleMicros = USECS_PER_HOUR;

// The first new name of this transaction, whose neighbours are pruned just before it commits
// (buckets_prune_before_commit), outside the grant's statement and its answer. nullptr: none.
text *prune_after = nullptr;
TimestampTz prune_now = 0;

// The table, its primary key (name, tat) and its columns, open for one grant. The columns are found
// by name, as the configuration tables' are (a later release may append some).
struct BucketTable {
    Relation rel;
    Relation pkey;
    AttrNumber name_column;
    AttrNumber tat_column;
    AttrNumber n_column;
    AttrNumber per_column;
    AttrNumber burst_column;
    AttrNumber granted_at_column;
};

BucketTable open_buckets() {
    BucketTable table{};
    table.rel = table_open(require_pgsem_table(kTable, "pgsem 1.2"), RowExclusiveLock);
    const Oid pkey = RelationGetPrimaryKeyIndex(table.rel);
    if (!OidIsValid(pkey))
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("pgsem: table pgsem.buckets has no primary key"),
                        errhint("Reinstall the extension: DROP EXTENSION pgsem; CREATE EXTENSION "
                                "pgsem.")));
    // The grants write the primary key's entries and no others: an index a DBA added would miss
    // their rows and answer wrong, so it is refused rather than left behind.
    List *indexes = RelationGetIndexList(table.rel);
    const int index_count = list_length(indexes);
    list_free(indexes);
    if (index_count != 1)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("pgsem: table pgsem.buckets has an index besides its primary key"),
                        errdetail("Token bucket grants keep only the primary key up to date."),
                        errhint("Drop the other indexes of pgsem.buckets.")));
    table.pkey = index_open(pkey, RowExclusiveLock);
    const TupleDesc desc = RelationGetDescr(table.rel);
    table.name_column = config_column(desc, kTable, "name");
    table.tat_column = config_column(desc, kTable, "tat");
    table.n_column = config_column(desc, kTable, "n");
    table.per_column = config_column(desc, kTable, "per");
    table.burst_column = config_column(desc, kTable, "burst");
    table.granted_at_column = config_column(desc, kTable, "granted_at");
    return table;
}

// The locks stay until the transaction ends, as for any write.
void close_buckets(const BucketTable &table) {
    index_close(table.pkey, NoLock);
    table_close(table.rel, NoLock);
}

// A row as a dirty read finds it. A row whose inserting transaction is in progress (another's
// grant, not yet committed) is `in_flight`; one whose deleting transaction is, `being_deleted`:
// neither may be deleted here (the delete would wait for that transaction), both count.
struct BucketRow {
    ItemPointerData tid;
    TimestampTz tat;
    bool in_flight;
    bool being_deleted;
};

// A dirty read of the primary key from `key` on (nullptr: from the first name), handing each row
// to `visit` until it says stop or `strategy` runs out. The dirty snapshot says, for each row it
// returns, whether its inserter or deleter is still in progress (as unique checks use it).
template <typename Visit>
void scan_names(const BucketTable &table, const text *key, StrategyNumber strategy, RegProcedure op,
                Visit &&visit) {
    static_assert(std::is_trivially_destructible_v<std::decay_t<Visit>>);
    SnapshotData dirty;
    InitDirtySnapshot(dirty);
    ScanKeyData keys[1];
    const int nkeys = key != nullptr ? 1 : 0;
    if (key != nullptr) {
        ScanKeyInit(&keys[0], 1, strategy, op, PointerGetDatum(key));
        keys[0].sk_collation = C_COLLATION_OID;  // the column is COLLATE "C"
    }
    const IndexScanDesc scan = index_beginscan(table.rel, table.pkey, &dirty, nkeys, 0);
    index_rescan(scan, nkeys > 0 ? keys : nullptr, nkeys, nullptr, 0);
    TupleTableSlot *slot = table_slot_create(table.rel, nullptr);
    while (index_getnext_slot(scan, ForwardScanDirection, slot)) {
        bool isnull = false;
        const TimestampTz tat = DatumGetTimestampTz(slot_getattr(slot, table.tat_column, &isnull));
        const text *name = DatumGetTextPP(slot_getattr(slot, table.name_column, &isnull));
        const BucketRow row{slot->tts_tid, tat, TransactionIdIsValid(dirty.xmin),
                            TransactionIdIsValid(dirty.xmax)};
        if (!visit(name, row)) break;
    }
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
}

// The rows of one name: the bucket's TAT is the latest of them; and the rows a grant deletes
// once it has written a later one: committed (or this transaction's own), not being deleted.
struct BucketRows {
    bool found;
    TimestampTz tat;
    ItemPointerData *settled;
    int settled_count;
};

BucketRows find_rows(const BucketTable &table, const text *name) {
    BucketRows rows{false, 0, nullptr, 0};
    int room = 0;
    scan_names(table, name, BTEqualStrategyNumber, F_TEXTEQ,
               [&rows, &room](const text *, const BucketRow &row) {
                   rows.tat = rows.found ? Max(rows.tat, row.tat) : row.tat;
                   rows.found = true;
                   if (row.in_flight || row.being_deleted) return true;
                   if (rows.settled_count == room) {
                       room = Max(2 * room, 8);
                       rows.settled = static_cast<ItemPointerData *>(
                           rows.settled == nullptr
                               ? palloc(sizeof(ItemPointerData) * room)
                               : repalloc(rows.settled, sizeof(ItemPointerData) * room));
                   }
                   rows.settled[rows.settled_count++] = row.tid;
                   return true;
               });
    return rows;
}

HeapTuple form_row(const BucketTable &table, const text *name, TimestampTz tat,
                   const BucketRule &rule, TimestampTz now) {
    const TupleDesc desc = RelationGetDescr(table.rel);
    Datum *values = static_cast<Datum *>(palloc0(sizeof(Datum) * desc->natts));
    bool *nulls = static_cast<bool *>(palloc(sizeof(bool) * desc->natts));
    memset(nulls, true, sizeof(bool) * desc->natts);  // columns a later release appends
    Interval *per = static_cast<Interval *>(palloc0(sizeof(Interval)));
    per->time = rule.per;
    const auto set = [&](AttrNumber column, Datum value) {
        values[column - 1] = value;
        nulls[column - 1] = false;
    };
    set(table.name_column, PointerGetDatum(name));
    set(table.tat_column, TimestampTzGetDatum(tat));
    set(table.n_column, Int32GetDatum(rule.n));
    set(table.per_column, IntervalPGetDatum(per));
    set(table.burst_column, Int32GetDatum(rule.burst));
    set(table.granted_at_column, TimestampTzGetDatum(now));
    return heap_form_tuple(desc, values, nulls);
}

// Deletes a row unless another transaction is deleting it meanwhile (a DBA's hand, say): never
// waits for another's commit, and never fails for it -- the row is left for a later grant.
void delete_if_free(const BucketTable &table, ItemPointerData tid) {
    TM_FailureData failure;
    (void)heap_delete(table.rel, &tid, GetCurrentCommandId(true), InvalidSnapshot, false, &failure,
                      false);
}

// The primary key's entry (name, tat) for a new tuple.
void index_row(const BucketTable &table, const text *name, TimestampTz tat, HeapTuple tuple) {
    Datum values[] = {PointerGetDatum(name), TimestampTzGetDatum(tat)};
    bool nulls[] = {false, false};
    (void)index_insert(table.pkey, values, nulls, &tuple->t_self, table.rel, UNIQUE_CHECK_YES,
                       false, BuildIndexInfo(table.pkey));
}

// A grant's row: a new one, never an update, so no grant waits for another's commit (an update
// of a row another transaction updated waits for it). Its TAT is later than every row a dirty
// read found, in flight or not; the settled ones go, in this transaction: if it rolls back they
// are back, and if it commits the latest TAT stays (no transaction removes the latest row
// without committing a later one in the same breath).
void write_row(const BucketTable &table, const text *name, const BucketRows &rows, TimestampTz tat,
               const BucketRule &rule, TimestampTz now) {
    const HeapTuple tuple = form_row(table, name, tat, rule, now);
    simple_heap_insert(table.rel, tuple);
    index_row(table, name, tat, tuple);
    for (int i = 0; i < rows.settled_count; ++i) delete_if_free(table, rows.settled[i]);
    // The next grant in this statement (SELECT sem_bucket(...) FROM ...) reads these.
    CommandCounterIncrement();
}

// Idle rows (full for an hour) among the kPruneBatch rows after `name`'s, wrapping to the first
// names; removed name by name under the name's mutex, taken only if free, and read again under
// it. A TAT that has passed is no credit (a bucket is never fuller than its burst): removing
// its row changes nothing. The mutex keeps two removers off one row (the second would wait for
// the first's commit), and is let go at once.
void prune_near(const BucketTable &table, const text *name, TimestampTz now) {
    const TimestampTz idle_before = now - kIdleMicros;
    text *idle[kPruneBatch];
    int seen = 0;
    int count = 0;
    const auto note = [&](const text *candidate, const BucketRow &row) {
        if (same_text(candidate, name)) return false;  // wrapped around to the start
        if (row.tat < idle_before && !row.in_flight && !row.being_deleted &&
            (count == 0 || !same_text(idle[count - 1], candidate)))
            idle[count++] = DatumGetTextPCopy(PointerGetDatum(candidate));
        return ++seen < kPruneBatch;
    };
    scan_names(table, name, BTGreaterStrategyNumber, F_TEXT_GT, note);
    if (seen < kPruneBatch) scan_names(table, nullptr, InvalidStrategy, InvalidOid, note);
    for (int i = 0; i < count; ++i) {
        if (!try_lock_bucket_mutex(idle[i])) continue;
        scan_names(table, idle[i], BTEqualStrategyNumber, F_TEXTEQ,
                   [&table, idle_before](const text *, const BucketRow &row) {
                       if (row.tat < idle_before && !row.in_flight && !row.being_deleted)
                           delete_if_free(table, row.tid);
                       return true;
                   });
        CommandCounterIncrement();
        unlock_bucket_mutex(idle[i]);
    }
}

}  // namespace

BucketLook buckets_try_grant(const text *name, const BucketRule &rule, int32 permits,
                             TimestampTz now) {
    const BucketTable table = open_buckets();
    const BucketRows rows = find_rows(table, name);
    const int64 interval = PGSEM_NOTHROW(core::bucket_interval(rule.per, rule.n));
    const core::BucketDecision decision = PGSEM_NOTHROW(
        core::bucket_decide(now, rows.found ? rows.tat : 0, interval, rule.burst, permits));
    if (decision.granted) {
        write_row(table, name, rows, decision.tat, rule, now);
        if (!rows.found && prune_after == nullptr) {
            prune_after =
                static_cast<text *>(MemoryContextAlloc(TopTransactionContext, VARSIZE_ANY(name)));
            memcpy(prune_after, name, VARSIZE_ANY(name));
            prune_now = now;
        }
    }
    close_buckets(table);
    return BucketLook{decision.granted, decision.granted ? 0 : decision.fits_at};
}

void buckets_prune_before_commit() {
    if (prune_after == nullptr) return;
    const BucketTable table = open_buckets();
    prune_near(table, prune_after, prune_now);
    close_buckets(table);
    prune_after = nullptr;
}

void buckets_prune_forget() {
    prune_after = nullptr;  // in TopTransactionContext, gone with the transaction
}

}  // namespace pgsem
