#include "core/arguments.hpp"
#include "core/claim_sets.hpp"
#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/name_stats.hpp"
#include "pg/xact/pending_stats.hpp"

namespace pgsem {

namespace {

// Counts waiting for their transaction's commit, in TopTransactionContext: a list, newest first,
// whose entries of the innermost open (sub)transaction are always at its front (an entry is made
// at the level of the (sub)transaction that counts, and a subtransaction's entries are merged into
// its parent's or dropped when it ends), and an index by level and name.
struct PendingKey {
    int nest_level;
    char name[core::kMaxNameBytes + 1];  // zero-padded: keys compare bytewise
};
struct Pending {
    PendingKey key;  // first: the index's key
    Pending *next;
    text *name;
    core::ClaimTally tally;
    bool pause_changed;  // the name's pause was set or lifted: the latest pause_until holds
    TimestampTz pause_until;
};
Pending *pending = nullptr;
struct IndexEntry {
    PendingKey key;
    Pending *entry;
};
HTAB *pending_index = nullptr;

void key_of(int level, const text *name, PendingKey *key) {
    memset(key, 0, sizeof(PendingKey));
    key->nest_level = level;
    memcpy(key->name, VARDATA_ANY(name),
           Min(static_cast<size_t>(VARSIZE_ANY_EXHDR(name)), core::kMaxNameBytes));
}

HTAB *index_of_pending() {
    if (pending_index == nullptr) {
        HASHCTL info;
        memset(&info, 0, sizeof(info));
        info.keysize = sizeof(PendingKey);
        info.entrysize = sizeof(IndexEntry);
        info.hcxt = TopTransactionContext;
        pending_index =
            hash_create("pgsem pending counts", 16, &info, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    return pending_index;
}

// The pending entry of `name` at this (sub)transaction's level, made if need be.
Pending *pending_of(const text *name) {
    PendingKey key;
    key_of(GetCurrentTransactionNestLevel(), name, &key);
    bool found = false;
    auto *slot =
        static_cast<IndexEntry *>(hash_search(index_of_pending(), &key, HASH_ENTER, &found));
    if (found) return slot->entry;
    auto *p =
        static_cast<Pending *>(MemoryContextAllocZero(TopTransactionContext, sizeof(Pending)));
    p->key = key;
    p->name = static_cast<text *>(MemoryContextAlloc(TopTransactionContext, VARSIZE_ANY(name)));
    memcpy(p->name, name, VARSIZE_ANY(name));
    p->next = pending;
    pending = p;
    slot->entry = p;
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
        name_stats_add(p->name, p->tally);
        if (p->pause_changed) name_stats_pause(p->name, p->pause_until);
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

void wait_begins(const text *const *names, int count, TimestampTz since) {
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

void wait_counted() {
    if (wait != nullptr) wait->active = false;
}

void pending_stats_at_end(bool commit) {
    if (!commit) count_wait_ended_by_error();
    // Oldest first (the list is newest first): a subtransaction's entries, moved to its parent,
    // sit before the parent's own, and the parent's pause change is the later one.
    if (commit) flush_oldest_first(pending);
    pending = nullptr;  // its memory goes with TopTransactionContext, the index's too
    pending_index = nullptr;
}

void pending_stats_at_subtransaction_end(bool commit) {
    const int level = GetCurrentTransactionNestLevel();
    if (!commit && wait != nullptr && wait->nest_level >= level) count_wait_ended_by_error();
    // This subtransaction's entries are the front of the list; those moved to the parent go back
    // to its front, in their order.
    Pending *moved = nullptr;
    Pending **moved_tail = &moved;
    while (pending != nullptr && pending->key.nest_level >= level) {
        Pending *p = pending;
        pending = p->next;
        (void)hash_search(pending_index, &p->key, HASH_REMOVE, nullptr);
        if (!commit) continue;  // rolled back with the subtransaction
        PendingKey parent_key = p->key;
        parent_key.nest_level = level - 1;
        auto *parent =
            static_cast<IndexEntry *>(hash_search(pending_index, &parent_key, HASH_FIND, nullptr));
        if (parent != nullptr) {
            merge_into(parent->entry, *p);
            continue;
        }
        p->key = parent_key;  // the parent's now
        bool found = false;
        auto *slot =
            static_cast<IndexEntry *>(hash_search(pending_index, &p->key, HASH_ENTER, &found));
        slot->entry = p;
        p->next = nullptr;
        *moved_tail = p;
        moved_tail = &p->next;
    }
    *moved_tail = pending;
    pending = moved;
}

}  // namespace pgsem
