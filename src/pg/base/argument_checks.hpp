// Turns the core's argument verdicts (src/core/arguments.hpp) into errors with SQLSTATEs, and
// SQL intervals into the core's. Each require_* function returns only when the argument is
// acceptable.
#pragma once

#include "core/arguments.hpp"
#include "core/claim_sets.hpp"
#include "pg/base/postgres_api.hpp"

namespace pgsem {

// An interval of `micros` microseconds as Postgres prints it, for messages.
char *interval_text(int64 micros);

// `function` names the SQL function in messages, e.g. "sem_claim()".
// `what` names it in messages.
void require_valid_name(const char *function, bool is_null, const text *name,
                        const char *what = "the semaphore name");
// A request key: NULL (no key) or 1 to core::kMaxRequestKeyBytes bytes.
void require_valid_request_key(const char *function, bool is_null, const text *key);
void require_valid_n(const char *function, bool is_null, int32 n, const char *what = "n");
// A token bucket's burst (NULL: n): 1 up to core::kMaxBurst. Returns it.
int32 require_valid_burst(const char *function, bool is_null, int32 burst, int32 n);
// A token bucket's rule as a whole: it refills from empty (burst at n per `per`) within
// core::kMaxBucketRefillMicros, a day (22023).
void require_valid_bucket_refill(const char *function, int32 n, int64 per, int32 burst);
// A token bucket grant's permits: 1 up to the burst (and core::kMaxPermits).
void require_valid_bucket_permits(const char *function, bool is_null, int32 permits, int32 burst);
// For a valid n, or 0 when the caller left n to the declaration (claim/declared_limits.hpp checks
// permits against the declared n then).
void require_valid_permits(const char *function, bool is_null, int32 permits, int32 n);
// Returns the lease in microseconds; `argument` names it in messages.
int64 require_valid_lease(const char *function, bool is_null, const Interval *lease,
                          const char *argument = "the timeout");
// A rate limit's period `per` (sem_rate's window, an element of sem_claim_all's pers, a token
// bucket's refill period): a lease's bounds, in the words of the kind of limit; `argument` names
// it in messages.
enum class RateKind : unsigned char { kSlidingWindow, kTokenBucket };
int64 require_valid_window(const char *function, bool is_null, const Interval *per,
                           const char *argument = "per", RateKind kind = RateKind::kSlidingWindow);
// Returns how long a claim may wait, in microseconds.
int64 require_valid_wait(const char *function, bool is_null, const Interval *wait,
                         const char *argument = "wait");
// A slot number as sem_release_session takes it: in [0, kMaxN).
void require_valid_slot(const char *function, bool is_null, int32 slot);

// The arrays of a claim on several semaphores (core/claim_sets.hpp): `names` names, `ns` and
// `permits` array lengths (`has_permits` false: no permits array), the permits' sum, and the
// length of sem_claim_all's pers (`has_pers` false: none given).
void require_valid_set_shape(const char *function, int names, int ns, bool has_permits, int permits,
                             int64 permit_sum, bool has_pers = false, int pers = 0);
// An array argument that must not be NULL, nor contain a NULL, and be one-dimensional.
void require_array(const char *function, const char *argument, bool is_null, ArrayType *array);
void require_no_null_element(const char *function, const char *argument, bool has_null);
// Orders the set's names canonically into `order` (room for `count`), refusing a repeated name.
void order_set_names(const char *function, text *const *names, int count, int *order);

// An interval's length in microseconds, months counting 30 days (as interval comparison does);
// saturates instead of overflowing.
int64 interval_micros(const Interval *interval);

}  // namespace pgsem
