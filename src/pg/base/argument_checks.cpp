#include "core/arguments.hpp"
#include "core/token_bucket.hpp"
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"

namespace pgsem {

char *interval_text(int64 micros) {
    Interval i{};
    i.time = micros;
    return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(&i)));
}

namespace {

core::Interval to_core(const Interval *interval) {
    return core::Interval{interval->month, interval->day, interval->time};
}

void raise_null(const char *function, const char *argument) {
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("%s: %s must not be null", function, argument)));
}

// What permits must stay within, in a message's words: "n" of a semaphore, "the burst" of a
// token bucket.
struct PermitBound {
    const char *name;
    int32 shown;                  // the bound as the message names it
    const char *above_detail;     // why more than the bound could never be granted
    const char *over_max_detail;  // why no more than core::kMaxPermits at once (nullptr: none)
};

void require_permits_within(const char *function, bool is_null, int32 permits, int32 bound,
                            const PermitBound &words) {
    switch (PGSEM_NOTHROW(core::check_permits(is_null, permits, bound))) {
        case core::Problem::kNone:
            return;
        case core::Problem::kNull:
            raise_null(function, "permits");
            break;
        case core::Problem::kNotPositive:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: permits must be at least 1, not %d", function, permits)));
            break;
        case core::Problem::kAboveN:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: permits (%d) must not exceed %s (%d)", function, permits,
                                   words.name, words.shown),
                            errdetail("%s", words.above_detail)));
            break;
        default:
            ereport(
                ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("%s: permits must be at most %lld, not %d", function,
                        static_cast<long long>(core::kMaxPermits), permits),
                 words.over_max_detail != nullptr ? errdetail("%s", words.over_max_detail) : 0));
            break;
    }
}

// What a length (a lease, a window) must be, in its own words when it is not.
struct LengthWords {
    const char *not_positive_detail;
    const char *too_long_detail;
    const char *too_long_hint;  // nullptr: none
};

int64 require_valid_length(const char *function, bool is_null, const Interval *length,
                           const char *argument, const LengthWords &words) {
    const core::Interval value = is_null ? core::Interval{0, 0, 0} : to_core(length);
    const core::LeaseCheck check = PGSEM_NOTHROW(core::check_lease(is_null, value));
    switch (check.problem) {
        case core::Problem::kNone:
            return check.micros;
        case core::Problem::kNull:
            raise_null(function, argument);
            break;
        case core::Problem::kNotPositive:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must be positive", function, argument),
                            errdetail("%s", words.not_positive_detail)));
            break;
        case core::Problem::kTooShort:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must be at least 1 millisecond", function, argument)));
            break;
        default:
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("%s: %s must be at most 1 day", function, argument),
                     errdetail("%s", words.too_long_detail),
                     words.too_long_hint != nullptr ? errhint("%s", words.too_long_hint) : 0));
            break;
    }
    return 0;
}

}  // namespace

int64 interval_micros(const Interval *interval) {
    const core::Interval value = to_core(interval);
    return PGSEM_NOTHROW(core::interval_micros(value));
}

void require_valid_name(const char *function, bool is_null, const text *name, const char *what) {
    const std::size_t bytes = is_null ? 0 : VARSIZE_ANY_EXHDR(name);
    switch (PGSEM_NOTHROW(core::check_name(is_null, bytes))) {
        case core::Problem::kNone:
            return;
        case core::Problem::kNull:
            raise_null(function, what);
            break;
        case core::Problem::kEmpty:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must not be empty", function, what)));
            break;
        default:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s is too long", function, what),
                            errdetail("It is %zu bytes long; the limit is %zu bytes.", bytes,
                                      core::kMaxNameBytes)));
            break;
    }
}

