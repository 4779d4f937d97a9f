#include "core/arguments.hpp"
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/claims_table.hpp"

namespace pgsem {

namespace {

constexpr const char *kSchema = "pgsem";
constexpr const char *kTable = "claims";
constexpr const char *kPkeyIndex = "claims_pkey";
constexpr const char *kLiveIndex = "claims_live_slot";
constexpr const char *kRequestKeyIndex = "claims_request_key";  // from 1.2
constexpr const char *kRateGrantsIndex = "claims_rate_grants";  // from 1.2
constexpr const char *kSequence = "claim_id";

// ---- The table's shape, and the version-skew rule ----------------------------------------------
//
// Between `make install` of a new library and `ALTER EXTENSION pgsem UPDATE`, the new library runs
// against the objects of an older release. The rule that keeps that working: releases only ever
// append columns to pgsem.claims -- never drop, rename, retype or reorder one -- so the library
// checks the columns it knows by position, name and type and tolerates columns appended after
// them, which it leaves NULL. SQL functions whose signature changes keep their old C entry point
// beside the new one (see sql/lease_functions.cpp). 1.1 appends no column; 1.2 appends
// `permits` (the claim's k, on each of its rows; NULL in rows made before it, which hold 1) and
// `request_key` (on the row of a claim's lowest slot of each semaphore, when it was made with a
// key), makes the primary key (id, name, slot) -- the rows of a claim share its id, k per
// semaphore, on one semaphore or several (sem_claim_all) -- and adds the unique index
// claims_request_key.

// Column numbers of pgsem.claims, as created by pgsem--1.0.sql.
enum ClaimColumn : AttrNumber {
    kColId = 1,
    kColName,
    kColSlot,
    kColSlots,  // holds n
    kColClaimedAt,
    kColExpiresAt,
    kColLease,
    kColEndedAt,
    kColOutcome,
    kColHolderPid,
    kColHolderRole,
    kColApplicationName,
};
constexpr int kKnownColumns = kColApplicationName;
// Appended by 1.2; written when the table has it (the version-skew rule).
constexpr AttrNumber kColPermits = kColApplicationName + 1;
constexpr AttrNumber kColRequestKey = kColPermits + 1;
constexpr AttrNumber kColRate = kColRequestKey + 1;

struct ExpectedColumn {
    const char *name;
    Oid type;
};

constexpr ExpectedColumn kColumns[kKnownColumns] = {
    {"id", INT8OID},
    {"name", TEXTOID},
    {"slot", INT4OID},
    {"slots", INT4OID},
    {"claimed_at", TIMESTAMPTZOID},
    {"expires_at", TIMESTAMPTZOID},
    {"lease", INTERVALOID},
    {"ended_at", TIMESTAMPTZOID},
    {"outcome", TEXTOID},
    {"holder_pid", INT4OID},
    {"holder_role", OIDOID},
    {"application_name", TEXTOID},
};

void report_broken_install(const char *what) {
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("pgsem's internal %s is missing or has been altered", what),
                    errhint("Reinstall the extension: DROP EXTENSION pgsem; CREATE EXTENSION "
                            "pgsem.")));
}

void check_shape(Relation rel) {
    const TupleDesc desc = RelationGetDescr(rel);
    if (desc->natts < kKnownColumns) report_broken_install("table pgsem.claims");
    for (int i = 0; i < kKnownColumns; ++i) {
        const Form_pg_attribute att = TupleDescAttr(desc, i);
        if (att->attisdropped || att->atttypid != kColumns[i].type ||
            strcmp(NameStr(att->attname), kColumns[i].name) != 0)
            report_broken_install("table pgsem.claims");
    }
}

bool has_permits_column(TupleDesc desc) {
    if (desc->natts < kColPermits) return false;
    const Form_pg_attribute att = TupleDescAttr(desc, kColPermits - 1);
    return !att->attisdropped && att->atttypid == INT4OID &&
           strcmp(NameStr(att->attname), "permits") == 0;
}

bool has_rate_column(TupleDesc desc) {
    if (desc->natts < kColRate) return false;
    const Form_pg_attribute att = TupleDescAttr(desc, kColRate - 1);
    return !att->attisdropped && att->atttypid == BOOLOID &&
           strcmp(NameStr(att->attname), "rate") == 0;
}

bool has_request_key_column(TupleDesc desc) {
    if (desc->natts < kColRequestKey) return false;
    const Form_pg_attribute att = TupleDescAttr(desc, kColRequestKey - 1);
    return !att->attisdropped && att->atttypid == TEXTOID &&
           strcmp(NameStr(att->attname), "request_key") == 0;
}

// ---- Cached relation OIDs --------------------------------------------------------------------

