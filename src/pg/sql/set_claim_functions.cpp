// SQL glue for claims on several semaphores at once: sem_claim_all, sem_claim_xact_all and
// sem_claim_session_all. Argument checks and conversions only -- arrays in, in the caller's order;
// the members handed to the claim sequence (claim/claim_sequence.hpp, claim_all) in the set's
// canonical order; the answer out in the caller's order again. A member of sem_claim_all with a
// window in pers is a rate limit's grant, as sem_rate makes it (rate_functions.cpp): a lease of
// its window, marked rate.
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/claim_sequence.hpp"

namespace {

struct Elements {
    Datum *values;
    bool *nulls;
    int count;
};

Elements text_elements(ArrayType *array) {
    Elements out{nullptr, nullptr, 0};
    deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &out.values, &out.nulls, &out.count);
    return out;
}

Elements int4_elements(ArrayType *array) {
    Elements out{nullptr, nullptr, 0};
    deconstruct_array(array, INT4OID, sizeof(int32), true, TYPALIGN_INT, &out.values, &out.nulls,
                      &out.count);
    return out;
}

Elements interval_elements(ArrayType *array) {
    Elements out{nullptr, nullptr, 0};
    deconstruct_array(array, INTERVALOID, sizeof(Interval), false, TYPALIGN_DOUBLE, &out.values,
                      &out.nulls, &out.count);
    return out;
}

bool any_null(const Elements &array) {
    for (int i = 0; i < array.count; ++i)
        if (array.nulls[i]) return true;
    return false;
}

ArrayType *array_argument(FunctionCallInfo fcinfo, int arg, const char *function,
                          const char *argument) {
    const bool is_null = PG_ARGISNULL(arg);
    ArrayType *array = is_null ? nullptr : PG_GETARG_ARRAYTYPE_P(arg);
    pgsem::require_array(function, argument, is_null, array);
    return array;
}

// Whether the caller gave member i an n (no ns, or NULL in it: the declared n).
bool n_given(const Elements &ns, int i) {
    return ns.nulls != nullptr && i < ns.count && !ns.nulls[i];
}

// Member i's n as the caller gave it; 0 for the declared n.
int32 asked_n(const Elements &ns, int i) {
    return n_given(ns, i) ? DatumGetInt32(ns.values[i]) : 0;
}

// Whether member i is a rate limit (a window in pers; NULL there, or no pers: a semaphore).
bool per_given(const Elements &pers, int i) {
    return pers.nulls != nullptr && i < pers.count && !pers.nulls[i];
}

// The set's members, checked, in canonical order; `order[i]` is member i's position in names.
struct ParsedSet {
    pgsem::SlotRequest *members;
    int *order;
    int count;
};

// The arguments: names (0), ns (1), then permits at `permits_arg` and, for sem_claim_all, pers at
// `pers_arg` (-1: none; NULL, or the argument absent from a definition without it: no rate
// member).
ParsedSet parse_set(FunctionCallInfo fcinfo, const char *function, pgsem::ClaimKind kind,
                    int64 lease, int permits_arg, const text *key, int pers_arg = -1) {
    const Elements names = text_elements(array_argument(fcinfo, 0, function, "names"));
    // ns NULL (1.2's default), or a NULL in it: that semaphore's declared n.
    const bool has_ns = !PG_ARGISNULL(1);
    Elements ns{nullptr, nullptr, 0};
    if (has_ns) ns = int4_elements(array_argument(fcinfo, 1, function, "ns"));
    Elements permits{nullptr, nullptr, 0};
    const bool has_permits = !PG_ARGISNULL(permits_arg);
    if (has_permits)
        permits = int4_elements(array_argument(fcinfo, permits_arg, function, "permits"));
    // NULL in pers: that member is a semaphore.
    Elements pers{nullptr, nullptr, 0};
    const bool has_pers = pers_arg >= 0 && PG_NARGS() > pers_arg && !PG_ARGISNULL(pers_arg);
    if (has_pers) pers = interval_elements(array_argument(fcinfo, pers_arg, function, "pers"));
    pgsem::require_no_null_element(function, "names", any_null(names));
    pgsem::require_no_null_element(function, "permits", any_null(permits));
    int64 permit_sum = 0;
    for (int i = 0; i < names.count && i < permits.count; ++i)
        permit_sum += Max(DatumGetInt32(permits.values[i]), 0);
    if (!has_permits) permit_sum = names.count;
    pgsem::require_valid_set_shape(function, names.count, has_ns ? ns.count : names.count,
                                   has_permits, permits.count, permit_sum, has_pers, pers.count);

    ParsedSet set{nullptr, nullptr, names.count};
    text **texts = static_cast<text **>(palloc(sizeof(text *) * set.count));
    // Each member's lease: the set's timeout, or a rate member's window, checked as sem_rate
    // checks its per.
    int64 *leases = static_cast<int64 *>(palloc(sizeof(int64) * set.count));
    for (int i = 0; i < set.count; ++i) {
        texts[i] = DatumGetTextPP(names.values[i]);
        pgsem::require_valid_name(function, false, texts[i]);
        const int32 n = asked_n(ns, i);
        if (n_given(ns, i)) pgsem::require_valid_n(function, false, n);  // an explicit 0 too
        const int32 k = has_permits ? DatumGetInt32(permits.values[i]) : 1;
        pgsem::require_valid_permits(function, false, k, n);
        leases[i] = lease;
        if (per_given(pers, i))
            leases[i] = pgsem::require_valid_window(
                function, false, DatumGetIntervalP(pers.values[i]), psprintf("pers[%d]", i + 1));
    }
    set.order = static_cast<int *>(palloc(sizeof(int) * set.count));
    pgsem::order_set_names(function, texts, set.count, set.order);
    set.members = static_cast<pgsem::SlotRequest *>(palloc(sizeof(pgsem::SlotRequest) * set.count));
    for (int m = 0; m < set.count; ++m) {
        const int i = set.order[m];
        set.members[m] = pgsem::SlotRequest{texts[i],
                                            asked_n(ns, i),
                                            asked_n(ns, i),
                                            kind,
                                            leases[i],
                                            has_permits ? DatumGetInt32(permits.values[i]) : 1,
                                            key,
                                            0,
                                            0,
                                            per_given(pers, i)};
        // With no per, a lease member is a rate grant if its name is declared a sliding window.
        set.members[m].rate_if_declared = kind == pgsem::ClaimKind::kLease && !per_given(pers, i);
    }
    return set;
}