void require_valid_request_key(const char *function, bool is_null, const text *key) {
    const std::size_t bytes = is_null ? 0 : VARSIZE_ANY_EXHDR(key);
    switch (PGSEM_NOTHROW(core::check_request_key(is_null, bytes))) {
        case core::Problem::kNone:
            return;
        case core::Problem::kEmpty:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: the request key must not be empty", function),
                            errhint("Pass NULL (the default) for a claim without a key.")));
            break;
        default:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: the request key is too long", function),
                            errdetail("It is %zu bytes long; the limit is %zu bytes.", bytes,
                                      core::kMaxRequestKeyBytes)));
            break;
    }
}

void require_valid_n(const char *function, bool is_null, int32 n, const char *what) {
    switch (PGSEM_NOTHROW(core::check_n(is_null, n))) {
        case core::Problem::kNone:
            return;
        case core::Problem::kNull:
            raise_null(function, what);
            break;
        case core::Problem::kNotPositive:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must be at least 1, not %d", function, what, n)));
            break;
        default:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must be at most %lld, not %d", function, what,
                                   static_cast<long long>(core::kMaxN), n)));
            break;
    }
}

int32 require_valid_burst(const char *function, bool is_null, int32 burst, int32 n) {
    static_assert(core::kMaxBurst == core::kMaxN);  // checked as an n is
    if (is_null) return n;
    require_valid_n(function, false, burst, "burst");
    return burst;
}

void require_valid_bucket_refill(const char *function, int32 n, int64 per, int32 burst) {
    if (PGSEM_NOTHROW(core::bucket_refill_within_limit(per, n, burst))) return;
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: a burst of %d at %d per %s takes more than a day to refill",
                           function, burst, n, interval_text(per)),
                    errdetail("A bucket's burst times per / n may be 1 day at most: a larger one "
                              "would let one caller's rule hold the name back for longer."),
                    errhint("Lower the burst, or raise n.")));
}

void require_valid_bucket_permits(const char *function, bool is_null, int32 permits, int32 burst) {
    require_permits_within(function, is_null, permits, burst,
                           PermitBound{"the burst", burst,
                                       "The bucket never holds more than its burst: such a request "
                                       "could never be granted.",
                                       nullptr});
}

void require_valid_permits(const char *function, bool is_null, int32 permits, int32 n) {
    // n 0: left to the declaration, which checks permits against it once it is known.
    const int32 bound = n != 0 ? n : static_cast<int32>(core::kMaxN);
    require_permits_within(
        function, is_null, permits, bound,
        PermitBound{"n", n,
                    "A claim of more permits than the semaphore has could never "
                    "be granted.",
                    "Each permit is a slot, and a claim holds a lock for each of "
                    "its slots while it is made."});
}

int64 require_valid_lease(const char *function, bool is_null, const Interval *lease,
                          const char *argument) {
    return require_valid_length(
        function, is_null, lease, argument,
        LengthWords{"A lease of zero or less would end before it began.",
                    "A holder that crashes keeps its slot until its lease runs out.",
                    "Take a shorter lease and extend it with sem_renew()."});
}

int64 require_valid_window(const char *function, bool is_null, const Interval *per,
                           const char *argument, RateKind kind) {
    // A sliding window's grant is a lease of `per` (the same bounds), but not one to its caller;
    // a bucket's period has the same bounds, for its own reason.
    if (kind == RateKind::kTokenBucket)
        return require_valid_length(function, is_null, per, argument,
                                    LengthWords{"A bucket that refills in zero time or less "
                                                "would limit nothing.",
                                                "A bucket refills n permits over per: a longer "
                                                "period would hold its name back for more than "
                                                "a day.",
                                                nullptr});
    return require_valid_length(function, is_null, per, argument,
                                LengthWords{"A window of zero or less would hold no grant.",
                                            "A grant counts for its whole window, and nothing "
                                            "ends it.",
                                            nullptr});
}