Oid lookup_relation(Oid nsp, const char *name) {
    const Oid relid = get_relname_relid(name, nsp);
    if (!OidIsValid(relid)) report_broken_install(name);
    return relid;
}

// The OIDs of pgsem's relations, looked up once per backend rather than by name on every call,
// and forgotten whenever the relcache says the table changed (ALTER, DROP EXTENSION...).
struct CachedRelations {
    bool valid;
    bool shape_checked;
    Oid table;
    Oid pkey_index;
    Oid live_index;
    Oid request_key_index;  // InvalidOid before 1.2
    Oid rate_grants_index;  // likewise
    Oid id_sequence;
};
CachedRelations cached = {};

void forget_relations(Datum /*arg*/, Oid relid) {
    if (relid == InvalidOid || relid == cached.table) cached.valid = false;
}

void look_up_relations() {
    const Oid nsp = get_namespace_oid(kSchema, true);
    if (!OidIsValid(nsp)) report_broken_install("schema pgsem");
    cached.table = lookup_relation(nsp, kTable);
    cached.pkey_index = lookup_relation(nsp, kPkeyIndex);
    cached.live_index = lookup_relation(nsp, kLiveIndex);
    cached.request_key_index = get_relname_relid(kRequestKeyIndex, nsp);
    cached.rate_grants_index = get_relname_relid(kRateGrantsIndex, nsp);
    cached.id_sequence = lookup_relation(nsp, kSequence);
    cached.shape_checked = false;
    cached.valid = true;
}

// ---- Reading rows ------------------------------------------------------------------------------

// Heap writes and tuple locks take no visibility decision from it; the executor wants one set.
Snapshot active_snapshot() {
    return ActiveSnapshotSet() ? GetActiveSnapshot() : InvalidSnapshot;
}

// A tuple slot that lives until claims_close, for a locked row.
TupleTableSlot *new_tuple_slot(ClaimsTable *table) {
    return table_slot_create(table->rel, &table->tuples);
}

// A tuple slot for one scan, dropped by claim_scan_end.
TupleTableSlot *new_scan_slot(ClaimsTable *table) {
    return table_slot_create(table->rel, nullptr);
}

// Whether column `column` of the row in `slot` (its values extracted) is there and not NULL:
// columns appended by later releases are missing from older tables.
bool column_set(const TupleTableSlot *slot, AttrNumber column) {
    return slot->tts_tupleDescriptor->natts >= column && !slot->tts_isnull[column - 1];
}

// Reads the row in `tuple`. The dirty snapshot, when given, says whether other open transactions
// are inserting or changing it.
void read_row(TupleTableSlot *tuple_slot, const SnapshotData *dirty, ClaimRow *row) {
    slot_getallattrs(tuple_slot);
    const Datum *v = tuple_slot->tts_values;
    const bool *null = tuple_slot->tts_isnull;
    row->tid = tuple_slot->tts_tid;
    row->id = DatumGetInt64(v[kColId - 1]);
    row->slot = DatumGetInt32(v[kColSlot - 1]);
    row->n = DatumGetInt32(v[kColSlots - 1]);
    row->claimed_at = DatumGetTimestampTz(v[kColClaimedAt - 1]);
    row->expires_at = DatumGetTimestampTz(v[kColExpiresAt - 1]);
    // Rows were validated on the way in; 0 only for a hand-edited row.
    row->lease = interval_micros(DatumGetIntervalP(v[kColLease - 1]));
    row->ended = !null[kColEndedAt - 1];
    row->ended_at = row->ended ? DatumGetTimestampTz(v[kColEndedAt - 1]) : 0;
    row->released = false;
    if (row->ended && !null[kColOutcome - 1]) {
        const text *outcome = DatumGetTextPP(v[kColOutcome - 1]);
        row->released = VARSIZE_ANY_EXHDR(outcome) == strlen("released") &&
                        memcmp(VARDATA_ANY(outcome), "released", strlen("released")) == 0;
    }
    row->holder_pid = DatumGetInt32(v[kColHolderPid - 1]);
    row->holder_role = DatumGetObjectId(v[kColHolderRole - 1]);
    row->permits = has_permits_column(tuple_slot->tts_tupleDescriptor) && !null[kColPermits - 1]
                       ? DatumGetInt32(v[kColPermits - 1])
                       : 1;
    row->rate = column_set(tuple_slot, kColRate) && DatumGetBool(v[kColRate - 1]);
    row->inserter = dirty != nullptr ? dirty->xmin : InvalidTransactionId;
    row->insert_in_progress = TransactionIdIsValid(row->inserter);
    // A dirty read shows this transaction's own rows as if committed; whether a row is one of
    // them comes from its xmin.
    row->inserted_by_me = false;
    if (dirty != nullptr && !row->insert_in_progress) {
        bool should_free = false;
        const HeapTuple tuple = ExecFetchSlotHeapTuple(tuple_slot, false, &should_free);
        row->inserted_by_me =
            TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetRawXmin(tuple->t_data));
        if (should_free) heap_freetuple(tuple);
    }
    row->change_in_progress = dirty != nullptr && TransactionIdIsValid(dirty->xmax);
    row->changer = row->change_in_progress ? dirty->xmax : InvalidTransactionId;
}