// The answer in the caller's order: the claim id for each name (leases), or each name's lowest
// slot (transaction and session claims).
Datum answer(const ParsedSet &set, const pgsem::SetGrant &grant, pgsem::ClaimKind kind) {
    Datum *values = static_cast<Datum *>(palloc(sizeof(Datum) * set.count));
    for (int m = 0; m < set.count; ++m)
        values[set.order[m]] = kind == pgsem::ClaimKind::kLease ? Int64GetDatum(grant.claim_id)
                                                                : Int32GetDatum(grant.slots[m]);
    ArrayType *array =
        kind == pgsem::ClaimKind::kLease
            ? construct_array(values, set.count, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE)
            : construct_array(values, set.count, INT4OID, sizeof(int32), true, TYPALIGN_INT);
    PG_RETURN_ARRAYTYPE_P(array);
}

pgsem::SetGrant claim_set(const char *function, const ParsedSet &set, int64 wait) {
    pgsem::SetGrant grant{false, 0, static_cast<int32 *>(palloc0(sizeof(int32) * set.count))};
    pgsem::claim_all(function, pgsem::SetRequest{set.members, set.count}, wait, &grant);
    return grant;
}

// Transaction and session claims: (names text[], ns integer[], wait interval, permits integer[]).
Datum lock_claim_all(FunctionCallInfo fcinfo, pgsem::ClaimKind kind, const char *function) {
    const int64 wait = pgsem::require_valid_wait(
        function, PG_ARGISNULL(2), PG_ARGISNULL(2) ? nullptr : PG_GETARG_INTERVAL_P(2));
    const ParsedSet set = parse_set(fcinfo, function, kind, 0, 3, nullptr);
    const pgsem::SetGrant grant = claim_set(function, set, wait);
    if (!grant.granted) PG_RETURN_NULL();
    return answer(set, grant, kind);
}

}  // namespace

// sem_claim_all(names text[], ns integer[], timeout interval DEFAULT '90 seconds',
//               wait interval DEFAULT '0', permits integer[] DEFAULT NULL,
//               request_key text DEFAULT NULL, pers interval[] DEFAULT NULL) -> bigint[]: one
// claim id for the whole set, in each element (a rate member's too: its grant's rows carry it);
// NULL when the set could not be had. Not STRICT: NULLs are errors, but permits (NULL: one
// each), request_key (NULL: no key) and pers (NULL, or NULL in it: a semaphore, not a rate
// limit).
PGSEM_SQL_FUNCTION(pgsem_sem_claim_all) {
    constexpr const char *kFunction = "sem_claim_all()";
    const int64 lease = pgsem::require_valid_lease(
        kFunction, PG_ARGISNULL(2), PG_ARGISNULL(2) ? nullptr : PG_GETARG_INTERVAL_P(2));
    const int64 wait = pgsem::require_valid_wait(
        kFunction, PG_ARGISNULL(3), PG_ARGISNULL(3) ? nullptr : PG_GETARG_INTERVAL_P(3));
    const text *key = PG_ARGISNULL(5) ? nullptr : PG_GETARG_TEXT_PP(5);
    pgsem::require_valid_request_key(kFunction, key == nullptr, key);
    const ParsedSet set = parse_set(fcinfo, kFunction, pgsem::ClaimKind::kLease, lease, 4, key, 6);
    const pgsem::SetGrant grant = claim_set(kFunction, set, wait);
    if (!grant.granted) PG_RETURN_NULL();
    return answer(set, grant, pgsem::ClaimKind::kLease);
}

// sem_claim_xact_all(names text[], ns integer[], wait interval DEFAULT '0',
//                    permits integer[] DEFAULT NULL) -> integer[]: each name's lowest slot
PGSEM_SQL_FUNCTION(pgsem_sem_claim_xact_all) {
    return lock_claim_all(fcinfo, pgsem::ClaimKind::kTransaction, "sem_claim_xact_all()");
}

// sem_claim_session_all(names text[], ns integer[], wait interval DEFAULT '0',
//                       permits integer[] DEFAULT NULL) -> integer[]
PGSEM_SQL_FUNCTION(pgsem_sem_claim_session_all) {
    return lock_claim_all(fcinfo, pgsem::ClaimKind::kSession, "sem_claim_session_all()");
}
