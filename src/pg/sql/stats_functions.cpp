// SQL glue for sem_stats' counters: pgsem.stats() (the view's rows) and sem_stats_reset(name).
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/stats_views.hpp"

PGSEM_SQL_FUNCTION(pgsem_stats) {
    InitMaterializedSRF(fcinfo, 0);
    const ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    pgsem::stats_rows(rsinfo->setResult, rsinfo->setDesc);
    return static_cast<Datum>(0);
}

PGSEM_SQL_FUNCTION(pgsem_stats_reset) {
    // NULL: every name's counters; a name, only if it could be one (an empty or overlong one is
    // a mistake, not a name that was never counted).
    const text *name = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    if (name != nullptr) pgsem::require_valid_name("sem_stats_reset()", false, name);
    PG_RETURN_INT64(pgsem::reset_stats(name));
}
