// SQL glue for transaction and session claims: argument checks and conversions only; the work is
// in the claim sequence (claim/claim_sequence.hpp) and, for releases, xact/held_claims.hpp.
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/claim_sequence.hpp"
#include "pg/xact/held_claims.hpp"

namespace {

// sem_claim_xact and sem_claim_session take (name text, n integer, wait interval DEFAULT '0')
// and, from 1.2 on, permits integer DEFAULT 1 (one entry point for both signatures); they return
// the claim's lowest slot, or NULL. Not STRICT: a null argument is an error, but n (from 1.2:
// the declared n).
Datum claim(FunctionCallInfo fcinfo, pgsem::ClaimKind kind, const char *function) {
    const text *name = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    pgsem::require_valid_name(function, PG_ARGISNULL(0), name);
    // NULL (1.2's default): the declared n (claim/declared_limits.hpp).
    const int32 n = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
    if (!PG_ARGISNULL(1)) pgsem::require_valid_n(function, false, n);
    const int64 wait = pgsem::require_valid_wait(
        function, PG_ARGISNULL(2), PG_ARGISNULL(2) ? nullptr : PG_GETARG_INTERVAL_P(2));
    const bool has_permits = PG_NARGS() > 3;
    const int32 permits = has_permits && !PG_ARGISNULL(3) ? PG_GETARG_INT32(3) : 1;
    pgsem::require_valid_permits(function, has_permits && PG_ARGISNULL(3), permits, n);
    const pgsem::SlotGrant grant = pgsem::claim(
        function, pgsem::SlotRequest{name, n, n, kind, 0, permits, nullptr, 0, 0, false}, wait);
    if (!grant.granted) PG_RETURN_NULL();
    PG_RETURN_INT32(grant.slot);
}

}  // namespace

// sem_claim_xact(name text, n integer, wait interval DEFAULT '0') -> integer
PGSEM_SQL_FUNCTION(pgsem_sem_claim_xact) {
    return claim(fcinfo, pgsem::ClaimKind::kTransaction, "sem_claim_xact()");
}

// sem_claim_session(name text, n integer, wait interval DEFAULT '0') -> integer
PGSEM_SQL_FUNCTION(pgsem_sem_claim_session) {
    return claim(fcinfo, pgsem::ClaimKind::kSession, "sem_claim_session()");
}

// sem_release_session(name text, slot integer) -> boolean: false when this session holds no such
// claim; any slot of a claim of several permits gives back all of them. Not STRICT: a null
// argument is an error.
PGSEM_SQL_FUNCTION(pgsem_sem_release_session) {
    constexpr const char *kFunction = "sem_release_session()";
    const text *name = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    pgsem::require_valid_name(kFunction, PG_ARGISNULL(0), name);
    const int32 slot = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
    pgsem::require_valid_slot(kFunction, PG_ARGISNULL(1), slot);
    PG_RETURN_BOOL(pgsem::release_session_claim(name, slot));
}
