#include "pg/base/boundary.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/release_epochs.hpp"
#include "pg/xact/pending_wakes.hpp"

namespace pgsem {

namespace {

// In TopMemoryContext, until the top transaction ends.
constexpr int kMaxPendingWakes = 32;
text *pending[kMaxPendingWakes];
bool frees_at_commit[kMaxPendingWakes];
bool began[kMaxPendingWakes];  // begin_pending_releases began its release
int pending_count = 0;
bool pending_overflow = false;  // more names than that: wake every first waiter instead
bool pending_begun = false;     // begin_pending_releases ran for this transaction
bool overflow_frees_at_commit = false;

void forget_pending() {
    for (int i = 0; i < pending_count; ++i) pfree(pending[i]);
    pending_count = 0;
    pending_overflow = false;
    pending_begun = false;
    overflow_frees_at_commit = false;
}

// Once the first waiters are woken: the releases have happened.
void end_pending_releases() {
    if (pending_overflow)
        release_epochs_end_all();
    else
        for (int i = 0; i < pending_count; ++i) release_epochs_end(pending[i], began[i]);
}

}  // namespace

void wake_first_waiter_at_end(const text *name, FreesAt frees) {
    (void)release_epochs_attach();  // here, not at the end of the transaction, which must not fail
    const bool at_commit = frees == FreesAt::kCommitOrRollback;
    for (int i = 0; i < pending_count; ++i) {
        if (!same_text(pending[i], name)) continue;
        frees_at_commit[i] = frees_at_commit[i] || at_commit;
        return;
    }
    if (pending_count == kMaxPendingWakes) {
        pending_overflow = true;
        overflow_frees_at_commit = overflow_frees_at_commit || at_commit;
        return;
    }
    text *copy = static_cast<text *>(MemoryContextAlloc(TopMemoryContext, VARSIZE_ANY(name)));
    memcpy(copy, name, VARSIZE_ANY(name));
    frees_at_commit[pending_count] = at_commit;
    began[pending_count] = false;
    pending[pending_count++] = copy;
}

void wake_every_first_waiter_at_end() {
    (void)release_epochs_attach();
    pending_overflow = true;
    overflow_frees_at_commit = true;
}

// A commit that frees nothing begins nothing: a lease claim's durable commit (a disk flush, maybe
// a standby's answer) would otherwise send every refusal of its semaphore meanwhile to a second
// look.
void begin_pending_releases(bool is_commit) {
    if (pending_begun) return;  // an error after PRE_COMMIT, and the ABORT that follows it
    pending_begun = true;
    if (pending_overflow) {
        if (!is_commit || overflow_frees_at_commit) release_epochs_begin_all();
        return;
    }
    for (int i = 0; i < pending_count; ++i) {
        if (is_commit && !frees_at_commit[i]) continue;
        release_epochs_begin(pending[i]);
        began[i] = true;
    }
}

void fire_pending_wakes(bool is_commit, bool is_top_level) {
    // A subtransaction's commit passes its rows to its parent: nothing frees yet.
    if ((pending_count > 0 || pending_overflow) && !(is_commit && !is_top_level)) {
        if (pending_overflow)
            wake_every_first_waiter();
        else
            for (int i = 0; i < pending_count; ++i) wake_first_waiter(pending[i]);
        end_pending_releases();
    }
    if (!is_top_level) return;
    release_epochs_end_begun();  // whatever an error left begun
    forget_pending();
}

}  // namespace pgsem
