// Library entry point: settings, hooks and callbacks, set up once per backend (and once in the
// postmaster when preloaded).
#include "core/arguments.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/waiting_line.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/declarations.hpp"
#include "pg/store/name_stats.hpp"
#include "pg/store/pauses.hpp"
#include "pg/store/quotas.hpp"
#include "pg/store/registry.hpp"
#include "pg/store/release_epochs.hpp"
#include "pg/xact/held_claims.hpp"
#include "pg/xact/history_pruning.hpp"
#include "pg/xact/statement_depth.hpp"
#include "pg/xact/xact_events.hpp"

extern "C" {
PG_MODULE_MAGIC;
void _PG_init(void);
}

namespace pgsem {
int history_retention_seconds = 86400;
int history_max_claims = 150000;
int first_waiter_recheck_ms = 1000;
bool require_declared = false;
}  // namespace pgsem

void _PG_init(void) {
    DefineCustomIntVariable(
        "pgsem.history_retention",
        "How long released and timed-out claims stay in pgsem.claims as history.",
        "Claimers delete older history as they go. -1 keeps history forever.",
        &pgsem::history_retention_seconds, 86400, -1, INT_MAX, PGC_SUSET, GUC_UNIT_S, nullptr,
        nullptr, nullptr);
    DefineCustomIntVariable(
        "pgsem.history_max_claims",
        "How many of the newest claims pgsem.claims keeps as history, whatever their age.",
        "Claimers delete older ended claims as they go, as for pgsem.history_retention. -1: no "
        "cap.",
        &pgsem::history_max_claims, 150000, -1, INT_MAX, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pgsem.first_waiter_recheck",
        "How often the first waiter of a semaphore looks for a slot again unwoken.",
        "Every release, rollback and end of a claim wakes the first waiter; this recheck finds "
        "slots freed where no pgsem code runs (COMMIT PREPARED, a superuser's DELETE). 0 turns "
        "it off.",
        &pgsem::first_waiter_recheck_ms, 1000, 0, INT_MAX, PGC_SUSET, GUC_UNIT_MS, nullptr, nullptr,
        nullptr);
    DefineCustomIntVariable(
        "pgsem.max_locks_per_session",
        "How many entries of the server's lock table one session may hold through pgsem at once.",
        "Counts what each claim holds at its peak: its names' lines, its slots' mutexes, the "
        "slots of transaction and session claims, request keys. -1: no limit.",
        &pgsem::max_locks_per_session, 64, -1, INT_MAX, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgsem.require_declared", "Refuses claims on semaphores nobody declared (sem_declare).",
        "Off: an undeclared name is claimed with the caller's own n, as before 1.2.",
        &pgsem::require_declared, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgsem.track_stats", "Counts claims, waits and releases for sem_stats.",
        "Off: this session's activity is not counted (the counters need pgsem in "
        "shared_preload_libraries anyway).",
        &pgsem::track_stats, true, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    // A server-start setting can only be defined while preloading, and only matters then; loaded
    // later, it is defined as one a reload may set, so that a postgresql.conf that still names
    // it draws no warning in every session.
    DefineCustomIntVariable(
        "pgsem.stats_max_names", "How many names sem_stats counts each in a row of its own.",
        "Past that many, the least recently active name is folded into one row for all such "
        "names. Set at server start; counting needs pgsem in shared_preload_libraries.",
        &pgsem::stats_max_names, 1000, 10, 10000,
        process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0, nullptr,
        nullptr, nullptr);
    MarkGUCPrefixReserved("pgsem");
    pgsem::install_registry_shmem_hooks();
    pgsem::install_release_epochs_shmem_hooks();
    pgsem::install_name_stats_shmem_hooks();
    pgsem::install_statement_depth_hooks();
    pgsem::install_transaction_events();
    pgsem::install_claims_cache_invalidation();
    pgsem::install_declarations_cache_invalidation();
    pgsem::install_quotas_cache_invalidation();
    pgsem::install_pauses_cache_invalidation();
}
