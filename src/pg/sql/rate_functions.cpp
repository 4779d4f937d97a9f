// SQL glue for rate limits: argument checks and conversions only; the work is in the claim
// sequence (claim/claim_sequence.hpp), which grants a sliding window's permit as it grants a
// lease, in the token bucket's protocol (claim/bucket_grants.hpp), and in pausing.hpp.
#include "core/token_bucket.hpp"
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/bucket_grants.hpp"
#include "pg/claim/claim_sequence.hpp"
#include "pg/claim/pausing.hpp"

namespace {

// The first three arguments of sem_rate and sem_bucket: the limit's name, n and period; n and per
// 0 when the caller left them to the name's declaration (claim/declared_limits.hpp).
struct RateLimit {
    const text *name;
    int32 n;
    int64 per;
};

RateLimit rate_limit_arguments(FunctionCallInfo fcinfo, const char *function,
                               pgsem::RateKind kind) {
    RateLimit limit{};
    limit.name = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    pgsem::require_valid_name(function, PG_ARGISNULL(0), limit.name, "the rate limit's name");
    if (!PG_ARGISNULL(1)) {
        limit.n = PG_GETARG_INT32(1);
        pgsem::require_valid_n(function, false, limit.n);
    }
    if (!PG_ARGISNULL(2))
        limit.per =
            pgsem::require_valid_window(function, false, PG_GETARG_INTERVAL_P(2), "per", kind);
    return limit;
}

}  // namespace

// sem_rate(name text, n integer DEFAULT NULL, per interval DEFAULT NULL,
//          permits integer DEFAULT 1, wait interval DEFAULT '0') -> boolean
//
// A sliding window: at most n permits granted in any window of length per. A grant is a lease of
// `permits` slots of the name whose lease is `per` and which nothing ends early (sem_release,
// sem_renew and sem_fence refuse it: claim/lease_ops.hpp), so each permit comes back exactly
// `per` after it was granted, and a waiter's timer for the earliest expiry wakes it at the
// window's edge. Not STRICT: a null argument is an error, but n and per, which the name's
// declaration (sem_declare_rate) gives.
PGSEM_SQL_FUNCTION(pgsem_sem_rate) {
    constexpr const char *kFunction = "sem_rate()";
    const RateLimit limit =
        rate_limit_arguments(fcinfo, kFunction, pgsem::RateKind::kSlidingWindow);
    const int32 permits = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3);
    pgsem::require_valid_permits(kFunction, PG_ARGISNULL(3), permits, limit.n);
    const int64 wait = pgsem::require_valid_wait(
        kFunction, PG_ARGISNULL(4), PG_ARGISNULL(4) ? nullptr : PG_GETARG_INTERVAL_P(4));
    pgsem::SlotRequest request{limit.name, limit.n, limit.n, pgsem::ClaimKind::kLease,
                               limit.per,  permits, nullptr, 0,
                               0,          true};
    request.per_declared = limit.per == 0;
    const pgsem::SlotGrant grant = pgsem::claim(kFunction, request, wait);
    PG_RETURN_BOOL(grant.granted);
}

// sem_pause(name text, until timestamptz) -> timestamptz: no grants on `name` before `until`
// (NULL: lifts the pause); the pause in force afterwards, or NULL. Not STRICT: a null name is an
// error, a null until the way to lift a pause.
PGSEM_SQL_FUNCTION(pgsem_sem_pause) {
    constexpr const char *kFunction = "sem_pause()";
    const text *name = PG_ARGISNULL(0) ? nullptr : PG_GETARG_TEXT_PP(0);
    pgsem::require_valid_name(kFunction, PG_ARGISNULL(0), name, "the name");
    const bool clear = PG_ARGISNULL(1);
    const TimestampTz until = clear ? 0 : PG_GETARG_TIMESTAMPTZ(1);
    if (!clear && TIMESTAMP_NOT_FINITE(until))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: until must be a finite time", kFunction),
                        errhint("Pass NULL to lift a pause.")));
    const TimestampTz in_force = pgsem::pause_name(kFunction, name, clear, until);
    if (in_force == 0) PG_RETURN_NULL();
    PG_RETURN_TIMESTAMPTZ(in_force);
}

// sem_bucket(name text, n integer DEFAULT NULL, per interval DEFAULT NULL,
//            permits integer DEFAULT 1, wait interval DEFAULT '0', burst integer DEFAULT NULL)
//            -> boolean
//
// A token bucket: n permits per `per`, up to `burst` (NULL: n) at once, its state one row per
// name (claim/bucket_grants.hpp). Not STRICT: a null argument is an error, but n, per and burst,
// which the name's declaration (sem_declare_bucket) gives. The rule as a whole (a refill within a
// day, permits within the burst) is checked once the declaration has completed it.
PGSEM_SQL_FUNCTION(pgsem_sem_bucket) {
    constexpr const char *kFunction = "sem_bucket()";
    const RateLimit limit = rate_limit_arguments(fcinfo, kFunction, pgsem::RateKind::kTokenBucket);
    const int32 burst =
        PG_ARGISNULL(5) ? 0 : pgsem::require_valid_burst(kFunction, false, PG_GETARG_INT32(5), 0);
    const int32 permits = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3);
    pgsem::require_valid_bucket_permits(kFunction, PG_ARGISNULL(3), permits,
                                        static_cast<int32>(pgsem::core::kMaxBurst));
    const int64 wait = pgsem::require_valid_wait(
        kFunction, PG_ARGISNULL(4), PG_ARGISNULL(4) ? nullptr : PG_GETARG_INTERVAL_P(4));
    PG_RETURN_BOOL(pgsem::bucket_grant(
        kFunction, limit.name, pgsem::BucketRule{limit.n, limit.per, burst}, permits, wait));
}
