#include "pg/store/config_tables.hpp"
#include "pg/store/quotas.hpp"

namespace pgsem {

namespace {

constexpr const char *kTable = "quotas";

// The copy's rows: a handful, one per role a superuser bounds.
struct Quotas {
    RoleQuota *quotas;
    int count;
    int room;
};
Quotas copy = {};

void load_copy(Oid relid, MemoryContext context);
ConfigCopy cache = {kTable, "pgsem quotas", load_copy, false, InvalidOid, nullptr};

int32 int_or_none(HeapTuple tuple, AttrNumber att, TupleDesc desc) {
    bool isnull = false;
    const Datum v = heap_getattr(tuple, att, desc, &isnull);
    return isnull ? -1 : DatumGetInt32(v);
}

struct QuotaColumns {
    AttrNumber role, max_claims, max_waiters;
};

void quota_columns(TupleDesc desc, void *arg) {
    auto *cols = static_cast<QuotaColumns *>(arg);
    cols->role = config_column(desc, kTable, "role");
    cols->max_claims = config_column(desc, kTable, "max_claims");
    cols->max_waiters = config_column(desc, kTable, "max_waiters");
}

void quota_row(HeapTuple tuple, TupleDesc desc, void *arg) {
    auto *cols = static_cast<QuotaColumns *>(arg);
    RoleQuota &q = *next_copy_row(&copy.quotas, &copy.count, &copy.room);
    bool isnull = false;
    q.role = DatumGetObjectId(heap_getattr(tuple, cols->role, desc, &isnull));
    q.max_claims = int_or_none(tuple, cols->max_claims, desc);
    q.max_waiters = int_or_none(tuple, cols->max_waiters, desc);
}

void load_copy(Oid relid, MemoryContext context) {
    copy.count = 0;
    copy.room = 8;
    copy.quotas =
        static_cast<RoleQuota *>(MemoryContextAlloc(context, sizeof(RoleQuota) * copy.room));
    QuotaColumns cols{InvalidAttrNumber, InvalidAttrNumber, InvalidAttrNumber};
    config_scan(relid, quota_columns, quota_row, &cols);
}

}  // namespace

void install_quotas_cache_invalidation() {
    config_copy_install(&cache);
}

bool find_role_quota(Oid role, RoleQuota *quota) {
    if (!config_copy_current(&cache)) return false;  // SQL objects older than 1.2: no quotas
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
