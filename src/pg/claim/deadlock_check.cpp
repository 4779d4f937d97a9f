#include "core/deadlock.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/claim/deadlock_check.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/pauses.hpp"
#include "pg/store/registry.hpp"

namespace pgsem {

namespace {

// The wait-for graph, in palloc'd arrays (boundary rule 1: no containers in frames that call
// Postgres). Nodes are backends by pid, and "slots" (negative ids): a lease row that frees its
// slot only once every transaction locking it has ended (kAll over those transactions).
struct Graph {
    int *ids;
    core::WaitKind *kinds;
    int32 *lacks;  // of kAny nodes
    int node_count;
    int node_capacity;
    core::WaitEdge *edges;
    int edge_count;
    int edge_capacity;
    int next_slot_id;  // -1, -2, ...
};

int node_of(Graph *graph, int id) {
    for (int i = 0; i < graph->node_count; ++i)
        if (graph->ids[i] == id) return i;
    if (graph->node_count == graph->node_capacity) {
        graph->node_capacity *= 2;
        graph->ids = static_cast<int *>(repalloc(graph->ids, graph->node_capacity * sizeof(int)));
        graph->kinds = static_cast<core::WaitKind *>(
            repalloc(graph->kinds, graph->node_capacity * sizeof(core::WaitKind)));
        graph->lacks =
            static_cast<int32 *>(repalloc(graph->lacks, graph->node_capacity * sizeof(int32)));
    }
    graph->ids[graph->node_count] = id;
    graph->kinds[graph->node_count] = core::WaitKind::kRunning;
    graph->lacks[graph->node_count] = 1;
    return graph->node_count++;
}

// node_of may move the node arrays (repalloc): a node's index is taken before any of them is
// indexed. `graph->kinds[node_of(graph, id)] = ...` read graph->kinds first (C++17 sequences E1
// before E2 in E1[E2]) and wrote through the array node_of had just freed: one byte past its end,
// into the next chunk's header (its size), which later let an array overrun its chunk.
void add_edge(Graph *graph, int waiter_id, int blocker_id) {
    const int waiter = node_of(graph, waiter_id);
    const int blocker = node_of(graph, blocker_id);
    if (graph->edge_count == graph->edge_capacity) {
        graph->edge_capacity *= 2;
        graph->edges = static_cast<core::WaitEdge *>(
            repalloc(graph->edges, graph->edge_capacity * sizeof(core::WaitEdge)));
    }
    graph->edges[graph->edge_count++] = core::WaitEdge{waiter, blocker};
}

// ---- leases ----------------------------------------------------------------------------------

// What a lease row that holds its slot needs in order to let go of it.
enum class LeaseEnd : unsigned char {
    kByItself,       // committed, nobody at work on it: it ends at its expiry, or is free now
    kInserter,       // inserted by an open transaction: ends (or turns into kByItself) with it
    kLockersFinish,  // committed and locked or being changed (a fence, a release, a renewal, a
                     // reap in flight): its slot frees only once every such transaction ends
};

constexpr int kMaxLockers = 8;  // per row; more only add edges to the same kind of node

struct Lease {
    uint64 key;  // of its semaphore (name_key)
    int32 slot;
    LeaseEnd end;
    int inserter_pid;  // kInserter: 0 for a prepared transaction
    int locker_count;  // kLockersFinish
    int locker_pids[kMaxLockers];
};

struct Leases {
    Lease *rows;
    int count;
    int capacity;
};

// The pid of the backend running top-level transaction `xid`; 0 for a prepared transaction.
int pid_of(TransactionId xid, bool mine) {
    return mine ? MyProcPid : BackendXidGetPid(xid);
}

void read_lease(const ClaimScan &scan, const ClaimRow &row, Lease *lease) {
    lease->key = name_key(claim_scan_name(&scan));
    lease->slot = row.slot;
    lease->locker_count = 0;
    if (row.insert_in_progress || row.inserted_by_me) {
        lease->end = LeaseEnd::kInserter;
        lease->inserter_pid = row.inserted_by_me
                                  ? MyProcPid
                                  : pid_of(SubTransGetTopmostTransaction(row.inserter), false);
        return;
    }
    TransactionId lockers[kMaxLockers];
    const int count = Min(claim_scan_row_lockers(&scan, lockers, kMaxLockers), kMaxLockers);
    lease->end = count > 0 ? LeaseEnd::kLockersFinish : LeaseEnd::kByItself;
    for (int i = 0; i < count; ++i)
        lease->locker_pids[lease->locker_count++] =
            pid_of(lockers[i], TransactionIdIsCurrentTransactionId(lockers[i]));
}

// Every unended lease of the database: what each needs to end. Reads and gives back the table
// lock at once: a first waiter sleeps after this (claims_close_unlocking says why).
void read_leases(Leases *leases) {
    ClaimsTable table;
    claims_open(&table, AccessShareLock);
    leases->capacity = 64;
    leases->count = 0;
    leases->rows = static_cast<Lease *>(palloc(leases->capacity * sizeof(Lease)));
    ClaimScan scan;
    ClaimRow row;
    live_scan_begin(&table, &scan);
    while (claim_scan_next(&scan, &row)) {
        if (row.ended) continue;
        if (leases->count == leases->capacity) {
            leases->capacity *= 2;
            leases->rows =
                static_cast<Lease *>(repalloc(leases->rows, leases->capacity * sizeof(Lease)));
        }
        read_lease(scan, row, &leases->rows[leases->count++]);
        CHECK_FOR_INTERRUPTS();
    }
    claim_scan_end(&scan);
    claims_close_unlocking(&table);
}

// ---- the lock manager --------------------------------------------------------------------------

bool same_tag(const LOCKTAG &a, const LOCKTAG &b) {
    return memcmp(&a, &b, sizeof(LOCKTAG)) == 0;
}

// Lock waits: a waiter needs every holder whose mode conflicts with the one it asked for, and
// every waiter queued ahead of it that asked for a conflicting mode (the lock manager grants in
// queue order: a RowExclusiveLock request waits behind a queued VACUUM FULL's AccessExclusiveLock
// even though no holder is in its way). Queue order is taken from when each started waiting;
// a waiter whose start is not recorded yet is taken to be behind.
void add_lock_waits(Graph *graph, const LockData *locks) {
    for (int w = 0; w < locks->nelements; ++w) {
        const LockInstanceData &waiter = locks->locks[w];
        if (waiter.waitLockMode == NoLock) continue;
        const int node = node_of(graph, waiter.pid);  // may move graph->kinds
        graph->kinds[node] = core::WaitKind::kAll;
        const LockMethod method = GetLockTagsMethodTable(&waiter.locktag);
        const LOCKMASK conflicts = method->conflictTab[waiter.waitLockMode];
        for (int h = 0; h < locks->nelements; ++h) {
            const LockInstanceData &other = locks->locks[h];
            if (h == w || other.pid == waiter.pid || !same_tag(other.locktag, waiter.locktag))
                continue;
            const bool holds_in_the_way = (other.holdMask & conflicts) != 0;
            const bool queued_ahead =
                other.waitLockMode != NoLock && (LOCKBIT_ON(other.waitLockMode) & conflicts) != 0 &&
                other.waitStart != 0 && waiter.waitStart != 0 && other.waitStart < waiter.waitStart;
            if (holds_in_the_way || queued_ahead) add_edge(graph, waiter.pid, other.pid);
        }
    }
}

// ---- first waiters of semaphores ---------------------------------------------------------------

// One first waiter: who it is and what it waits for. n <= 0: not known (its registry entry says
// nothing), and then every holder of the semaphore counts, whatever its slot -- which can only
// make a deadlock look less likely, never invent one.
struct FirstWaiter {
    int pid;
    uint64 key;
    const text *name;
    int32 n;
    int32 lacks;
    bool timed;  // a token bucket's waiter: time alone gives it room
};

// Keys of the slot-holder locks held in the lock table, sorted, with their holders' pids.
struct SlotHolders {
    uint64 *keys;
    int *pids;
    int count;
};

void sort_slot_holders(SlotHolders *holders) {
    for (int i = 1; i < holders->count; ++i) {  // insertion sort: a handful of entries
        const uint64 key = holders->keys[i];
        const int pid = holders->pids[i];
        int j = i - 1;
        for (; j >= 0 && holders->keys[j] > key; --j) {
            holders->keys[j + 1] = holders->keys[j];
            holders->pids[j + 1] = holders->pids[j];
        }
        holders->keys[j + 1] = key;
        holders->pids[j + 1] = pid;
    }
}

void collect_slot_holders(const LockData *locks, SlotHolders *holders) {
    holders->keys = static_cast<uint64 *>(palloc((locks->nelements + 1) * sizeof(uint64)));
    holders->pids = static_cast<int *>(palloc((locks->nelements + 1) * sizeof(int)));
    holders->count = 0;
    for (int i = 0; i < locks->nelements; ++i) {
        const LockInstanceData &lock = locks->locks[i];
        if (!is_slot_holder(lock)) continue;
        holders->keys[holders->count] = locktag_key(lock.locktag);
        holders->pids[holders->count++] = lock.pid;
    }
    sort_slot_holders(holders);
}

// Edges to the transactions and sessions that hold slots below the waiter's n by a lock.
void add_slot_lock_holders(Graph *graph, const FirstWaiter &first, const LockData *locks,
                           const SlotHolders &holders) {
    if (first.n <= 0) {
        for (int h = 0; h < locks->nelements; ++h) {
            const LockInstanceData &holder = locks->locks[h];
            if (is_name_holders(holder) && locktag_key(holder.locktag) == first.key)
                add_edge(graph, first.pid, holder.pid);
        }
        return;
    }
    if (holders.count == 0) return;
    for (int32 slot = 0; slot < first.n; ++slot) {
        const uint64 key = slot_key(first.name, slot);
        int low = 0;
        int high = holders.count;
        while (low < high) {
            const int mid = (low + high) / 2;
            if (holders.keys[mid] < key)
                low = mid + 1;
            else
                high = mid;
        }
        for (int i = low; i < holders.count && holders.keys[i] == key; ++i)
            add_edge(graph, first.pid, holders.pids[i]);
        if ((slot & 1023) == 1023) CHECK_FOR_INTERRUPTS();
    }
}

// Edges to what the leases below the waiter's n need to end, one per lease (per slot); a lease
// that ends by itself (or is free already) leads to a node that never waits.
void add_lease_holders(Graph *graph, const FirstWaiter &first, const Leases &leases) {
    for (int i = 0; i < leases.count; ++i) {
        const Lease &lease = leases.rows[i];
        if (lease.key != first.key || (first.n > 0 && lease.slot >= first.n)) continue;
        switch (lease.end) {
            case LeaseEnd::kByItself:
                add_edge(graph, first.pid, graph->next_slot_id--);  // a kRunning node
                break;
            case LeaseEnd::kInserter:
                add_edge(graph, first.pid, lease.inserter_pid);
                break;
            case LeaseEnd::kLockersFinish: {
                const int slot_node = graph->next_slot_id--;
                const int node = node_of(graph, slot_node);  // may move graph->kinds
                graph->kinds[node] = core::WaitKind::kAll;
                add_edge(graph, first.pid, slot_node);
                for (int l = 0; l < lease.locker_count; ++l)
                    add_edge(graph, slot_node, lease.locker_pids[l]);
                break;
            }
        }
    }
}

// Whether backend `pid` waits in the lock manager: for the line of a set's next member, most
// likely (claim_sequence.cpp, wait_for_set), or for pgsem.claims' lock.
bool waits_for_a_lock(const LockData *locks, int pid) {
    for (int i = 0; i < locks->nelements; ++i)
        if (locks->locks[i].pid == pid && locks->locks[i].waitLockMode != NoLock) return true;
    return false;
}

void add_first_waiters(Graph *graph, const LockData *locks, const Leases &leases,
                       const FirstWaiter &me) {
    SlotHolders holders;
    collect_slot_holders(locks, &holders);
    for (int f = 0; f < locks->nelements; ++f) {
        const LockInstanceData &lock = locks->locks[f];
        if (!is_first_place(lock)) continue;
        // First in one line and waiting for a lock (a set lining up on its next member): it
        // looks for no slot until it has that lock, so it goes on only when the lock's holders
        // (add_lock_waits, kAll) do, whatever the slots of the lines it is first in. Taken for a
        // first waiter (kAny over those slots' holders), a free or self-ending slot made it seem
        // able to go on, and a cycle through the line it waits for went unseen.
        if (lock.pid != me.pid && waits_for_a_lock(locks, lock.pid)) continue;
        FirstWaiter first{lock.pid, locktag_key(lock.locktag), nullptr, 0, 1, false};
        // A set's other lines (claim_sequence.cpp, wait_for_set): the check is of one member
        // at a time, and that member's slots alone decide whether it can ever be had.
        if (first.pid == me.pid && first.key != me.key) continue;
        if (first.pid == me.pid && first.key == me.key) {
            first = me;
        } else {
            text *name = nullptr;
            if (registry_find_wait(first.pid, first.key, &first.n, &name, &first.timed))
                first.name = name;
            else
                first.n = 0;
        }
        const int node = node_of(graph, first.pid);
        graph->kinds[node] = core::WaitKind::kAny;
        graph->lacks[node] = first.lacks;
        // A paused name (sem_pause) holds its waiters back until a time, which comes whatever
        // anybody does, and its look counts no free slot: a way on that needs nobody.
        // So does a token bucket's waiter (sem_bucket), whose room comes back with time alone.
        if (first.timed || (first.name != nullptr && pause_until(first.name) != 0))
            for (int32 i = 0; i < first.lacks; ++i)
                add_edge(graph, first.pid, graph->next_slot_id--);  // kRunning nodes
        add_lease_holders(graph, first, leases);
        add_slot_lock_holders(graph, first, locks, holders);
    }
}

}  // namespace

bool first_waiter_deadlocked(const text *name, int32 n, int32 lacking) {
    Leases leases;
    read_leases(&leases);
    Graph graph{};
    graph.node_capacity = 64;
    graph.ids = static_cast<int *>(palloc(graph.node_capacity * sizeof(int)));
    graph.kinds =
        static_cast<core::WaitKind *>(palloc(graph.node_capacity * sizeof(core::WaitKind)));
    graph.lacks = static_cast<int32 *>(palloc(graph.node_capacity * sizeof(int32)));
    graph.edge_capacity = 64;
    graph.edges =
        static_cast<core::WaitEdge *>(palloc(graph.edge_capacity * sizeof(core::WaitEdge)));
    graph.next_slot_id = -1;
    const int me = node_of(&graph, MyProcPid);
    const LockData *locks = GetLockStatusData();
    add_lock_waits(&graph, locks);
    add_first_waiters(&graph, locks, leases,
                      FirstWaiter{MyProcPid, name_key(name), name, n, lacking, false});
    // Prepared transactions (pid 0) hold, and never wait: they stay kRunning.
    const core::WaitKind *kinds = graph.kinds;
    const int32 *lacks = graph.lacks;
    const core::WaitEdge *edges = graph.edges;
    const std::size_t nodes = graph.node_count;
    const std::size_t edge_count = graph.edge_count;
    return PGSEM_CPP_CALL([&] {
        return core::deadlocked(kinds, lacks, nodes, edges, edge_count,
                                static_cast<std::size_t>(me));
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
