#include "pg/store/config_tables.hpp"
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

int32 int_or_none(HeapTuple tuple, AttrNumber att, TupleDesc desc) {
    bool isnull = false;
    const Datum v = heap_getattr(tuple, att, desc, &isnull);
    return isnull ? -1 : DatumGetInt32(v);
}

struct QuotaColumns {
    AttrNumber role, max_claims, max_waiters;
    int room;
};

void quota_columns(TupleDesc desc, void *arg) {
    auto *cols = static_cast<QuotaColumns *>(arg);
    cols->role = config_column(desc, kTable, "role");
    cols->max_claims = config_column(desc, kTable, "max_claims");
    cols->max_waiters = config_column(desc, kTable, "max_waiters");
}

void quota_row(HeapTuple tuple, TupleDesc desc, void *arg) {
    auto *cols = static_cast<QuotaColumns *>(arg);
    if (copy.count == cols->room) {
        cols->room *= 2;
        copy.quotas =
            static_cast<RoleQuota *>(repalloc(copy.quotas, sizeof(RoleQuota) * cols->room));
    }
    bool isnull = false;
    RoleQuota &q = copy.quotas[copy.count++];
    q.role = DatumGetObjectId(heap_getattr(tuple, cols->role, desc, &isnull));
    q.max_claims = int_or_none(tuple, cols->max_claims, desc);
    q.max_waiters = int_or_none(tuple, cols->max_waiters, desc);
}

void load_copy(Oid relid) {
    if (copy.context == nullptr)
        copy.context =
            AllocSetContextCreate(CacheMemoryContext, "pgsem quotas", ALLOCSET_SMALL_SIZES);
    MemoryContextReset(copy.context);
    copy.valid = false;
    copy.relid = relid;
    copy.count = 0;
    QuotaColumns cols{InvalidAttrNumber, InvalidAttrNumber, InvalidAttrNumber, 8};
    copy.quotas =
        static_cast<RoleQuota *>(MemoryContextAlloc(copy.context, sizeof(RoleQuota) * cols.room));
    config_scan(relid, quota_columns, quota_row, &cols);
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
