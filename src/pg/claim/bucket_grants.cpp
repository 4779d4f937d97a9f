#include "core/arguments.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"
#include "pg/claim/bucket_grants.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/waiting_line.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/pauses.hpp"
#include "pg/store/registry.hpp"
#include "pg/xact/commit_durability.hpp"

namespace pgsem {

namespace {

// One look: a pause holds everything back until it ends; otherwise the bucket decides, under its
// mutex, which a grant keeps until it commits (the next look must read the TAT it wrote) and a
// refusal gives back at once (nothing was written, and a first waiter sleeps next).
BucketLook look_in_bucket(const text *name, const BucketRule &rule, int32 permits) {
    const TimestampTz paused_until = pause_until(name);
    if (paused_until != 0) return BucketLook{false, paused_until};
    lock_bucket_mutex(name);
    // The clock is read under the mutex, so grants' times follow the order they were made in.
    const BucketLook look = buckets_try_grant(name, rule, permits, GetCurrentTimestamp());
    if (!look.granted) unlock_bucket_mutex(name);
    return look;
}

// First in line, the waiter looks, and sleeps until its request fits (or a pause ends); a pause
// set or lifted meanwhile wakes it (declarations_changed), and it looks again.
bool wait_in_line(const text *name, const BucketRule &rule, int32 permits, TimestampTz start,
                  TimestampTz deadline) {
    const SlotRequest request{name, rule.n, rule.n, ClaimKind::kLease, rule.per, permits, nullptr,
                              0,    0,      true};
    LineWait line;
    if (!line_join(&line, request, start, deadline, true)) return false;
    bool granted = false;
    for (;;) {
        line_begin_look(&line);
        const BucketLook look = look_in_bucket(name, rule, permits);
        line_end_look(&line);
        granted = look.granted;
        if (granted || !line_sleep(&line, look.fits_at, permits)) break;
    }
    line_leave(&line);
    return granted;
}

}  // namespace

bool bucket_grant(const char *function, const text *name, const BucketRule &rule, int32 permits,
                  int64 wait) {
    const TimestampTz start = GetCurrentTimestamp();
    require_primary(function, true);
    require_right_to_claim(function, name);
    require_outside_transaction_block(function);
    if (wait > 0) (void)registry_attach();
    bool granted = false;
    if (hold_line_if_empty(name)) {
        granted = look_in_bucket(name, rule, permits).granted;
        let_go_of_line(name);
    } else if (wait == 0) {
        return false;  // others wait: no passing them
    }
    if (!granted && wait > 0) granted = wait_in_line(name, rule, permits, start, start + wait);
    if (granted) require_durable_commit();
    return granted;
}

}  // namespace pgsem
