// Token buckets (sem_bucket): the grant protocol, the claim sequence's steps for a bucket.
//   1. admit: primary and writable; what the name's declaration says (declared_limits.hpp: the
//      right to claim; a declared bucket's rule, or the caller's within a declared semaphore's
//      n and maximum lease; the wait capped); outside a transaction block and a pipeline
//      (admission.hpp);
//   2. look: unless somebody waits in the name's line, under the name's bucket mutex, grant if
//      the bucket has room now (store/buckets.hpp; core/token_bucket.hpp decides);
//   3. wait in the name's line (waiting_line.hpp: FIFO, cancels, timeouts, sem_waiters), the
//      first waiter sleeping until the moment its request fits -- nobody's release frees a
//      bucket's room, time does -- or a pause ends; the declaration is applied again at every
//      look (a revoke refuses the waiter);
//   4. after the grant: the commit is durable (a grant lost in a crash would be granted again).
// A bucket shares its name's line and pause with the name's other uses: one name is one limit.
//
// The name's mutex is held for a look's read and write alone, microseconds: grants on one name
// commit side by side (store/buckets.hpp says why that is exact). A look waits for it up to its
// deadline and kMutexPatience at least, then answers false; the patience matters only for a
// mutex held by a prune or by a backend stalled mid-look.
#pragma once

#include "pg/store/buckets.hpp"

namespace pgsem {

// Grants `permits` of `name`'s bucket under the rule `asked` (0 for what the caller left to the
// name's declaration), waiting up to `wait` microseconds; whether it did. `function` names the
// SQL function in messages.
bool bucket_grant(const char *function, const text *name, const BucketRule &asked, int32 permits,
                  int64 wait);

}  // namespace pgsem
