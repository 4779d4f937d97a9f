// Quotas per role (1.2): what a superuser sets with sem_set_quota (store/quotas.hpp) bounds the
// live claims -- every kind, each permit counting -- and the waits of the role that claims
// (current_user), across all of its sessions in this database. The quota is the role's own, in
// the database: no session setting can hide or raise it, and a SET ROLE claims under the quota
// of the role it sets.
//
// A count and the take that follows it are one step for the role: each is made under a mutex of
// the role's (a lock-manager lock, like a slot's), so two sessions of a role at its quota less one
// cannot both take. Leases are counted from the live index of pgsem.claims (in flight ones too);
// transaction and session claims and waits from the registry (store/registry.hpp), where each
// session lists up to 16 claims: under a claims quota a session holds no more than that.
#pragma once

#include "pg/base/claim_types.hpp"
#include "pg/store/claims_table.hpp"

namespace pgsem {

// Taken by a look before it picks slots, let go once it has taken them or given them back: when
// the role's claims quota is set, its mutex, and 53400 when `permits` more would exceed it.
struct QuotaHold {
    const text *mutex_name;  // nullptr: no quota, nothing held
};
QuotaHold hold_claims_quota(ClaimsTable *table, ClaimKind kind, int32 permits);
void let_go_of_claims_quota(const QuotaHold &hold);

// Called with this backend's wait already noted in the registry: 53400 when the role's other
// waits reach its waiters quota (the caller forgets its wait on the way out).
void require_waiters_quota();

// sem_set_quota: superusers only (42501), as ALTER ROLE of a superuser-only setting would be.
// nullptr: no maximum of that kind.
void set_role_quota(Oid role, const int32 *max_claims, const int32 *max_waiters);

}  // namespace pgsem
