// pgsem.buckets: one row per token bucket (sem_bucket), holding its theoretical arrival time
// (core/token_bucket.hpp) and the rule its last grant was made under, for the view. Read and
// written directly, as pgsem.claims is (the callers hold no privilege on the table, and no
// trigger or rule of it is pgsem's business): the row is found with a dirty snapshot, under the
// name's bucket mutex (locks.hpp), which the last grant kept until it committed -- so the row
// read is the latest committed one, never one in flight. No MVCC snapshot is involved: neither
// the caller's, which may be older than the last grant, nor a serializable transaction's
// predicate locks, which on a hot name would make nearly every grant a serialization failure.
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
// TAT. A row whose TAT passed an hour ago is a full bucket, the same as no row: a grant that
// makes a new row removes such rows among the next few in name order, each under its own mutex
// (taken only if free), as its transaction commits (buckets_prune_before_commit).
BucketLook buckets_try_grant(const text *name, const BucketRule &rule, int32 permits,
                             TimestampTz now);

// At PRE_COMMIT of a transaction that made a new row: removes the idle rows near it, each under
// its mutex, which the commit then lets go of at once. And at the transaction's end, commit or
// abort: forgets it.
void buckets_prune_before_commit();
void buckets_prune_forget();

}  // namespace pgsem
