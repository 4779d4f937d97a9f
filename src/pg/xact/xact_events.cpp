#include "core/arguments.hpp"
#include "pg/base/postgres_api.hpp"
#include "pg/store/buckets.hpp"
#include "pg/store/registry.hpp"
#include "pg/store/release_epochs.hpp"
#include "pg/xact/commit_durability.hpp"
#include "pg/xact/held_claims.hpp"
#include "pg/xact/history_pruning.hpp"
#include "pg/xact/pending_stats.hpp"
#include "pg/xact/pending_wakes.hpp"
#include "pg/xact/xact_events.hpp"

namespace pgsem {

namespace {

void at_exit(int /*code*/, Datum /*arg*/) {
    // Session claims first: their first waiters are woken while this backend can still do so
    // (Postgres itself would release the locks at the very end of the backend's life). Then the
    // registry entry, which the claims' ends just updated.
    held_claims_at_exit();
    release_epochs_end_begun();
    registry_leave();
}

// Registered from a transaction event, not from _PG_init: a preloaded library's _PG_init runs in
// the postmaster, whose exit callbacks its children do not inherit.
void ensure_exit_callback() {
    static bool registered = false;
    if (registered) return;
    before_shmem_exit(at_exit, static_cast<Datum>(0));
    registered = true;
}

void on_transaction(XactEvent event, void * /*arg*/) {
    ensure_exit_callback();
    switch (event) {
        case XACT_EVENT_PRE_COMMIT:
            // Pruning writes: it comes before the commit's durability is decided from what the
            // transaction wrote.
            pruning_before_commit();
            buckets_prune_before_commit();
            durability_before_commit();
            // Last: from here on a lease row this transaction wrote may show as committed.
            begin_pending_releases(true);
            break;
        case XACT_EVENT_PRE_PREPARE:
            held_claims_before_prepare();  // may refuse the PREPARE
            durability_before_prepare();
            break;
        case XACT_EVENT_COMMIT:
        case XACT_EVENT_PREPARE:
            // A prepared transaction's lease grants count as it is prepared: most commit, and
            // whoever commits it later runs no pgsem code.
            pending_stats_at_end(true);
            held_claims_at_end(true);
            durability_at_end();
            pruning_at_end();
            buckets_prune_forget();
            break;
        case XACT_EVENT_ABORT:
            // A wait ended by an error (a cancel, a timeout, a refusal) stops counting against
            // its role's waiters quota (claim/role_quotas.hpp).
            registry_forget_wait();
            pending_stats_at_end(false);    // and the wait an error ended counts so
            begin_pending_releases(false);  // before the locks go (rows have gone already)
            held_claims_at_end(false);
            durability_at_end();
            pruning_at_end();
            buckets_prune_forget();
            break;
        case XACT_EVENT_PARALLEL_COMMIT:
        case XACT_EVENT_PARALLEL_ABORT:
            held_claims_at_parallel_end();
            durability_at_end();
            break;
        default:
            break;
    }
}

void on_subtransaction(SubXactEvent event, SubTransactionId mine, SubTransactionId parent,
                       void * /*arg*/) {
    // A wait runs inside one statement: a subtransaction that aborts (a PL/pgSQL handler that
    // caught the wait's error, or the one a wait in line runs in) ends it.
    if (event == SUBXACT_EVENT_ABORT_SUB) registry_forget_wait();
    if (event == SUBXACT_EVENT_COMMIT_SUB || event == SUBXACT_EVENT_ABORT_SUB) {
        const bool committed = event == SUBXACT_EVENT_COMMIT_SUB;
        pending_stats_at_subtransaction_end(committed);
        held_claims_at_subtransaction_end(committed, mine, parent);
    }
}

// Wake-ups wait until the (sub)transaction's locks are gone, so that a waiter woken can take the
// slot freed (at XACT_EVENT_COMMIT the locks are still held).
void on_resource_release(ResourceReleasePhase phase, bool is_commit, bool is_top_level,
                         void * /*arg*/) {
    if (phase == RESOURCE_RELEASE_AFTER_LOCKS) fire_pending_wakes(is_commit, is_top_level);
}

}  // namespace

void install_transaction_events() {
    RegisterXactCallback(on_transaction, nullptr);
    RegisterSubXactCallback(on_subtransaction, nullptr);
    RegisterResourceReleaseCallback(on_resource_release, nullptr);
}

}  // namespace pgsem
