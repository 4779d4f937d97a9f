#include "core/deadlock.hpp"
#include "pg/boundary.hpp"
#include "pg/claims_table.hpp"
#include "pg/deadlock_check.hpp"
#include "pg/lock_tags.hpp"

namespace pgsem {

namespace {

// The wait-for graph, in palloc'd arrays (boundary rule 1: no containers in frames that call
// Postgres).
struct Graph {
    int *pids;
    core::WaitKind *kinds;
    int node_count;
    int node_capacity;
    core::WaitEdge *edges;
    int edge_count;
    int edge_capacity;
};

int node_of(Graph *graph, int pid) {
    for (int i = 0; i < graph->node_count; ++i)
        if (graph->pids[i] == pid) return i;
    if (graph->node_count == graph->node_capacity) {
        graph->node_capacity *= 2;
        graph->pids = static_cast<int *>(repalloc(graph->pids, graph->node_capacity * sizeof(int)));
        graph->kinds = static_cast<core::WaitKind *>(
            repalloc(graph->kinds, graph->node_capacity * sizeof(core::WaitKind)));
    }
    graph->pids[graph->node_count] = pid;
    graph->kinds[graph->node_count] = core::WaitKind::kRunning;
    return graph->node_count++;
}

void add_edge(Graph *graph, int waiter_pid, int blocker_pid) {
    if (graph->edge_count == graph->edge_capacity) {
        graph->edge_capacity *= 2;
        graph->edges = static_cast<core::WaitEdge *>(
            repalloc(graph->edges, graph->edge_capacity * sizeof(core::WaitEdge)));
    }
    graph->edges[graph->edge_count++] =
        core::WaitEdge{node_of(graph, waiter_pid), node_of(graph, blocker_pid)};
}

// Uncommitted lease claims by semaphore key, and the keys that have a committed lease.
struct Leases {
    uint64 *open_keys;  // key of each uncommitted lease...
    int *open_pids;     // ...and the backend whose transaction made it (0: prepared)
    int open_count;
    uint64 *committed_keys;
    int committed_count;
};

uint64 key_of_name(const text *name) {
    LOCKTAG tag;
    name_locktag(&tag, LockClass::kQueue, name);
    return locktag_key(tag);
}

void read_leases(Leases *leases) {
    ClaimsTable table;
    claims_open(&table, AccessShareLock);
    int capacity = 64;
    leases->open_keys = static_cast<uint64 *>(palloc(capacity * sizeof(uint64)));
    leases->open_pids = static_cast<int *>(palloc(capacity * sizeof(int)));
    leases->committed_keys = static_cast<uint64 *>(palloc(capacity * sizeof(uint64)));
    leases->open_count = leases->committed_count = 0;
    int committed_capacity = capacity;
    ClaimScan scan;
    ClaimRow row;
    live_scan_begin(&table, &scan);
    while (claim_scan_next(&scan, &row)) {
        if (row.ended) continue;
        const uint64 key = key_of_name(claim_scan_name(&scan));
        if (row.insert_in_progress || row.inserted_by_me) {
            if (leases->open_count == capacity) {
                capacity *= 2;
                leases->open_keys =
                    static_cast<uint64 *>(repalloc(leases->open_keys, capacity * sizeof(uint64)));
                leases->open_pids =
                    static_cast<int *>(repalloc(leases->open_pids, capacity * sizeof(int)));
            }
            leases->open_keys[leases->open_count] = key;
            leases->open_pids[leases->open_count++] =
                row.inserted_by_me ? MyProcPid
                                   : BackendXidGetPid(SubTransGetTopmostTransaction(row.inserter));
        } else {
            if (leases->committed_count == committed_capacity) {
                committed_capacity *= 2;
                leases->committed_keys = static_cast<uint64 *>(
                    repalloc(leases->committed_keys, committed_capacity * sizeof(uint64)));
            }
            leases->committed_keys[leases->committed_count++] = key;
        }
        CHECK_FOR_INTERRUPTS();
    }
    claim_scan_end(&scan);
    claims_close(&table);
}

bool has_committed_lease(const Leases &leases, uint64 key) {
    for (int i = 0; i < leases.committed_count; ++i)
        if (leases.committed_keys[i] == key) return true;
    return false;
}

bool same_tag(const LOCKTAG &a, const LOCKTAG &b) {
    return memcmp(&a, &b, sizeof(LOCKTAG)) == 0;
}

// Lock waits: a waiter needs every holder whose mode conflicts with the one it asked for.
void add_lock_waits(Graph *graph, const LockData *locks) {
    for (int w = 0; w < locks->nelements; ++w) {
        const LockInstanceData &waiter = locks->locks[w];
        if (waiter.waitLockMode == NoLock) continue;
        graph->kinds[node_of(graph, waiter.pid)] = core::WaitKind::kAll;
        const LockMethod method = GetLockTagsMethodTable(&waiter.locktag);
        const LOCKMASK conflicts = method->conflictTab[waiter.waitLockMode];
        for (int h = 0; h < locks->nelements; ++h) {
            const LockInstanceData &holder = locks->locks[h];
            if (h == w || holder.pid == waiter.pid || (holder.holdMask & conflicts) == 0) continue;
            if (same_tag(holder.locktag, waiter.locktag)) add_edge(graph, waiter.pid, holder.pid);
        }
    }
}

// First waiters of semaphores: any holder of a slot will do.
void add_first_waiters(Graph *graph, const LockData *locks, const Leases &leases) {
    for (int f = 0; f < locks->nelements; ++f) {
        const LockInstanceData &first = locks->locks[f];
        if (pgsem_lock_class(first.locktag) != LockClass::kQueue ||
            (first.holdMask & LOCKBIT_ON(ExclusiveLock)) == 0)
            continue;
        const int node = node_of(graph, first.pid);
        const uint64 key = locktag_key(first.locktag);
        if (has_committed_lease(leases, key)) continue;  // a lease always ends: not stuck
        graph->kinds[node] = core::WaitKind::kAny;
        for (int h = 0; h < locks->nelements; ++h) {
            const LockInstanceData &holder = locks->locks[h];
            if (pgsem_lock_class(holder.locktag) == LockClass::kNameHolders &&
                locktag_key(holder.locktag) == key && holder.holdMask != 0)
                add_edge(graph, first.pid, holder.pid);
        }
        for (int i = 0; i < leases.open_count; ++i)
            if (leases.open_keys[i] == key) add_edge(graph, first.pid, leases.open_pids[i]);
    }
}

}  // namespace

bool first_waiter_deadlocked(const text *name) {
    Leases leases;
    read_leases(&leases);
    if (has_committed_lease(leases, key_of_name(name))) return false;
    Graph graph{};
    graph.node_capacity = 64;
    graph.pids = static_cast<int *>(palloc(graph.node_capacity * sizeof(int)));
    graph.kinds =
        static_cast<core::WaitKind *>(palloc(graph.node_capacity * sizeof(core::WaitKind)));
    graph.edge_capacity = 64;
    graph.edges =
        static_cast<core::WaitEdge *>(palloc(graph.edge_capacity * sizeof(core::WaitEdge)));
    const int me = node_of(&graph, MyProcPid);
    const LockData *locks = GetLockStatusData();
    add_lock_waits(&graph, locks);
    add_first_waiters(&graph, locks, leases);
    // Prepared transactions (pid 0) hold, and never wait: they stay kRunning.
    const core::WaitKind *kinds = graph.kinds;
    const core::WaitEdge *edges = graph.edges;
    const std::size_t nodes = graph.node_count;
    const std::size_t edge_count = graph.edge_count;
    return cpp_call([&] {
        return core::deadlocked(kinds, nodes, edges, edge_count, static_cast<std::size_t>(me));
    });
}

void raise_semaphore_deadlock(const text *name) {
    ereport(ERROR, (errcode(ERRCODE_T_R_DEADLOCK_DETECTED), errmsg("deadlock detected"),
                    errdetail("Process %d waits for a slot of semaphore \"%s\", and every holder "
                              "of its slots waits, directly or through others, for process %d.",
                              MyProcPid, text_to_cstring(name), MyProcPid),
                    errhint("Take semaphores and locks in the same order everywhere.")));
    pg_unreachable();
}

}  // namespace pgsem