// ---- Writing rows ------------------------------------------------------------------------------

// The partial indexes hold live rows (claims_live_slot: ended_at IS NULL), live keyed rows
// (claims_request_key: ... AND request_key IS NOT NULL) and live rate grants (claims_rate_grants:
// ... AND rate). Every release writes an ended row and most claims a plain live one; opened as
// ExecOpenIndices opens them, the executor would open them all, copy and compile their predicates
// and evaluate them on every call only to skip them. So the writer opens the other indexes at
// once and a partial one when a row first belongs in it (decided here from the row, as its
// predicate says), and hands the executor, for each row, just the indexes the row belongs in.
// The heap still decides HOT from every index of the table, whatever the executor is handed; the
// table lock the writer holds keeps the indexes from changing while some of them are not open.
enum PartialIndex { kLivePartial, kKeyPartial, kRatePartial, kPartialIndexes };

void open_writer_indexes(ClaimsTable *table) {
    ResultRelInfo *rel = table->result_rel;
    List *oids = RelationGetIndexList(table->rel);
    const int room = list_length(oids) + kPartialIndexes;  // whatever the list says
    rel->ri_IndexRelationDescs = static_cast<RelationPtr>(palloc0(room * sizeof(Relation)));
    rel->ri_IndexRelationInfo = static_cast<IndexInfo **>(palloc0(room * sizeof(IndexInfo *)));
    int n = 0;
    ListCell *cell;
    foreach (cell, oids) {
        const Oid oid = lfirst_oid(cell);
        if (oid == table->live_index || oid == table->request_key_index ||
            oid == table->rate_grants_index)
            continue;
        const Relation index = index_open(oid, RowExclusiveLock);
        rel->ri_IndexRelationDescs[n] = index;
        rel->ri_IndexRelationInfo[n] = BuildIndexInfo(index);
        ++n;
    }
    list_free(oids);
    table->eager_indexes = n;
    rel->ri_NumIndices = n;
}

// Hands the executor partial index `which` (`oid`) as its next index, opening it first if need be.
void add_partial_index(ClaimsTable *table, PartialIndex which, Oid oid, const char *name) {
    if (!OidIsValid(oid)) report_broken_install(name);
    if (table->partial_indexes[which] == nullptr) {
        table->partial_indexes[which] = index_open(oid, RowExclusiveLock);
        table->partial_infos[which] = BuildIndexInfo(table->partial_indexes[which]);
    }
    ResultRelInfo *rel = table->result_rel;
    rel->ri_IndexRelationDescs[rel->ri_NumIndices] = table->partial_indexes[which];
    rel->ri_IndexRelationInfo[rel->ri_NumIndices] = table->partial_infos[which];
    ++rel->ri_NumIndices;
}

// Gives the executor the writer's indexes that the row in `out` (a stored virtual tuple) belongs
// in. (A 1.1 table has neither the columns nor the indexes of keys and rates.)
void indexes_for_row(ClaimsTable *table, TupleTableSlot *out) {
    table->result_rel->ri_NumIndices = table->eager_indexes;
    if (column_set(out, kColEndedAt)) return;
    add_partial_index(table, kLivePartial, table->live_index, "index claims_live_slot");
    if (column_set(out, kColRequestKey))
        add_partial_index(table, kKeyPartial, table->request_key_index, "index claims_request_key");
    if (column_set(out, kColRate) && DatumGetBool(out->tts_values[kColRate - 1]))
        add_partial_index(table, kRatePartial, table->rate_grants_index,
                          "index claims_rate_grants");
}

// Before ExecCloseIndices: every index the writer opened.
void all_writer_indexes(ClaimsTable *table) {
    ResultRelInfo *rel = table->result_rel;
    rel->ri_NumIndices = table->eager_indexes;
    for (int which = 0; which < kPartialIndexes; ++which) {
        if (table->partial_indexes[which] == nullptr) continue;
        rel->ri_IndexRelationDescs[rel->ri_NumIndices] = table->partial_indexes[which];
        rel->ri_IndexRelationInfo[rel->ri_NumIndices] = table->partial_infos[which];
        ++rel->ri_NumIndices;
    }
}