int64 require_valid_wait(const char *function, bool is_null, const Interval *wait,
                         const char *argument) {
    const core::Interval value = is_null ? core::Interval{0, 0, 0} : to_core(wait);
    const core::LeaseCheck check = PGSEM_NOTHROW(core::check_wait(is_null, value));
    switch (check.problem) {
        case core::Problem::kNone:
            return check.micros;
        case core::Problem::kNull:
            raise_null(function, argument);
            break;
        case core::Problem::kNegative:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must not be negative", function, argument),
                            errhint("Pass 0 (the default) to answer at once.")));
            break;
        default:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: %s must be at most 1 day", function, argument)));
            break;
    }
    return 0;
}

void require_valid_set_shape(const char *function, int names, int ns, bool has_permits, int permits,
                             int64 permit_sum, bool has_pers, int pers) {
    const core::SetCheck check = PGSEM_NOTHROW(core::check_set_shape(
        static_cast<std::size_t>(names), static_cast<std::size_t>(ns), has_permits,
        static_cast<std::size_t>(permits), permit_sum, has_pers, static_cast<std::size_t>(pers)));
    switch (check.problem) {
        case core::SetProblem::kNone:
            return;
        case core::SetProblem::kEmpty:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: names must name at least one semaphore", function)));
            break;
        case core::SetProblem::kLengths:
            ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                            errmsg("%s: names, ns and permits must have one element per semaphore",
                                   function),
                            errdetail("names has %d, ns %d, permits %d.", names, ns, permits)));
            break;
        case core::SetProblem::kPersLength:
            ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                            errmsg("%s: pers must have one element per semaphore", function),
                            errdetail("names has %d, pers %d.", names, pers),
                            errhint("Put NULL in pers for each semaphore that is not a rate "
                                    "limit, or pass no pers at all.")));
            break;
        case core::SetProblem::kTooMany:
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: a claim may name at most %zu semaphores, not %d", function,
                                   core::kMaxSetNames, names)));
            break;
        default:
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("%s: the permits add up to %lld, more than %lld", function,
                            static_cast<long long>(permit_sum),
                            static_cast<long long>(core::kMaxPermits)),
                     errdetail("Each permit is a slot, and a claim holds a lock for each of its "
                               "slots while it is made.")));
            break;
    }
}

void require_array(const char *function, const char *argument, bool is_null, ArrayType *array) {
    if (is_null) raise_null(function, argument);
    if (ARR_NDIM(array) > 1)
        ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                        errmsg("%s: %s must be a one-dimensional array", function, argument)));
}

void require_no_null_element(const char *function, const char *argument, bool has_null) {
    if (has_null)
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: %s must not contain NULL", function, argument)));
}

void order_set_names(const char *function, text *const *names, int count, int *order) {
    auto *views = static_cast<std::string_view *>(palloc(sizeof(std::string_view) * count));
    auto *positions = static_cast<std::size_t *>(palloc(sizeof(std::size_t) * count));
    for (int i = 0; i < count; ++i)
        views[i] = std::string_view(VARDATA_ANY(names[i]), VARSIZE_ANY_EXHDR(names[i]));
    const std::size_t size = static_cast<std::size_t>(count);
    const core::SetCheck check =
        PGSEM_CPP_CALL([&] { return core::canonical_order(views, size, positions); });
    if (check.problem == core::SetProblem::kRepeated)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: semaphore \"%s\" is named twice", function,
                               text_to_cstring(names[check.first])),
                        errdetail("At positions %zu and %zu of names.", check.first + 1,
                                  check.second + 1)));
    for (int i = 0; i < count; ++i) order[i] = static_cast<int>(positions[i]);
    pfree(views);
    pfree(positions);
}

void require_valid_slot(const char *function, bool is_null, int32 slot) {
    if (is_null) raise_null(function, "the slot");
    if (slot < 0 || slot >= core::kMaxN)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: slot %d is out of range", function, slot),
                        errdetail("Slots are numbered from 0 to %lld.",
                                  static_cast<long long>(core::kMaxN - 1))));
}

}  // namespace pgsem
