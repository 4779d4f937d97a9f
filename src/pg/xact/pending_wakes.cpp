#include "pg/base/boundary.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/locks.hpp"
#include "pg/xact/pending_wakes.hpp"

namespace pgsem {

namespace {

// In TopMemoryContext, until the top transaction ends.
constexpr int kMaxPendingWakes = 32;
text *pending[kMaxPendingWakes];
int pending_count = 0;
bool pending_overflow = false;  // more names than that: wake every first waiter instead

void forget_pending() {
    for (int i = 0; i < pending_count; ++i) pfree(pending[i]);
    pending_count = 0;
    pending_overflow = false;
}

}  // namespace

void wake_first_waiter_at_end(const text *name) {
    for (int i = 0; i < pending_count; ++i)
        if (same_text(pending[i], name)) return;
    if (pending_count == kMaxPendingWakes) {
        pending_overflow = true;
        return;
    }
    text *copy = static_cast<text *>(MemoryContextAlloc(TopMemoryContext, VARSIZE_ANY(name)));
    memcpy(copy, name, VARSIZE_ANY(name));
    pending[pending_count++] = copy;
}

void fire_pending_wakes(bool is_commit, bool is_top_level) {
    if (pending_count == 0 && !pending_overflow) return;
    if (is_commit && !is_top_level) return;  // a subtransaction's rows pass to its parent
    if (pending_overflow)
        wake_every_first_waiter();
    else
        for (int i = 0; i < pending_count; ++i) wake_first_waiter(pending[i]);
    if (is_top_level) forget_pending();
}

}  // namespace pgsem