void ensure_writer(ClaimsTable *table) {
    if (table->estate != nullptr) return;
    // The same minimal executor state the logical replication apply worker builds.
    EState *estate = CreateExecutorState();
    RangeTblEntry *rte = makeNode(RangeTblEntry);
    rte->rtekind = RTE_RELATION;
    rte->relid = RelationGetRelid(table->rel);
    rte->relkind = table->rel->rd_rel->relkind;
    rte->rellockmode = RowExclusiveLock;
    ExecInitRangeTable(estate, list_make1(rte));
    ResultRelInfo *result_rel = makeNode(ResultRelInfo);
    InitResultRelInfo(result_rel, table->rel, 1, nullptr, 0);
    // pgsem's own writes fire no triggers: the only trigger pgsem.claims has skips rows that
    // logical replication brings (pgsem--1.0--1.1.sql), and the claims of this database are
    // written by these functions alone.
    result_rel->ri_TrigDesc = nullptr;
    estate->es_output_cid = GetCurrentCommandId(true);
    estate->es_snapshot = active_snapshot();
    table->result_rel = result_rel;
    open_writer_indexes(table);
    EvalPlanQualInit(&table->epq, estate, nullptr, NIL, -1);
    table->estate = estate;
    table->new_tuple = ExecInitExtraTupleSlot(estate, RelationGetDescr(table->rel), &TTSOpsVirtual);
}

// The write slot, cleared, with every column NULL (columns appended by later releases stay so).
TupleTableSlot *blank_new_tuple(ClaimsTable *table) {
    ensure_writer(table);
    TupleTableSlot *out = table->new_tuple;
    ExecClearTuple(out);
    const int natts = out->tts_tupleDescriptor->natts;
    for (int i = 0; i < natts; ++i) {
        out->tts_values[i] = static_cast<Datum>(0);
        out->tts_isnull[i] = true;
    }
    return out;
}

// The locked version copied into the write slot, ready for the caller to change some columns.
TupleTableSlot *copy_of_locked(ClaimsTable *table, const LockedClaim &locked) {
    TupleTableSlot *out = blank_new_tuple(table);
    slot_getallattrs(locked.tuple);
    const int natts = out->tts_tupleDescriptor->natts;
    for (int i = 0; i < natts; ++i) {
        out->tts_values[i] = locked.tuple->tts_values[i];
        out->tts_isnull[i] = locked.tuple->tts_isnull[i];
    }
    return out;
}

void store_update(ClaimsTable *table, const LockedClaim &locked, TupleTableSlot *out) {
    ExecStoreVirtualTuple(out);
    indexes_for_row(table, out);
    ExecSimpleRelationUpdate(table->result_rel, table->estate, &table->epq, locked.tuple, out);
    CommandCounterIncrement();
}

// Every scan of the table reads through one of its indexes with a dirty snapshot. `scans`
// counts the scans of that index, whose locks claims_close_unlocking gives back.
void open_dirty_scan(ClaimsTable *table, ClaimScan *scan, Oid index, int *scans,
                     ScanDirection direction) {
    scan->index = index_open(index, AccessShareLock);
    ++*scans;
    scan->tuple = new_scan_slot(table);
    scan->direction = direction;
    InitDirtySnapshot(scan->dirty);
}

// Starts a scan opened by open_dirty_scan with its first `nkeys` keys, set by then.
void start_dirty_scan(ClaimsTable *table, ClaimScan *scan, int nkeys) {
    scan->scan = index_beginscan(table->rel, scan->index, &scan->dirty, nkeys, 0);
    index_rescan(scan->scan, nkeys > 0 ? scan->keys : nullptr, nkeys, nullptr, 0);
}

// Key `key` (attribute `attno`) equal to text `value`, bytewise (the columns are COLLATE "C").
void text_equal_key(ScanKey key, AttrNumber attno, const text *value) {
    ScanKeyInit(key, attno, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(value));
    key->sk_collation = C_COLLATION_OID;
}

// `name` (not nullptr, with an equality on id): only the rows of that semaphore, the primary key's
// second column since 1.2.
void pkey_scan_begin(ClaimsTable *table, ClaimScan *scan, StrategyNumber strategy, RegProcedure op,
                     int64 id, const text *name = nullptr) {
    open_dirty_scan(table, scan, table->pkey_index, &table->pkey_scans, ForwardScanDirection);
    ScanKeyInit(&scan->keys[0], 1, strategy, op, Int64GetDatum(id));
    if (name != nullptr) text_equal_key(&scan->keys[1], 2, name);
    start_dirty_scan(table, scan, name != nullptr ? 2 : 1);
}

}  // namespace

