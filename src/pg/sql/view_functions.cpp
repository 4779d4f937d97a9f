// SQL glue for the set-returning functions behind the views (pgsem.unended_claims() -- and
// pgsem.live_claims() of 1.1 --, pgsem.lock_claims(), pgsem.waiters()): the rows come from
// claim_views.cpp.
#include "pg/base/boundary.hpp"
#include "pg/claim/claim_views.hpp"

namespace {

using RowWriter = void (*)(Tuplestorestate *, TupleDesc);

Datum materialize(FunctionCallInfo fcinfo, RowWriter write) {
    InitMaterializedSRF(fcinfo, 0);
    const ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    write(rsinfo->setResult, rsinfo->setDesc);
    return static_cast<Datum>(0);
}

}  // namespace

PGSEM_SQL_FUNCTION(pgsem_live_claims) {
    return materialize(fcinfo, pgsem::live_claim_rows);
}

PGSEM_SQL_FUNCTION(pgsem_lock_claims) {
    return materialize(fcinfo, pgsem::lock_claim_rows);
}

PGSEM_SQL_FUNCTION(pgsem_waiters) {
    return materialize(fcinfo, pgsem::waiter_rows);
}
