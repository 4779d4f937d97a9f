#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/stats_views.hpp"
#include "pg/store/name_stats.hpp"

namespace pgsem {

namespace {

constexpr int kColumns = 17;

Datum count_datum(uint64 value) {
    return Int64GetDatum(static_cast<int64>(Min(value, static_cast<uint64>(PG_INT64_MAX))));
}

Datum seconds_datum(uint64 micros) {
    return Float8GetDatum(static_cast<double>(micros) / static_cast<double>(USECS_PER_SEC));
}

void explain_no_counters() {
    ereport(NOTICE,
            (errmsg("pgsem: sem_stats counts nothing on this server"),
             errdetail("The counters live in shared memory reserved at server start; holders and "
                       "waiters are shown without them."),
             errhint("Add pgsem to shared_preload_libraries and restart the server.")));
}

}  // namespace

void stats_rows(Tuplestorestate *store, TupleDesc desc) {
    if (!name_stats_ready()) {
        explain_no_counters();
        return;
    }
    name_stats_forget_dropped_databases();
    NameStatsRow *rows = nullptr;
    const int count = name_stats_copy(&rows);
    for (int i = 0; i < count; ++i) {
        const NameStatsRow &row = rows[i];
        const core::ClaimTally &t = row.tally;
        Datum values[kColumns];
        bool nulls[kColumns] = {};
        if (row.other)
            nulls[0] = true;
        else
            values[0] = CStringGetTextDatum(row.name);
        values[1] = Int64GetDatum(row.names_folded);
        values[2] = TimestampTzGetDatum(row.since);
        nulls[2] = row.since == 0;
        values[3] = TimestampTzGetDatum(row.last_active);
        nulls[3] = row.last_active == 0;
        values[4] = count_datum(t.granted);
        values[5] = count_datum(t.granted_after_wait);
        values[6] = count_datum(t.refused);
        values[7] = count_datum(t.timed_out);
        values[8] = count_datum(t.wait_errors);
        values[9] = count_datum(t.released);
        values[10] = count_datum(t.expired_permits);
        values[11] = count_datum(t.renewed);
        values[12] = count_datum(t.permits_granted);
        values[13] = seconds_datum(t.wait_micros);
        values[14] = seconds_datum(t.wait_max_micros);
        values[15] = seconds_datum(t.held_micros);
        values[16] = seconds_datum(row.paused_micros);
        tuplestore_putvalues(store, desc, values, nulls);
    }
}

int64 reset_stats(const text *name) {
    if (!name_stats_ready()) explain_no_counters();
    return name_stats_reset(name);
}

}  // namespace pgsem