void install_claims_cache_invalidation() {
    CacheRegisterRelcacheCallback(forget_relations, PointerGetDatum(nullptr));
}

void claims_open(ClaimsTable *table, LOCKMODE lockmode) {
    memset(table, 0, sizeof(*table));
    table->lockmode = lockmode;
    if (!cached.valid) look_up_relations();
    table->rel = table_open(cached.table, lockmode);
    // Opening may have processed an invalidation (the extension dropped and created again).
    if (!cached.valid) {
        table_close(table->rel, lockmode);
        look_up_relations();
        table->rel = table_open(cached.table, lockmode);
    }
    if (!cached.shape_checked) {
        check_shape(table->rel);
        cached.shape_checked = true;
    }
    table->pkey_index = cached.pkey_index;
    table->live_index = cached.live_index;
    table->request_key_index = cached.request_key_index;
    table->rate_grants_index = cached.rate_grants_index;
    table->id_sequence = cached.id_sequence;
    table->tuples = NIL;
}

namespace {

void close_table(ClaimsTable *table, LOCKMODE unlock) {
    if (table->estate != nullptr) {
        EvalPlanQualEnd(&table->epq);
        all_writer_indexes(table);
        ExecCloseIndices(table->result_rel);
        ExecResetTupleTable(table->estate->es_tupleTable, false);
        FreeExecutorState(table->estate);
        table->estate = nullptr;
    }
    ExecResetTupleTable(table->tuples, true);
    table->tuples = NIL;
    table_close(table->rel, unlock);
}

}  // namespace

void claims_close(ClaimsTable *table) {
    close_table(table, NoLock);
}

void claims_close_unlocking(ClaimsTable *table) {
    if (table->estate != nullptr) {
        close_table(table, NoLock);
        return;
    }
    for (; table->pkey_scans > 0; --table->pkey_scans)
        UnlockRelationOid(table->pkey_index, AccessShareLock);
    for (; table->live_scans > 0; --table->live_scans)
        UnlockRelationOid(table->live_index, AccessShareLock);
    for (; table->key_scans > 0; --table->key_scans)
        UnlockRelationOid(table->request_key_index, AccessShareLock);
    for (; table->rate_scans > 0; --table->rate_scans)
        UnlockRelationOid(table->rate_grants_index, AccessShareLock);
    close_table(table, table->lockmode);
}

void slot_scan_begin(ClaimsTable *table, ClaimScan *scan, const text *name, int32 first_slot,
                     int32 end_slot, bool backward) {
    open_dirty_scan(table, scan, table->live_index, &table->live_scans,
                    backward ? BackwardScanDirection : ForwardScanDirection);
    text_equal_key(&scan->keys[0], 1, name);
    ScanKeyInit(&scan->keys[1], 2, BTGreaterEqualStrategyNumber, F_INT4GE,
                Int32GetDatum(first_slot));
    ScanKeyInit(&scan->keys[2], 2, BTLessStrategyNumber, F_INT4LT, Int32GetDatum(end_slot));
    start_dirty_scan(table, scan, 3);
}

bool rate_grants_scan_begin(ClaimsTable *table, ClaimScan *scan, const text *name) {
    if (!OidIsValid(table->rate_grants_index)) return false;
    open_dirty_scan(table, scan, table->rate_grants_index, &table->rate_scans,
                    ForwardScanDirection);
    text_equal_key(&scan->keys[0], 1, name);
    start_dirty_scan(table, scan, 1);
    return true;
}

void live_scan_begin(ClaimsTable *table, ClaimScan *scan) {
    open_dirty_scan(table, scan, table->live_index, &table->live_scans, ForwardScanDirection);
    start_dirty_scan(table, scan, 0);
}

void id_scan_begin(ClaimsTable *table, ClaimScan *scan, int64 first_id) {
    pkey_scan_begin(table, scan, BTGreaterEqualStrategyNumber, F_INT8GE, first_id);
}

bool claim_scan_next(ClaimScan *scan, ClaimRow *row) {
    if (!index_getnext_slot(scan->scan, scan->direction, scan->tuple)) return false;
    read_row(scan->tuple, &scan->dirty, row);
    return true;
}

const text *claim_scan_name(const ClaimScan *scan) {
    return DatumGetTextPP(scan->tuple->tts_values[kColName - 1]);
}

const text *claim_scan_application_name(const ClaimScan *scan) {
    return DatumGetTextPP(scan->tuple->tts_values[kColApplicationName - 1]);
}

void claim_scan_end(ClaimScan *scan) {
    index_endscan(scan->scan);
    index_close(scan->index, NoLock);
    ExecDropSingleTupleTableSlot(scan->tuple);  // and its buffer pin
}

