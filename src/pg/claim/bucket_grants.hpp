// Token buckets (sem_bucket): the grant protocol, the claim sequence's steps for a bucket.
//   1. admit: primary, writable, outside a transaction block (admission.hpp), and the right to
//      claim the name (a declaration may restrict it);
//   2. look: unless somebody waits in the name's line, under the name's bucket mutex, grant if
//      the bucket has room now (store/buckets.hpp; core/token_bucket.hpp decides);
//   3. wait in the name's line (waiting_line.hpp: FIFO, cancels, timeouts, sem_waiters), the
//      first waiter sleeping until the moment its request fits -- nobody's release frees a
//      bucket's room, time does -- or a pause ends;
//   4. after the grant: the commit is durable (a grant lost in a crash would be granted again).
// A bucket shares its name's line and pause with the name's other uses: one name is one limit.
#pragma once

#include "pg/store/buckets.hpp"

namespace pgsem {

// Grants `permits` of `name`'s bucket under `rule`, waiting up to `wait` microseconds; whether
// it did. `function` names the SQL function in messages.
bool bucket_grant(const char *function, const text *name, const BucketRule &rule, int32 permits,
                  int64 wait);

}  // namespace pgsem
