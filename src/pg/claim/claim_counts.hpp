// What the claim sequence and the bucket tell sem_stats' counters of each answer
// (xact/pending_stats.hpp says when each counts, and counts a claim an error ends between its
// count_wait_begins and count_wait_ends).
#pragma once

#include "pg/base/postgres_api.hpp"
#include "pg/xact/pending_stats.hpp"

namespace pgsem {

// A claim on `name` of `permits` asked at `start` was answered: granted or not, after a wait in
// line or not. `writes_row`: the grant is a row of this transaction's (a lease, a rate or bucket
// grant), counted when it commits.
void count_answer(const text *name, int32 permits, bool writes_row, bool granted, bool waited,
                  TimestampTz start);

}  // namespace pgsem
