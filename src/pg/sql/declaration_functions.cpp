// SQL glue for declared semaphores and rate limits (1.2): sem_declare, sem_declare_rate,
// sem_declare_bucket, sem_undeclare, sem_grant, sem_revoke, sem_grant_public, sem_revoke_public,
// and the trigger that tells every backend of a change.
// Argument checks and conversions only; who may do what is claim/declaring.hpp's, what a
// declaration does to a claim claim/declared_limits.hpp's. None is STRICT: NULLs are errors, but
// the maxima (NULL: none) and a bucket's burst (NULL: n).
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/declaring.hpp"
#include "pg/store/declarations.hpp"
#include "pg/xact/pending_wakes.hpp"

namespace {

const text *pattern_argument(FunctionCallInfo fcinfo, const char *function) {
    const text *pattern = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    pgsem::require_valid_name(function, PG_ARGISNULL(0), pattern);
    return pattern;
}

Oid grantee_argument(FunctionCallInfo fcinfo, const char *function, bool granted) {
    if (PG_ARGISNULL(1))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: the grantee must not be null", function)));
    const Oid grantee = PG_GETARG_OID(1);
    // regrole accepts any number: '-' is 0, and a dropped role's OID still casts. A dropped
    // role's grant may only be revoked: it would go to whichever role a restore gives that OID.
    if (!OidIsValid(grantee) ||
        (granted && !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(grantee))))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("%s: role with OID %u does not exist", function, grantee),
                        errhint("PUBLIC is granted with sem_grant_public(name).")));
    return grantee;
}

// A maximum wait: NULL is none.
const Interval *max_wait_argument(FunctionCallInfo fcinfo, int arg, const char *function) {
    const Interval *max_wait = PG_ARGISNULL(arg) ? nullptr : PG_GETARG_INTERVAL_P(arg);
    if (max_wait != nullptr) (void)pgsem::require_valid_wait(function, false, max_wait, "max_wait");
    return max_wait;
}

// (name text, n integer, per interval): a rate limit's first three arguments, checked as
// sem_rate and sem_bucket check theirs.
pgsem::DeclaredLimits rate_arguments(FunctionCallInfo fcinfo, const char *function,
                                     pgsem::DeclaredKind kind) {
    pgsem::DeclaredLimits limits{};
    limits.kind = kind;
    limits.n = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
    pgsem::require_valid_n(function, PG_ARGISNULL(1), limits.n);
    limits.per = PG_ARGISNULL(2) ? nullptr : PG_GETARG_INTERVAL_P(2);
    (void)pgsem::require_valid_window(function, PG_ARGISNULL(2), limits.per, "per",
                                      kind == pgsem::DeclaredKind::kBucket
                                          ? pgsem::RateKind::kTokenBucket
                                          : pgsem::RateKind::kSlidingWindow);
    return limits;
}

Datum set_right(FunctionCallInfo fcinfo, const char *function, bool to_public, bool granted) {
    const text *pattern = pattern_argument(fcinfo, function);
    const Oid grantee = to_public ? InvalidOid : grantee_argument(fcinfo, function, granted);
    pgsem::set_claim_right(function, pattern, grantee, granted);
    PG_RETURN_VOID();
}

}  // namespace

// sem_declare(name text, n integer, max_lease interval DEFAULT NULL,
//             max_wait interval DEFAULT NULL) -> void
PGSEM_SQL_FUNCTION(pgsem_sem_declare) {
    constexpr const char *kFunction = "sem_declare()";
    const text *pattern = pattern_argument(fcinfo, kFunction);
    const int32 n = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
    pgsem::require_valid_n(kFunction, PG_ARGISNULL(1), n);
    const Interval *max_lease = PG_ARGISNULL(2) ? nullptr : PG_GETARG_INTERVAL_P(2);
    if (max_lease != nullptr)
        (void)pgsem::require_valid_lease(kFunction, false, max_lease, "max_lease");
    const Interval *max_wait = max_wait_argument(fcinfo, 3, kFunction);
    pgsem::declare(
        kFunction, pattern,
        pgsem::DeclaredLimits{n, max_lease, max_wait, pgsem::DeclaredKind::kSemaphore, nullptr, 0});
    PG_RETURN_VOID();
}

// sem_declare_rate(name text, n integer, per interval, max_wait interval DEFAULT NULL) -> void:
// a sliding window (sem_rate) of at most n permits in any window of length per.
PGSEM_SQL_FUNCTION(pgsem_sem_declare_rate) {
    constexpr const char *kFunction = "sem_declare_rate()";
    const text *pattern = pattern_argument(fcinfo, kFunction);
    pgsem::DeclaredLimits limits = rate_arguments(fcinfo, kFunction, pgsem::DeclaredKind::kWindow);
    limits.max_wait = max_wait_argument(fcinfo, 3, kFunction);
    pgsem::declare(kFunction, pattern, limits);
    PG_RETURN_VOID();
}

// sem_declare_bucket(name text, n integer, per interval, burst integer DEFAULT NULL,
//                    max_wait interval DEFAULT NULL) -> void: a token bucket (sem_bucket) of n
// permits per per, up to burst (NULL: n) at once.
PGSEM_SQL_FUNCTION(pgsem_sem_declare_bucket) {
    constexpr const char *kFunction = "sem_declare_bucket()";
    const text *pattern = pattern_argument(fcinfo, kFunction);
    pgsem::DeclaredLimits limits = rate_arguments(fcinfo, kFunction, pgsem::DeclaredKind::kBucket);
    limits.burst = pgsem::require_valid_burst(kFunction, PG_ARGISNULL(3),
                                              PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3), limits.n);
    pgsem::require_valid_bucket_refill(kFunction, limits.n, pgsem::interval_micros(limits.per),
                                       limits.burst);
    limits.max_wait = max_wait_argument(fcinfo, 4, kFunction);
    pgsem::declare(kFunction, pattern, limits);
    PG_RETURN_VOID();
}

// sem_undeclare(name text) -> boolean: false when nothing is declared under exactly that name
PGSEM_SQL_FUNCTION(pgsem_sem_undeclare) {
    PG_RETURN_BOOL(pgsem::undeclare(pattern_argument(fcinfo, "sem_undeclare()")));
}

// sem_grant(name text, grantee regrole) -> void
PGSEM_SQL_FUNCTION(pgsem_sem_grant) {
    return set_right(fcinfo, "sem_grant()", false, true);
}

// sem_revoke(name text, grantee regrole) -> void
PGSEM_SQL_FUNCTION(pgsem_sem_revoke) {
    return set_right(fcinfo, "sem_revoke()", false, false);
}

// sem_grant_public(name text) -> void
PGSEM_SQL_FUNCTION(pgsem_sem_grant_public) {
    return set_right(fcinfo, "sem_grant_public()", true, true);
}

// sem_revoke_public(name text) -> void
PGSEM_SQL_FUNCTION(pgsem_sem_revoke_public) {
    return set_right(fcinfo, "sem_revoke_public()", true, false);
}

// pgsem.declarations_changed() -> trigger, AFTER each statement that writes pgsem.declarations
// (the functions above, a superuser's own INSERT, a restore's COPY): once the transaction commits,
// every backend loads its copy again and every first waiter looks again, under the new n.
PGSEM_SQL_FUNCTION(pgsem_declarations_changed) {
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("pgsem.declarations_changed() is a trigger")));
    const TriggerData *trigger = reinterpret_cast<TriggerData *>(fcinfo->context);
    pgsem::declarations_changed(RelationGetRelid(trigger->tg_relation));
    pgsem::wake_every_first_waiter_at_end();
    return PointerGetDatum(nullptr);
}
