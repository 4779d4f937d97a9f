// The table pgsem.quotas (1.2): per role, the most live claim slots and waiting sessions a
// superuser allows it (sem_set_quota), read by claims from a copy each backend keeps -- loaded
// whole with the latest committed state, dropped when the relcache says the table changed (its
// trigger says so at commit), as store/declarations.hpp keeps the declarations.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

struct RoleQuota {
    Oid role;
    int32 max_claims;   // -1: none
    int32 max_waiters;  // -1: none
};

// Called from _PG_init.
void install_quotas_cache_invalidation();

// The quota of `role`, into *quota; false when it has none (or SQL objects older than 1.2).
bool find_role_quota(Oid role, RoleQuota *quota);

// Sets the quota of `role` (nullptr: no maximum of that kind; both: the row goes), as the
// table's owner (the caller checked the right to).
void quotas_set(Oid role, const int32 *max_claims, const int32 *max_waiters);

}  // namespace pgsem
