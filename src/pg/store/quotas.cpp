#include "pg/store/owner_writes.hpp"
#include "pg/store/quotas.hpp"

namespace pgsem {

namespace {

constexpr const char *kTable = "quotas";

// The copy, in a memory context of its own under CacheMemoryContext. A handful of rows: one per
// role a superuser bounds.
struct Copy {
    bool valid;
    Oid relid;
    MemoryContext context;
    RoleQuota *quotas;
    int count;
};
Copy copy = {};

void forget_copy(Datum /*arg*/, Oid relid) {
    if (relid == InvalidOid || relid == copy.relid) copy.valid = false;
}

AttrNumber column(TupleDesc desc, const char *name) {
    for (int i = 0; i < desc->natts; ++i) {
        const Form_pg_attribute att = TupleDescAttr(desc, i);
        if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0) return att->attnum;
    }
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("pgsem: table pgsem.quotas has no column \"%s\"", name),
             errhint("Recreate the extension: DROP EXTENSION pgsem; CREATE EXTENSION pgsem;")));
    return InvalidAttrNumber;
}

int32 int_or_none(HeapTuple tuple, AttrNumber att, TupleDesc desc) {
    bool isnull = false;
    const Datum v = heap_getattr(tuple, att, desc, &isnull);
    return isnull ? -1 : DatumGetInt32(v);
}

// Every row, as the latest snapshot sees it, under AccessShareLock for the read alone.
void load_copy(Oid relid) {
    if (copy.context == nullptr)
        copy.context =
            AllocSetContextCreate(CacheMemoryContext, "pgsem quotas", ALLOCSET_SMALL_SIZES);
    MemoryContextReset(copy.context);
    copy.valid = false;
    copy.relid = relid;
    copy.count = 0;
    Relation rel = table_open(relid, AccessShareLock);
    const TupleDesc desc = RelationGetDescr(rel);
    const AttrNumber role = column(desc, "role");
    const AttrNumber max_claims = column(desc, "max_claims");
    const AttrNumber max_waiters = column(desc, "max_waiters");
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    TableScanDesc scan = table_beginscan(rel, snapshot, 0, nullptr);
    int room = 8;
    copy.quotas =
        static_cast<RoleQuota *>(MemoryContextAlloc(copy.context, sizeof(RoleQuota) * room));
    HeapTuple tuple;
    while ((tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
        if (copy.count == room) {
            room *= 2;
            copy.quotas = static_cast<RoleQuota *>(repalloc(copy.quotas, sizeof(RoleQuota) * room));
        }
        bool isnull = false;
        RoleQuota &q = copy.quotas[copy.count++];
        q.role = DatumGetObjectId(heap_getattr(tuple, role, desc, &isnull));
        q.max_claims = int_or_none(tuple, max_claims, desc);
        q.max_waiters = int_or_none(tuple, max_waiters, desc);
    }
    table_endscan(scan);
    UnregisterSnapshot(snapshot);
    table_close(rel, AccessShareLock);
    copy.valid = true;
}

}  // namespace

void install_quotas_cache_invalidation() {
    CacheRegisterRelcacheCallback(forget_copy, PointerGetDatum(nullptr));
}

bool find_role_quota(Oid role, RoleQuota *quota) {
    // A change committed since this transaction last took a lock: its invalidation is queued.
    AcceptInvalidationMessages();
    if (!copy.valid) {
        const Oid relid = pgsem_table_relid(kTable);
        if (!OidIsValid(relid)) return false;  // SQL objects older than 1.2: no quotas
        load_copy(relid);
    }
    for (int i = 0; i < copy.count; ++i) {
        if (copy.quotas[i].role != role) continue;
        *quota = copy.quotas[i];
        return true;
    }
    return false;
}

void quotas_set(Oid role, const int32 *max_claims, const int32 *max_waiters) {
    const OwnerWrite write = begin_owner_write(kTable, "pgsem 1.2");
    Oid types[] = {OIDOID, INT4OID, INT4OID};
    char nulls[] = {' ', max_claims == nullptr ? 'n' : ' ', max_waiters == nullptr ? 'n' : ' ',
                    '\0'};
    Datum values[] = {ObjectIdGetDatum(role), Int32GetDatum(max_claims ? *max_claims : 0),
                      Int32GetDatum(max_waiters ? *max_waiters : 0)};
    if (max_claims == nullptr && max_waiters == nullptr)
        (void)owner_write_run(
            "DELETE FROM pgsem.quotas WHERE role OPERATOR(pg_catalog.=) $1::pg_catalog.regrole", 1,
            types, values, nulls, SPI_OK_DELETE);
    else
        (void)owner_write_run(
            "INSERT INTO pgsem.quotas (role, max_claims, max_waiters)"
            " VALUES ($1::pg_catalog.regrole, $2, $3)"
            " ON CONFLICT (role) DO UPDATE SET max_claims = EXCLUDED.max_claims,"
            "     max_waiters = EXCLUDED.max_waiters, changed_at = pg_catalog.now()",
            3, types, values, nulls, SPI_OK_INSERT);
    end_owner_write(write);
}

}  // namespace pgsem
