// Throughput of claim+release pairs with one connection per client thread, for approaches that
// pgbench cannot count: pgsem's transaction claims (no row to count afterwards) and the Redis fair
// semaphore. Every approach pays one round trip per acquire attempt and one per release, and a
// refused client tries again at once, as in bench/run.sh's pgbench cells.
#pragma once

#include <string>

namespace bench {

enum class PairTarget {
    kPgsemXact,       // BEGIN; SELECT sem_claim_xact(name, n) ... COMMIT
    kPgsemXactWait,   // the same with wait => 10 s: refused callers queue instead of retrying
    kRedisFair,       // EVALSHA acquire_fair.lua ... EVALSHA release_fair.lua
    kPgsemLeaseWait,  // SELECT sem_claim(name, n, '90 s', '10 s') ... SELECT sem_release(id)
    kPgFloor,         // BEGIN; SELECT 1 ... COMMIT: two round trips that do nothing
    // The limit of a semaphore made of bare Postgres parts: BEGIN; the first of n transaction-
    // level advisory locks that is free ... COMMIT. No FIFO, no waits, no view of the holders.
    kPgXactLimit,
    kRedisFloor,  // PING ... PING
    // A sliding-window rate limit (1.2's sem_rate peer): EVALSHA rate_window.lua, one call per
    // attempt, a grant counted as a pair.
    kRedisRate,
    kRedisBucket,
};

struct PairOptions {
    PairTarget target = PairTarget::kPgsemXact;
    int clients = 8;
    int seconds = 10;
    int n = 4;
    int redis_port = 0;
    int window_ms = 1000;     // kRedisRate: the window
    std::string scripts_dir;  // where acquire_fair.lua, release_fair.lua, rate_window.lua are
};

struct PairResult {
    long attempts = 0;
    long pairs = 0;
    double seconds = 0;
};

PairResult run_pairs(const PairOptions &options);

}  // namespace bench
