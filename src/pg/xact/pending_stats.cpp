#include "core/arguments.hpp"
#include "core/claim_sets.hpp"
#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/name_stats.hpp"
#include "pg/xact/pending_stats.hpp"

namespace pgsem {

namespace {

// Counts waiting for their transaction's commit, in TopTransactionContext.
struct Pending {
    Pending *next;
    int nest_level;  // the (sub)transaction whose rollback drops it
    text *name;
    core::ClaimTally tally;
    bool pause_changed;  // the name's pause was set or lifted: the latest pause_until holds
    TimestampTz pause_until;
};
Pending *pending = nullptr;

// The pending entry of `name` at this (sub)transaction's level, made if need be.
Pending *pending_of(const text *name) {
    const int level = GetCurrentTransactionNestLevel();
    for (Pending *p = pending; p != nullptr; p = p->next)
        if (p->nest_level == level && same_text(p->name, name)) return p;
    const MemoryContext caller = MemoryContextSwitchTo(TopTransactionContext);
    auto *p = static_cast<Pending *>(palloc0(sizeof(Pending)));
    p->name = static_cast<text *>(PG_DETOAST_DATUM_COPY(PointerGetDatum(name)));
    MemoryContextSwitchTo(caller);
    p->next = pending;
    p->nest_level = level;
    pending = p;
    return p;
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
    pending = nullptr;  // its memory goes with TopTransactionContext
}

void pending_stats_at_subtransaction_end(bool commit) {
    const int level = GetCurrentTransactionNestLevel();
    if (!commit && wait != nullptr && wait->nest_level >= level) count_wait_ended_by_error();
    Pending **link = &pending;
    while (*link != nullptr) {
        Pending *p = *link;
        if (p->nest_level < level) {
            link = &p->next;
        } else if (commit) {
            p->nest_level = level - 1;  // the parent's now; may merge with one of the parent's
            link = &p->next;
        } else {
            *link = p->next;  // rolled back with the subtransaction
        }
    }
}

}  // namespace pgsem
