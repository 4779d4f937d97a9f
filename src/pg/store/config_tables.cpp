#include "pg/store/config_tables.hpp"

namespace pgsem {

Oid pgsem_table_relid(const char *table) {
    const Oid nsp = get_namespace_oid("pgsem", true);
    return OidIsValid(nsp) ? get_relname_relid(table, nsp) : InvalidOid;
}

AttrNumber config_column(TupleDesc desc, const char *table, const char *name) {
    for (int i = 0; i < desc->natts; ++i) {
        const Form_pg_attribute att = TupleDescAttr(desc, i);
        if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0) return att->attnum;
    }
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("pgsem: table pgsem.%s has no column \"%s\"", table, name),
             errhint("Recreate the extension: DROP EXTENSION pgsem; CREATE EXTENSION pgsem;")));
    return InvalidAttrNumber;
}

void config_scan(Oid relid, void (*columns)(TupleDesc desc, void *arg),
                 void (*row)(HeapTuple tuple, TupleDesc desc, void *arg), void *arg) {
    Relation rel = table_open(relid, AccessShareLock);
    const TupleDesc desc = RelationGetDescr(rel);
    columns(desc, arg);
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    TableScanDesc scan = table_beginscan(rel, snapshot, 0, nullptr);
    HeapTuple tuple;
    while ((tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr) row(tuple, desc, arg);
    table_endscan(scan);
    UnregisterSnapshot(snapshot);
    table_close(rel, AccessShareLock);
}

namespace {

void forget_copy(Datum arg, Oid relid) {
    auto *copy = reinterpret_cast<ConfigCopy *>(DatumGetPointer(arg));
    if (relid == InvalidOid || relid == copy->relid) copy->valid = false;
}

}  // namespace

void config_copy_install(ConfigCopy *copy) {
    CacheRegisterRelcacheCallback(forget_copy, PointerGetDatum(copy));
}

bool config_copy_current(ConfigCopy *copy) {
    AcceptInvalidationMessages();
    if (copy->valid) return true;
    const Oid relid = pgsem_table_relid(copy->table);
    if (!OidIsValid(relid)) return false;
    // The name is a string literal of the copy's owner, which lives as long as the context (what
    // the macro AllocSetContextCreate checks, but cannot see through the struct).
    if (copy->context == nullptr)
        copy->context = AllocSetContextCreateInternal(CacheMemoryContext, copy->context_name,
                                                      ALLOCSET_SMALL_SIZES);
    MemoryContextReset(copy->context);
    copy->relid = relid;
    copy->load(relid, copy->context);
    copy->valid = true;
    return true;
}

Oid require_pgsem_table(const char *table, const char *needs) {
    const Oid relid = pgsem_table_relid(table);
    if (!OidIsValid(relid))
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("pgsem: table pgsem.%s is missing: this needs the SQL objects of %s",
                               table, needs),
                        errhint("Run ALTER EXTENSION pgsem UPDATE.")));
    return relid;
}

OwnerWrite begin_owner_write(const char *table, const char *needs) {
    const Oid relid = require_pgsem_table(table, needs);
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(tuple)) elog(ERROR, "pgsem: cache lookup failed for relation %u", relid);
    const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
    OwnerWrite write{};
    GetUserIdAndSecContext(&write.saved_user, &write.saved_context);
    SetUserIdAndSecContext(
        owner, write.saved_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
    write.guc_level = NewGUCNestLevel();
    (void)set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
                            GUC_ACTION_SAVE, true, 0, false);
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pgsem: SPI_connect failed");
    return write;
}

void end_owner_write(const OwnerWrite &write) {
    SPI_finish();
    AtEOXact_GUC(true, write.guc_level);
    SetUserIdAndSecContext(write.saved_user, write.saved_context);
}

int owner_write_run(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
                    int expected) {
    const int rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
    if (rc != expected) elog(ERROR, "pgsem: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
    return static_cast<int>(SPI_processed);
}

int owner_read_latest(const char *sql, int nargs, Oid *types, Datum *values) {
    const SPIPlanPtr plan = SPI_prepare(sql, nargs, types);
    if (plan == nullptr)
        elog(ERROR, "pgsem: \"%s\" failed: %s", sql, SPI_result_code_string(SPI_result));
    const int rc = SPI_execute_snapshot(plan, values, nullptr, GetLatestSnapshot(), InvalidSnapshot,
                                        true, false, 0);
    if (rc != SPI_OK_SELECT)
        elog(ERROR, "pgsem: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
    return static_cast<int>(SPI_processed);
}

}  // namespace pgsem