namespace {

int add_locker(TransactionId xid, TransactionId *lockers, int count, int max) {
    if (!TransactionIdIsCurrentTransactionId(xid) && !TransactionIdIsInProgress(xid)) return count;
    const TransactionId top = SubTransGetTopmostTransaction(xid);
    for (int i = 0; i < count && i < max; ++i)
        if (lockers[i] == top) return count;
    if (count < max) lockers[count] = top;
    return count + 1;
}

}  // namespace

int claim_scan_row_lockers(const ClaimScan *scan, TransactionId *lockers, int max) {
    const auto *buffered = reinterpret_cast<const BufferHeapTupleTableSlot *>(scan->tuple);
    const Buffer buffer = buffered->buffer;
    if (!BufferIsValid(buffer)) return 0;
    // The infomask and xmax change under an exclusive buffer lock; read them under a share one.
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    const HeapTupleHeader header = buffered->base.tuple->t_data;
    const uint16 infomask = header->t_infomask;
    const TransactionId xmax = HeapTupleHeaderGetRawXmax(header);
    LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
    if ((infomask & HEAP_XMAX_INVALID) != 0 || !TransactionIdIsValid(xmax)) return 0;
    if ((infomask & HEAP_XMAX_IS_MULTI) == 0) return add_locker(xmax, lockers, 0, max);
    MultiXactMember *members = nullptr;
    const int member_count =
        GetMultiXactIdMembers(xmax, &members, false, HEAP_XMAX_IS_LOCKED_ONLY(infomask));
    int count = 0;
    for (int i = 0; i < member_count; ++i) count = add_locker(members[i].xid, lockers, count, max);
    if (members != nullptr) pfree(members);
    return count;
}

namespace {

// Under a dirty snapshot a row another transaction is changing shows both versions. Prefer the
// committed one (its change_in_progress says someone is at work, and locking it waits for them);
// among uncommitted ones, the unended one, which is what claimers count.
bool preferred(const ClaimRow &candidate, const ClaimRow &current) {
    if (current.insert_in_progress != candidate.insert_in_progress)
        return !candidate.insert_in_progress;
    return current.ended && !candidate.ended;
}

// The rows of claim `id`, one per slot of each of its semaphores (the primary key (id, name,
// slot) returns a slot's versions together), each the version `preferred` picks; a renewal in
// flight (a committed version being changed, an unended successor inserted) counts as live until
// the later of the two expiries, and acting on it means waiting for the renewer, not calling it
// timed out. Returns how many slots, at most `max`. `only_name` (not nullptr): its rows only.
int find_all_once(ClaimsTable *table, int64 id, const text *only_name, ClaimRow *rows, int max) {
    ClaimScan scan;
    ClaimRow candidate;
    int count = 0;
    bool successor_unended = false;
    TimestampTz successor_expires_at = 0;
    text *last_name = nullptr;  // of rows[count - 1]
    const auto fold_renewal = [&] {
        ClaimRow &last = rows[count - 1];
        if (last.change_in_progress && successor_unended)
            last.expires_at = Max(last.expires_at, successor_expires_at);
    };
    pkey_scan_begin(table, &scan, BTEqualStrategyNumber, F_INT8EQ, id, only_name);
    while (claim_scan_next(&scan, &candidate)) {
        const text *name = claim_scan_name(&scan);
        if (count == 0 || candidate.slot != rows[count - 1].slot || !same_text(name, last_name)) {
            if (count > 0) fold_renewal();
            if (count == max) break;
            rows[count++] = candidate;
            if (last_name == nullptr || !same_text(name, last_name)) {
                if (last_name != nullptr) pfree(last_name);
                last_name = static_cast<text *>(PG_DETOAST_DATUM_COPY(PointerGetDatum(name)));
            }
            successor_unended = false;
            successor_expires_at = 0;
        } else if (preferred(candidate, rows[count - 1])) {
            rows[count - 1] = candidate;
        }
        if (candidate.insert_in_progress && !candidate.ended) {
            successor_unended = true;
            successor_expires_at = Max(successor_expires_at, candidate.expires_at);
        }
    }
    claim_scan_end(&scan);
    if (count > 0) fold_renewal();
    if (last_name != nullptr) pfree(last_name);
    return count;
}

}  // namespace

int claims_find_all(ClaimsTable *table, int64 id, ClaimRow *rows, int max) {
    return claims_find_on(table, id, nullptr, rows, max);
}

