// pgsem.buckets: one row per token bucket (sem_bucket), holding its theoretical arrival time
// (core/token_bucket.hpp) and the rule its last grant was made under, for the view. Read and
// written through SPI as the table's owner (config_tables.hpp: the callers hold no privilege on
// it), with the latest snapshot: under the name's bucket mutex (locks.hpp), which the last grant
// kept until it committed, that snapshot holds every grant made so far -- the caller's own
// snapshot, taken when its statement began, may not.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

struct BucketRule {
    int32 n;
    int64 per;  // microseconds
    int32 burst;
};

struct BucketLook {
    bool granted;
    TimestampTz fits_at;  // not granted: when the same request would fit
};

// Under the name's bucket mutex: grants `permits` at `now` if they fit, storing the bucket's new
// TAT. A row older than an hour and full is the same as no row: a grant that makes a new row
// removes a few of those, each under its own mutex (taken only if free).
BucketLook buckets_try_grant(const text *name, const BucketRule &rule, int32 permits,
                             TimestampTz now);

}  // namespace pgsem
