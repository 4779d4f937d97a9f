#include "core/arguments.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"
#include "pg/claim/bucket_grants.hpp"
#include "pg/claim/claim_counts.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/waiting_line.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/pauses.hpp"
#include "pg/store/registry.hpp"
#include "pg/store/timed_locks.hpp"
#include "pg/xact/commit_durability.hpp"

namespace pgsem {

namespace {

// How long any look waits for the grant in flight on its name to commit (bucket_grants.hpp).
constexpr int64 kMutexPatience = 100 * core::kMicrosPerMilli;

struct BucketCall {
    const char *function;
    const text *name;
    BucketRule asked;  // the caller's rule, 0 for what it left to the declaration
    BucketRule rule;   // what the declaration makes of it, at the last look
    int32 permits;
    TimestampTz lock_deadline;  // the caller's lock_timeout (0: none)
};

// Takes the name's mutex, waiting until `deadline` (and kMutexPatience at least) for a grant in
// flight; false when it did not get it by then.
bool take_bucket_mutex(const BucketCall &call, TimestampTz deadline) {
    if (try_lock_bucket_mutex(call.name)) return true;
    const TimestampTz until = Max(deadline, wait_clock_now() + kMutexPatience);
    return wait_for_lock_until(lock_bucket_mutex, call.name, until, call.lock_deadline);
}

// One look: a pause holds everything back until it ends; otherwise the bucket decides, under its
// mutex, held for the read and the write alone (the next look reads this grant's row even before
// it commits: store/buckets.hpp). Not granted with fits_at 0: the mutex stayed busy past the
// deadline.
BucketLook look_in_bucket(const BucketCall &call, TimestampTz deadline) {
    const TimestampTz paused_until = pause_until(call.name);
    if (paused_until != 0) return BucketLook{false, paused_until};
    if (!take_bucket_mutex(call, deadline)) return BucketLook{false, 0};
    // The clock is read under the mutex, so grants' times follow the order they were made in.
    const BucketLook look =
        buckets_try_grant(call.name, call.rule, call.permits, GetCurrentTimestamp());
    unlock_bucket_mutex(call.name);
    return look;
}

// First in line, the waiter looks, and sleeps until its request fits (or a pause ends); a pause
// set or lifted, or a declaration changed, meanwhile wakes it (declarations_changed), and it
// looks again under what the declaration says then.
bool wait_in_line(BucketCall &call, TimestampTz start, TimestampTz deadline) {
    const SlotRequest request{call.name,
                              call.rule.n,
                              call.rule.n,
                              ClaimKind::kLease,
                              call.rule.per,
                              call.permits,
                              nullptr,
                              0,
                              0,
                              true};
    LineWait line;
    if (!line_join(&line, request, start, deadline, true)) return false;
    bool granted = false;
    for (;;) {
        line_begin_look(&line);
        lock_rate_grants();  // let go of below when the look grants nothing
        call.rule = reapply_bucket_declaration(call.function, call.name, call.asked, call.permits,
                                               start, &line.deadline);
        const BucketLook look = look_in_bucket(call, line.deadline);
        line_end_look(&line);
        granted = look.granted;
        if (!granted) unlock_rate_grants();
        if (granted || look.fits_at == 0 || !line_sleep(&line, look.fits_at, call.permits)) break;
    }
    line_leave(&line);
    return granted;
}

}  // namespace

bool bucket_grant(const char *function, const text *name, const BucketRule &asked, int32 permits,
                  int64 wait) {
    const TimestampTz start = wait_clock_start();
    require_primary(function, true);
    lock_rate_grants();  // before the declaration is read (store/locks.hpp says why)
    // Before the transaction-block check, as the arguments' own checks are: what the caller asked
    // for is refused first.
    const BucketRule rule = apply_bucket_declaration(function, name, asked, permits, &wait);
    BucketCall call{function, name, asked, rule, permits, lock_timeout_deadline(start)};
    require_outside_transaction_block(function);
    if (wait > 0) (void)registry_attach();
    count_wait_begins(&name, 1, start);  // from here an error ends the call: the abort counts it
    bool granted = false;
    if (hold_line_if_empty(name)) {
        granted = look_in_bucket(call, start + wait).granted;
        let_go_of_line(name);
    } else if (wait == 0) {
        count_wait_ends();
        count_answer(name, permits, true, false, false, start);
        return false;  // others wait: no passing them
    }
    const bool waited = !granted && wait > 0 && wait_clock_now() < start + wait;
    if (waited) {
        unlock_rate_grants();  // taken above; a waiter holds it per look
        granted = wait_in_line(call, start, start + wait);
    }
    count_wait_ends();
    count_answer(name, permits, true, granted, waited, start);
    if (granted) require_durable_commit();
    return granted;
}

}  // namespace pgsem
