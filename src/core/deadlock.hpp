// Whether a waiting backend is deadlocked, in a wait-for graph that mixes the two kinds of wait
// a semaphore brings:
//  - kAll: a lock-manager wait (Postgres' own locks, and pgsem's line of waiters behind the first
//    one). The waiter gets its lock once every holder in its way has let go.
//  - kAny: the first waiter of a semaphore, which lacks m slots (m = 1 for a claim of one permit;
//    a claim of k permits with f slots free lacks k - f). Its blockers are the holders of the held
//    slots, one edge per slot (a holder of two slots has two edges), and it gets its slots as
//    soon as m of those edges lead to holders that can let go.
// Postgres' deadlock detector knows only the first kind (and never sees the second, which waits on
// a latch), so pgsem decides cycles through semaphores itself.
//
// The answer is the greatest fixpoint: every waiter starts out stuck; a waiter that does not wait,
// a kAll waiter none of whose blockers is stuck, and a kAny waiter with m edges to blockers that
// are not stuck (or with no blocker at all) can make progress; repeat until nothing changes. A
// waiter still stuck then can never make progress: it is deadlocked.
//
// Pure C++ (no Postgres header); may throw std::bad_alloc, so the glue calls it through cpp_call.
#pragma once

#include "core/cpp_only.hpp"

#include <cstddef>
#include <cstdint>

namespace pgsem::core {

enum class WaitKind : std::uint8_t { kRunning, kAll, kAny };

// `waiter` waits for `blocker` (indices into the node array).
struct WaitEdge {
    std::int32_t waiter;
    std::int32_t blocker;
};

// True when node `me` is deadlocked. Edges naming nodes out of range are ignored. `lacks`, when
// given, is each kAny node's m (values below 1 count as 1); without it every m is 1.
bool deadlocked(const WaitKind *kinds, const std::int32_t *lacks, std::size_t node_count,
                const WaitEdge *edges, std::size_t edge_count, std::size_t me);
inline bool deadlocked(const WaitKind *kinds, std::size_t node_count, const WaitEdge *edges,
                       std::size_t edge_count, std::size_t me) {
    return deadlocked(kinds, nullptr, node_count, edges, edge_count, me);
}

}  // namespace pgsem::core
