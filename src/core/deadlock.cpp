#include "core/deadlock.hpp"

#include <vector>

namespace pgsem::core {

bool deadlocked(const WaitKind *kinds, const std::int32_t *lacks, std::size_t node_count,
                const WaitEdge *edges, std::size_t edge_count, std::size_t me) {
    if (me >= node_count) return false;
    std::vector<std::vector<std::size_t>> blockers(node_count);
    for (std::size_t i = 0; i < edge_count; ++i) {
        const auto waiter = static_cast<std::size_t>(edges[i].waiter);
        const auto blocker = static_cast<std::size_t>(edges[i].blocker);
        if (edges[i].waiter < 0 || edges[i].blocker < 0 || waiter >= node_count ||
            blocker >= node_count)
            continue;
        blockers[waiter].push_back(blocker);
    }
    std::vector<bool> stuck(node_count);
    for (std::size_t i = 0; i < node_count; ++i) stuck[i] = kinds[i] != WaitKind::kRunning;
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t i = 0; i < node_count; ++i) {
            if (!stuck[i]) continue;
            bool progress = false;
            if (kinds[i] == WaitKind::kAll) {
                progress = true;
                for (const std::size_t b : blockers[i]) progress = progress && !stuck[b];
            } else {  // kAny: free when nothing holds it, or when m of its slots can free
                const std::size_t m =
                    lacks == nullptr || lacks[i] < 1 ? 1 : static_cast<std::size_t>(lacks[i]);
                std::size_t can_free = 0;
                for (const std::size_t b : blockers[i]) can_free += stuck[b] ? 0 : 1;
                progress = blockers[i].empty() || can_free >= m;
            }
            if (progress) {
                stuck[i] = false;
                changed = true;
            }
        }
    }
    return stuck[me];
}

}  // namespace pgsem::core
