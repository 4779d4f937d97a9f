// Library entry point: settings and hooks, set up once per backend.
#include "pg/boundary.hpp"
#include "pg/claims_table.hpp"
#include "pg/commit_durability.hpp"
#include "pg/history_pruning.hpp"
#include "pg/statement_depth.hpp"

extern "C" {
PG_MODULE_MAGIC;
void _PG_init(void);
}

namespace pgsem {
int history_retention_seconds = 86400;
}  // namespace pgsem

void _PG_init(void) {
    DefineCustomIntVariable(
        "pgsem.history_retention",
        "How long released and timed-out claims stay in pgsem.claims as history.",
        "Claimers delete older history as they go. -1 keeps history forever.",
        &pgsem::history_retention_seconds, 86400, -1, INT_MAX, PGC_SUSET, GUC_UNIT_S, nullptr,
        nullptr, nullptr);
    MarkGUCPrefixReserved("pgsem");
    pgsem::install_statement_depth_hooks();
    pgsem::install_commit_durability_callback();
    pgsem::install_history_pruning_callback();  // after: its PRE_COMMIT work comes first
    pgsem::install_claims_cache_invalidation();
}
