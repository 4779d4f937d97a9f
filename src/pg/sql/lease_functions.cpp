// SQL glue for the lease claims: argument checks and conversions only; the work is in the claim
// sequence (claim/claim_sequence.hpp) and claim/lease_ops.hpp. sem_claim keeps the entry point of
// its 1.0 signature beside the 1.1 one, for 1.0 installs running on this library until ALTER
// EXTENSION pgsem UPDATE (the version-skew rule in claims_table.cpp).
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/claim_sequence.hpp"
#include "pg/claim/lease_ops.hpp"

namespace {

// sem_claim's arguments: name, n, timeout, (1.1) wait, (1.2) permits, request_key. Not STRICT: a
// null argument is an error, because NULL is the answer "no slot" -- but for n (from 1.2: the
// declared n) and request_key, where NULL is no key.
Datum sem_claim(FunctionCallInfo fcinfo, bool has_wait) {
    constexpr const char *kFunction = "sem_claim()";
    const text *name = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    pgsem::require_valid_name(kFunction, PG_ARGISNULL(0), name);
    // NULL (1.2's default): the declared n (claim/declared_limits.hpp).
    const int32 n = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
    if (!PG_ARGISNULL(1)) pgsem::require_valid_n(kFunction, false, n);
    const int64 lease = pgsem::require_valid_lease(
        kFunction, PG_ARGISNULL(2), PG_ARGISNULL(2) ? nullptr : PG_GETARG_INTERVAL_P(2));
    const int64 wait =
        has_wait ? pgsem::require_valid_wait(kFunction, PG_ARGISNULL(3),
                                             PG_ARGISNULL(3) ? nullptr : PG_GETARG_INTERVAL_P(3))
                 : 0;
    // The 1.1 signature ends with wait; 1.2's passes permits after it (the same entry point).
    const bool has_permits = PG_NARGS() > 4;
    const int32 permits = has_permits && !PG_ARGISNULL(4) ? PG_GETARG_INT32(4) : 1;
    pgsem::require_valid_permits(kFunction, has_permits && PG_ARGISNULL(4), permits, n);
    const bool has_key = PG_NARGS() > 5 && !PG_ARGISNULL(5);
    const text *key = has_key ? PG_GETARG_TEXT_PP(5) : nullptr;
    pgsem::require_valid_request_key(kFunction, !has_key, key);
    const pgsem::SlotGrant grant = pgsem::claim(
        kFunction,
        pgsem::SlotRequest{name, n, n, pgsem::ClaimKind::kLease, lease, permits, key, 0, 0, false},
        wait);
    if (!grant.granted) PG_RETURN_NULL();
    PG_RETURN_INT64(grant.claim_id);
}

}  // namespace

// 1.0: sem_claim(name text, n integer, timeout interval DEFAULT '90 seconds') -> bigint
PGSEM_SQL_FUNCTION(pgsem_sem_claim) {
    return sem_claim(fcinfo, false);
}

// 1.1: sem_claim(name text, n integer, timeout interval DEFAULT '90 seconds',
//                wait interval DEFAULT '0') -> bigint
// 1.2: the same, then permits integer DEFAULT 1, request_key text DEFAULT NULL
PGSEM_SQL_FUNCTION(pgsem_sem_claim_1_1) {
    return sem_claim(fcinfo, true);
}

// sem_release(id bigint) -> boolean, STRICT
PGSEM_SQL_FUNCTION(pgsem_sem_release) {
    PG_RETURN_BOOL(pgsem::lease_release(PG_GETARG_INT64(0)));
}

// sem_renew(id bigint, timeout interval DEFAULT NULL) -> boolean; NULL id gives NULL. A bad
// timeout is an error whatever the id: the call is wrong before any claim is looked at.
PGSEM_SQL_FUNCTION(pgsem_sem_renew) {
    const bool has_lease = !PG_ARGISNULL(1);
    const int64 lease =
        has_lease ? pgsem::require_valid_lease("sem_renew()", false, PG_GETARG_INTERVAL_P(1)) : 0;
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    PG_RETURN_BOOL(pgsem::lease_renew(PG_GETARG_INT64(0), has_lease, lease));
}

// sem_held(id bigint) -> boolean, STRICT
PGSEM_SQL_FUNCTION(pgsem_sem_held) {
    PG_RETURN_BOOL(pgsem::lease_held(PG_GETARG_INT64(0)));
}

// sem_fence(id bigint) -> void; a null id is an error, since a fence that does nothing is a trap.
PGSEM_SQL_FUNCTION(pgsem_sem_fence) {
    if (PG_ARGISNULL(0))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("sem_fence(): the claim id must not be null")));
    pgsem::lease_fence(PG_GETARG_INT64(0));
    PG_RETURN_VOID();
}

// sem_prune_history(max_rows bigint DEFAULT 10000) -> bigint. STRICT up to 1.1 (NULL gave
// NULL); from 1.2 a NULL reaches this shim and is an error.
PGSEM_SQL_FUNCTION(pgsem_sem_prune_history) {
    if (PG_ARGISNULL(0))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("sem_prune_history(): max_rows must not be null")));
    const int64 max_rows = PG_GETARG_INT64(0);
    if (max_rows < 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("sem_prune_history(): max_rows must not be negative")));
    PG_RETURN_INT64(pgsem::prune_claim_history(max_rows));
}
