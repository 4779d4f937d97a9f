// SQL glue for quotas per role (1.2): sem_set_quota. Argument checks and conversions only; who
// may set a quota and what it does to a claim are claim/role_quotas.hpp's.
#include "core/arguments.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/role_quotas.hpp"

namespace {

constexpr const char *kFunction = "sem_set_quota()";

// A maximum: NULL is none; else 0 (nothing at all) up to core::kMaxN.
const int32 *maximum_argument(FunctionCallInfo fcinfo, int arg, const char *what, int32 *value) {
    if (PG_ARGISNULL(arg)) return nullptr;
    *value = PG_GETARG_INT32(arg);
    if (*value < 0 || *value > pgsem::core::kMaxN)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: %s must be between 0 and %d, or NULL for no maximum", kFunction,
                               what, static_cast<int>(pgsem::core::kMaxN))));
    return value;
}

}  // namespace

// sem_set_quota(role regrole, max_claims integer, max_waiters integer DEFAULT NULL) -> void.
// Not STRICT: NULL maxima mean none (both NULL: no quota at all).
PGSEM_SQL_FUNCTION(pgsem_sem_set_quota) {
    if (PG_ARGISNULL(0))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: the role must not be null", kFunction)));
    const Oid role = PG_GETARG_OID(0);
    int32 claims = 0;
    int32 waiters = 0;
    const int32 *max_claims = maximum_argument(fcinfo, 1, "max_claims", &claims);
    const int32 *max_waiters = maximum_argument(fcinfo, 2, "max_waiters", &waiters);
    // regrole accepts any number: '-' is 0, and a dropped role's OID still casts. A dropped
    // role's quota may only be removed (both NULL): its row would go to whichever role a restore
    // gives that OID.
    const bool removal = max_claims == nullptr && max_waiters == nullptr;
    if (!OidIsValid(role) || (!removal && !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role))))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("%s: role with OID %u does not exist", kFunction, role)));
    pgsem::set_role_quota(role, max_claims, max_waiters);
    PG_RETURN_VOID();
}