int claims_find_on(ClaimsTable *table, int64 id, const text *name, ClaimRow *rows, int max) {
    // A btree scan reads a leaf page's entries first and their heap tuples after. An update that
    // adds an index entry and commits in between hides the row from that scan: the old version
    // is dead, the new one was not on the page. Such an update is rare and short: look again.
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int count = find_all_once(table, id, name, rows, max);
        if (count > 0) return count;
    }
    return 0;
}

bool claims_find_keyed(ClaimsTable *table, const text *name, Oid role, const text *key,
                       ClaimRow *row) {
    if (!OidIsValid(table->request_key_index)) report_broken_install("index claims_request_key");
    ClaimScan scan;
    open_dirty_scan(table, &scan, table->request_key_index, &table->key_scans,
                    ForwardScanDirection);
    text_equal_key(&scan.keys[0], 1, name);
    ScanKeyInit(&scan.keys[1], 2, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(role));
    text_equal_key(&scan.keys[2], 3, key);
    start_dirty_scan(table, &scan, 3);
    bool found = false;
    ClaimRow candidate;
    // Versions of the key's row: the unended one is the claim (an ended version of it is not in
    // this partial index, but a dirty read can still meet one that is ending).
    while (claim_scan_next(&scan, &candidate)) {
        if (candidate.ended) continue;
        *row = candidate;
        found = true;
        break;
    }
    claim_scan_end(&scan);
    return found;
}

void claims_wait_for_changer(ClaimsTable *table, const ClaimRow &row) {
    if (!row.change_in_progress) return;
    ItemPointerData tid = row.tid;  // for the wait's error context only
    XactLockTableWait(row.changer, table->rel, &tid, XLTW_Lock);
}

bool claims_find(ClaimsTable *table, int64 id, ClaimRow *row) {
    return claims_find_all(table, id, row, 1) > 0;  // its lowest slot's row
}

TM_Result claims_lock(ClaimsTable *table, ItemPointerData tid, LockTupleMode mode,
                      LockWaitPolicy wait, LockedClaim *locked) {
    if (locked->tuple == nullptr) locked->tuple = new_tuple_slot(table);
    TM_FailureData failure;
    const TM_Result result = table_tuple_lock(table->rel, &tid, active_snapshot(), locked->tuple,
                                              GetCurrentCommandId(false), mode, wait, 0, &failure);
    if (result == TM_Ok) read_row(locked->tuple, nullptr, &locked->row);
    return result;
}

const text *locked_claim_name(const LockedClaim &locked) {
    return DatumGetTextPP(locked.tuple->tts_values[kColName - 1]);
}

namespace {

// Waits until the synchronous standbys have flushed `lsn`, whatever this session's
// synchronous_commit says: SyncRepWaitForLSN waits only when the setting asks for it, and an id
// that a standby lacks could be handed out again after a failover, while the caller already uses
// it as a fencing token. A cancel ends the wait with a WARNING and no error (a commit cannot be
// undone there); here nothing has committed yet, so the claim fails instead.
void wait_for_synchronous_standbys(XLogRecPtr lsn) {
    const int guc_level = NewGUCNestLevel();
    if (synchronous_commit < SYNCHRONOUS_COMMIT_REMOTE_FLUSH)
        (void)set_config_option("synchronous_commit", "on", PGC_USERSET, PGC_S_SESSION,
                                GUC_ACTION_SAVE, true, 0, false);
    SyncRepWaitForLSN(lsn, false);
    AtEOXact_GUC(true, guc_level);
    // As SyncRepWaitForLSN decides whether there is anything to wait for.
    if (max_wal_senders == 0 || SyncRepStandbyNames == nullptr || SyncRepStandbyNames[0] == '\0')
        return;
    LWLockAcquire(SyncRepLock, LW_SHARED);
#ifdef SYNC_STANDBY_DEFINED  // minor releases from 2025 on keep the flag in a bit set
    const bool standbys_defined = (WalSndCtl->sync_standbys_status & SYNC_STANDBY_DEFINED) != 0;
#else
    const bool standbys_defined = WalSndCtl->sync_standbys_defined;
#endif
    const bool short_of_standbys = standbys_defined && WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] < lsn;
    LWLockRelease(SyncRepLock);
    if (short_of_standbys)
        ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED),
                        errmsg("no claim was made: its id did not reach the synchronous standbys"),
                        errdetail("The wait for synchronous replication was canceled.")));
}

}  // namespace

int64 claims_last_id(ClaimsTable *table) {
    // The highest id in the table, by one step of a backward scan of the primary key (the
    // sequence's own last value needs a privilege on it the caller may not have).
    ClaimScan scan;
    open_dirty_scan(table, &scan, table->pkey_index, &table->pkey_scans, BackwardScanDirection);
    ScanKeyInit(&scan.keys[0], 1, BTGreaterEqualStrategyNumber, F_INT8GE, Int64GetDatum(0));
    start_dirty_scan(table, &scan, 1);
    ClaimRow row;
    const int64 last = claim_scan_next(&scan, &row) ? row.id : 0;
    claim_scan_end(&scan);
    return last;
}

