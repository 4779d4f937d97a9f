// pgsem.buckets: the rows of the token buckets (sem_bucket), each holding a theoretical arrival
// time (core/token_bucket.hpp) and the rule of the grant that wrote it, for the view; a bucket's
// TAT is the latest of its name's rows. Read and written directly, as pgsem.claims is (the
// callers hold no privilege on the table, and no trigger or rule of it is pgsem's business),
// under the name's bucket mutex (locks.hpp), held for a look's read and write alone:
//   - the read is dirty: it finds the rows of grants in flight (inserted, not yet committed) as
//     well as committed ones, so a grant counts every grant made before it, committed or not;
//   - a grant inserts a new row, never updates one (an update of a row another transaction
//     updated would wait for that transaction's commit), with a TAT later than every row read,
//     and deletes the rows that are settled (committed, and not being deleted): if it rolls back
//     they are back, and if it commits the latest TAT stays;
//   - so grants commit side by side, and a grant in flight that rolls back leaves a later TAT
//     behind it: fewer grants than the rule allows for a while, never more.
// No MVCC snapshot is involved: neither the caller's, which may be older than the last grant,
// nor a serializable transaction's predicate locks, which on a hot name would make nearly every
// grant a serialization failure.
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
// (taken only if free, let go at once), as its transaction commits
// (buckets_prune_before_commit).
BucketLook buckets_try_grant(const text *name, const BucketRule &rule, int32 permits,
                             TimestampTz now);

// At PRE_COMMIT of a transaction that made a new name's row: removes the idle rows near it,
// each name's under its mutex. And at the transaction's end, commit or abort: forgets it.
void buckets_prune_before_commit();
void buckets_prune_forget();

}  // namespace pgsem
