#include "core/arguments.hpp"
#include "core/claim_sets.hpp"
#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/name_stats.hpp"
#include "pg/xact/pending_stats.hpp"

namespace pgsem {

namespace {

// Counts waiting for their transaction's commit: entries of a hash table in TopTransactionContext,
// keyed by (sub)transaction level and name, linked newest first. The entries of the innermost open
// (sub)transaction are always the front of the list: an entry is made at the level of the
// (sub)transaction that counts, and a subtransaction's entries are merged into its parent's, or
// dropped, when it ends.
struct PendingKey {
    int nest_level;
    char name[core::kMaxNameBytes + 1];  // NUL-terminated, zero-padded: keys compare bytewise
};
struct Pending {
    PendingKey key;  // first: the hash key
    Pending *next;
    core::ClaimTally tally;
    bool pause_changed;  // the name's pause was set or lifted: the latest pause_until holds
    TimestampTz pause_until;
};
Pending *pending = nullptr;
HTAB *pending_table = nullptr;

// The pending entry of `name` at this (sub)transaction's level, made if need be.
Pending *pending_of(const text *name) {
    if (pending_table == nullptr) {
        HASHCTL info;
        memset(&info, 0, sizeof(info));
        info.keysize = sizeof(PendingKey);
        info.entrysize = sizeof(Pending);
        info.hcxt = TopTransactionContext;
        pending_table =
            hash_create("pgsem pending counts", 16, &info, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    PendingKey key;
    memset(&key, 0, sizeof(key));
    key.nest_level = GetCurrentTransactionNestLevel();
    memcpy(key.name, VARDATA_ANY(name),
           Min(static_cast<size_t>(VARSIZE_ANY_EXHDR(name)), core::kMaxNameBytes));
    bool found = false;
    auto *p = static_cast<Pending *>(hash_search(pending_table, &key, HASH_ENTER, &found));
    if (!found) {
        p->next = pending;
        p->tally = core::ClaimTally{};
        p->pause_changed = false;
        p->pause_until = 0;
        pending = p;
    }
    return p;
}

// What a subtransaction counted, into its parent's entry of the same name (the child's pause
// change is the later one).
void merge_into(Pending *parent, const Pending &child) {
    PGSEM_NOTHROW(core::merge(parent->tally, child.tally));
    if (child.pause_changed) {
        parent->pause_changed = true;
        parent->pause_until = child.pause_until;
    }
}

// The wait in progress, if any: its names (in TopMemoryContext, kept for the next wait) and start.
struct WaitInProgress {
    bool active;
    int count;
    TimestampTz since;
    int nest_level;
    char names[core::kMaxSetNames][core::kMaxNameBytes + 1];
};
WaitInProgress *wait = nullptr;

void count_wait_ended_by_error() {
    if (wait == nullptr || !wait->active) return;
    wait->active = false;
    const int64 waited = GetCurrentTimestamp() - wait->since;
    const core::ClaimTally delta =
        PGSEM_NOTHROW(core::tally_answer(core::ClaimOutcome::kWaitEnded, 0, waited));
    for (int i = 0; i < wait->count; ++i)
        name_stats_add_bytes(wait->names[i], strlen(wait->names[i]), delta);
}

void flush_oldest_first(Pending *list) {
    Pending *oldest_first = nullptr;
    while (list != nullptr) {
        Pending *next = list->next;
        list->next = oldest_first;
        oldest_first = list;
        list = next;
    }
    for (Pending *p = oldest_first; p != nullptr; p = p->next) {
        const size_t length = strlen(p->key.name);
        name_stats_add_bytes(p->key.name, length, p->tally);
        if (p->pause_changed) name_stats_pause(p->key.name, length, p->pause_until);
    }
}

}  // namespace

void count_event(const text *name, const core::ClaimTally &delta, bool at_commit) {
    if (!name_stats_counting()) return;
    if (!at_commit) {
        name_stats_add(name, delta);
        return;
    }
    Pending *p = pending_of(name);
    PGSEM_NOTHROW(core::merge(p->tally, delta));
}

void count_pause(const text *name, TimestampTz until) {
    if (!name_stats_counting()) return;
    Pending *p = pending_of(name);
    p->pause_changed = true;
    p->pause_until = until;
}

void count_wait_begins(const text *const *names, int count, TimestampTz since) {
    if (!name_stats_counting()) return;
    if (wait == nullptr)
        wait = static_cast<WaitInProgress *>(
            MemoryContextAllocZero(TopMemoryContext, sizeof(WaitInProgress)));
    wait->count = Min(count, static_cast<int>(core::kMaxSetNames));
    for (int i = 0; i < wait->count; ++i) {
        const size_t length =
            Min(static_cast<size_t>(VARSIZE_ANY_EXHDR(names[i])), core::kMaxNameBytes);
        memcpy(wait->names[i], VARDATA_ANY(names[i]), length);
        wait->names[i][length] = '\0';
    }
    wait->since = since;
    wait->nest_level = GetCurrentTransactionNestLevel();
    wait->active = true;
}

void count_wait_ends() {
    if (wait != nullptr) wait->active = false;
}

void pending_stats_at_end(bool commit) {
    if (!commit) count_wait_ended_by_error();
    // Oldest first (the list is newest first): a subtransaction's entries, moved to its parent,
    // sit before the parent's own, and the parent's pause change is the later one.
    if (commit) flush_oldest_first(pending);
    pending = nullptr;  // its memory goes with TopTransactionContext
    pending_table = nullptr;
}

void pending_stats_at_subtransaction_end(bool commit) {
    const int level = GetCurrentTransactionNestLevel();
    if (!commit && wait != nullptr && wait->nest_level >= level) count_wait_ended_by_error();
    // This subtransaction's entries are the front of the list; those moved to the parent go back
    // to its front, in their order. An entry is unlinked before it leaves the table.
    Pending *moved = nullptr;
    Pending **moved_tail = &moved;
    while (pending != nullptr && pending->key.nest_level >= level) {
        Pending *p = pending;
        pending = p->next;
        PendingKey parent_key = p->key;
        parent_key.nest_level = level - 1;
        auto *parent = commit ? static_cast<Pending *>(
                                    hash_search(pending_table, &parent_key, HASH_FIND, nullptr))
                              : nullptr;
        if (parent != nullptr) merge_into(parent, *p);
        if (!commit || parent != nullptr) {
            (void)hash_search(pending_table, &p->key, HASH_REMOVE, nullptr);
            continue;
        }
        (void)hash_update_hash_key(pending_table, p, &parent_key);  // the parent's now
        p->next = nullptr;
        *moved_tail = p;
        moved_tail = &p->next;
    }
    *moved_tail = pending;
    pending = moved;
}

}  // namespace pgsem