int64 claims_next_id(ClaimsTable *table) {
    const int64 id = nextval_internal(table->id_sequence, false);
    // nextval WAL-logs a batch of values ahead and leaves that record for the commit to flush.
    // But the id reaches the caller before any commit, and may serve as a fencing token at once:
    // flush the record now (and wait for synchronous standbys, when there are any), so that no
    // crash or failover can hand the same id out again. Only the first id of each batch of 32
    // waits; for the others the record is already on disk.
    Relation sequence = relation_open(table->id_sequence, AccessShareLock);
    const Buffer buffer = ReadBuffer(sequence, 0);
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    const XLogRecPtr logged = PageGetLSN(BufferGetPage(buffer));
    UnlockReleaseBuffer(buffer);
    relation_close(sequence, NoLock);
    XLogFlush(logged);
    wait_for_synchronous_standbys(logged);
    return id;
}

void claims_insert(ClaimsTable *table, const NewClaim &claim) {
    TupleTableSlot *out = blank_new_tuple(table);
    Interval *lease = static_cast<Interval *>(palloc0(sizeof(Interval)));
    lease->time = claim.lease;
    const char *app = application_name != nullptr ? application_name : "";
    Datum *v = out->tts_values;
    bool *null = out->tts_isnull;
    for (int i = 0; i < kKnownColumns; ++i) null[i] = false;
    v[kColId - 1] = Int64GetDatum(claim.id);
    v[kColName - 1] = PointerGetDatum(claim.name);
    v[kColSlot - 1] = Int32GetDatum(claim.slot);
    v[kColSlots - 1] = Int32GetDatum(claim.n);
    v[kColClaimedAt - 1] = TimestampTzGetDatum(claim.claimed_at);
    v[kColExpiresAt - 1] = TimestampTzGetDatum(claim.expires_at);
    v[kColLease - 1] = IntervalPGetDatum(lease);
    null[kColEndedAt - 1] = true;
    null[kColOutcome - 1] = true;
    v[kColHolderPid - 1] = Int32GetDatum(MyProcPid);
    v[kColHolderRole - 1] = ObjectIdGetDatum(GetUserId());
    v[kColApplicationName - 1] = CStringGetTextDatum(app);
    if (has_permits_column(out->tts_tupleDescriptor)) {
        v[kColPermits - 1] = Int32GetDatum(claim.permits);
        null[kColPermits - 1] = false;
    } else if (claim.permits != 1) {
        report_broken_install("table pgsem.claims");
    }
    if (claim.request_key != nullptr) {
        if (!has_request_key_column(out->tts_tupleDescriptor))
            report_broken_install("table pgsem.claims");
        v[kColRequestKey - 1] = PointerGetDatum(claim.request_key);
        null[kColRequestKey - 1] = false;
    }
    if (claim.rate) {
        if (!has_rate_column(out->tts_tupleDescriptor)) report_broken_install("table pgsem.claims");
        v[kColRate - 1] = BoolGetDatum(true);
        null[kColRate - 1] = false;
    }
    ExecStoreVirtualTuple(out);
    indexes_for_row(table, out);
    ExecSimpleRelationInsert(table->result_rel, table->estate, out);
    CommandCounterIncrement();
}

void claims_end(ClaimsTable *table, const LockedClaim &locked, TimestampTz ended_at,
                Outcome outcome) {
    TupleTableSlot *out = copy_of_locked(table, locked);
    out->tts_values[kColEndedAt - 1] = TimestampTzGetDatum(ended_at);
    out->tts_isnull[kColEndedAt - 1] = false;
    out->tts_values[kColOutcome - 1] =
        CStringGetTextDatum(outcome == Outcome::kReleased ? "released" : "timed out");
    out->tts_isnull[kColOutcome - 1] = false;
    store_update(table, locked, out);
}

void claims_extend(ClaimsTable *table, const LockedClaim &locked, TimestampTz expires_at) {
    TupleTableSlot *out = copy_of_locked(table, locked);
    out->tts_values[kColExpiresAt - 1] = TimestampTzGetDatum(expires_at);
    store_update(table, locked, out);
}

void claims_delete(ClaimsTable *table, const LockedClaim &locked) {
    ensure_writer(table);
    ExecSimpleRelationDelete(table->result_rel, table->estate, &table->epq, locked.tuple);
    CommandCounterIncrement();
}

}  // namespace pgsem
