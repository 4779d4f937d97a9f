#include "core/token_bucket.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/buckets.hpp"
#include "pg/store/config_tables.hpp"
#include "pg/store/locks.hpp"

namespace pgsem {

namespace {

constexpr const char *kTable = "buckets";

// Saved for the backend's life (the plan cache plans them again if the table is made anew).
SPIPlanPtr read_plan = nullptr;
SPIPlanPtr write_plan = nullptr;
SPIPlanPtr idle_plan = nullptr;
SPIPlanPtr delete_plan = nullptr;

SPIPlanPtr saved_plan(SPIPlanPtr *plan, const char *sql, int nargs, Oid *types) {
    if (*plan != nullptr) return *plan;
    SPIPlanPtr prepared = SPI_prepare(sql, nargs, types);
    if (prepared == nullptr)
        elog(ERROR, "pgsem: could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
    if (SPI_keepplan(prepared) != 0) elog(ERROR, "pgsem: could not keep the plan of \"%s\"", sql);
    *plan = prepared;
    return prepared;
}

// Runs a saved plan with the latest snapshot (the module's comment says why).
int run_latest(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only) {
    return SPI_execute_snapshot(plan, values, nulls, GetLatestSnapshot(), InvalidSnapshot,
                                read_only, false, 0);
}

// The stored TAT of `name`, or 0 without a row; *found says which.
TimestampTz read_tat(const text *name, bool *found) {
    Oid types[] = {TEXTOID};
    Datum values[] = {PointerGetDatum(name)};
    const SPIPlanPtr plan = saved_plan(
        &read_plan, "SELECT tat FROM pgsem.buckets WHERE name OPERATOR(pg_catalog.=) $1", 1, types);
    if (run_latest(plan, values, nullptr, true) != SPI_OK_SELECT)
        elog(ERROR, "pgsem: reading pgsem.buckets failed");
    *found = SPI_processed == 1;
    if (!*found) return 0;
    bool isnull = false;
    return DatumGetTimestampTz(
        SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

void write_tat(const text *name, TimestampTz tat, const BucketRule &rule) {
    Oid types[] = {TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID, INT4OID};
    Datum values[] = {PointerGetDatum(name), TimestampTzGetDatum(tat), Int32GetDatum(rule.n),
                      Int64GetDatum(rule.per), Int32GetDatum(rule.burst)};
    const SPIPlanPtr plan = saved_plan(
        &write_plan,
        "INSERT INTO pgsem.buckets AS b (name, tat, n, per, burst, granted_at) "
        "VALUES ($1, $2, $3, pg_catalog.make_interval(secs => ($4::pg_catalog.float8 "
        "    OPERATOR(pg_catalog./) 1000000)), $5, pg_catalog.clock_timestamp()) "
        "ON CONFLICT (name) DO UPDATE SET tat = EXCLUDED.tat, n = EXCLUDED.n, per = EXCLUDED.per, "
        "    burst = EXCLUDED.burst, granted_at = EXCLUDED.granted_at",
        5, types);
    if (run_latest(plan, values, nullptr, false) != SPI_OK_INSERT || SPI_processed != 1)
        elog(ERROR, "pgsem: writing pgsem.buckets failed");
}

// Rows whose TAT passed an hour ago are full buckets, the same as none: removed, each under its
// mutex (so that no grant is between its read and its write of the row), checked again there;
// at most 16 (the query's LIMIT) per grant that makes a new row.
void prune_idle_rows() {
    const SPIPlanPtr idle = saved_plan(
        &idle_plan,
        "SELECT name FROM pgsem.buckets WHERE tat OPERATOR(pg_catalog.<) "
        "(pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval) "
        "LIMIT 16",
        0, nullptr);
    if (run_latest(idle, nullptr, nullptr, true) != SPI_OK_SELECT) return;
    const int count = static_cast<int>(SPI_processed);
    text **names = static_cast<text **>(palloc(sizeof(text *) * Max(count, 1)));
    for (int i = 0; i < count; ++i) {
        bool isnull = false;
        // Copied out of SPI's tuple table, which the next statement frees.
        names[i] = DatumGetTextPCopy(
            SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
    }
    Oid types[] = {TEXTOID};
    const SPIPlanPtr remove =
        saved_plan(&delete_plan,
                   "DELETE FROM pgsem.buckets WHERE name OPERATOR(pg_catalog.=) $1 AND tat "
                   "OPERATOR(pg_catalog.<) (pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) "
                   "'1 hour'::pg_catalog.interval)",
                   1, types);
    for (int i = 0; i < count; ++i) {
        if (!try_lock_bucket_mutex(names[i])) continue;  // a grant is at it: not idle
        Datum values[] = {PointerGetDatum(names[i])};
        (void)run_latest(remove, values, nullptr, false);
    }
}

}  // namespace

BucketLook buckets_try_grant(const text *name, const BucketRule &rule, int32 permits,
                             TimestampTz now) {
    const OwnerWrite write = begin_owner_write(kTable, "pgsem 1.2");
    bool found = false;
    const TimestampTz tat = read_tat(name, &found);
    const int64 interval = PGSEM_NOTHROW(core::bucket_interval(rule.per, rule.n));
    const core::BucketDecision decision =
        PGSEM_NOTHROW(core::bucket_decide(now, tat, interval, rule.burst, permits));
    if (decision.granted) {
        write_tat(name, decision.tat, rule);
        if (!found) prune_idle_rows();
    }
    end_owner_write(write);
    return BucketLook{decision.granted, decision.granted ? 0 : decision.fits_at};
}

}  // namespace pgsem
