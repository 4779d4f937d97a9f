// The clients that wait in line: leases, transaction claims and session claims of the line's two
// semaphores, with waits, wait-0 calls that try to pass the waiters, and timeouts of their own.
// See main.cpp for what the run proves.
#pragma once

#include <cstdint>

#include "workload.hpp"

namespace stress {

// What may go wrong only for the waiting clients; each becomes one check at the end.
inline constexpr const char *kSessionReleaseFalse =
    "every release of a held session claim returned true";
inline constexpr const char *kFailedClaimKept =
    "a claim call that failed, or whose transaction rolled back, left no claim of any kind behind";

// One waiting client (its Target is shared->targets[index]): options.wait_cycles claims, one at a
// time, each held a moment and given back.
void run_waiting_client(Shared *shared, int index, std::uint64_t seed);

}  // namespace stress
