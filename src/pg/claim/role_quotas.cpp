#include "core/slot_choice.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/role_quotas.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/quotas.hpp"
#include "pg/store/registry.hpp"

namespace pgsem {

namespace {

// The role's mutex is the slot mutex of a name no semaphore can have a slot of (slot -1).
const text *quota_mutex_name(Oid role) {
    return cstring_to_text(psprintf("pgsem quota of role %u", role));
}

// A role's name, or its OID as text once it has been dropped.
const char *role_or_oid(Oid role) {
    const char *name = GetUserNameFromId(role, true);
    return name != nullptr ? name : psprintf("%u", role);
}

const char *current_role_name() {
    return GetUserNameFromId(GetUserId(), false);
}

[[noreturn]] void raise_registry_out_of_reach(const char *what) {
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("pgsem: cannot count the %s of role \"%s\" for its quota", what,
                    current_role_name()),
             errdetail("The registry of transaction and session claims and waits has no shared "
                       "memory."),
             errhint("Add pgsem to shared_preload_libraries.")));
}

// The role's leases: rows of the live index that hold their slot, in flight ones included.
int32 count_leases(ClaimsTable *table, Oid role) {
    const TimestampTz now = GetCurrentTimestamp();
    int32 count = 0;
    ClaimScan scan;
    ClaimRow row;
    live_scan_begin(table, &scan);
    while (claim_scan_next(&scan, &row)) {
        if (row.holder_role != role) continue;
        const core::ClaimRowState state = claim_state(row);
        if (PGSEM_NOTHROW(core::classify(state, now)) == core::Occupancy::kHeld) ++count;
    }
    claim_scan_end(&scan);
    return count;
}

}  // namespace

QuotaHold hold_claims_quota(ClaimsTable *table, ClaimKind kind, int32 permits) {
    const Oid role = GetUserId();
    RoleQuota quota;
    if (!find_role_quota(role, &quota) || quota.max_claims < 0) return QuotaHold{nullptr};
    const int32 max_claims = quota.max_claims;  // 0: no claims at all
    const QuotaHold hold{quota_mutex_name(role)};
    (void)lock_slot_mutex(hold.mutex_name, -1, true);
    RoleTally tally;
    if (!registry_tally_role(role, &tally)) raise_registry_out_of_reach("claims");
    if (kind != ClaimKind::kLease && !registry_can_list(permits))
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("pgsem: a session under a claims quota holds at most 16 transaction and "
                        "session claims (slots) at once"),
                 errdetail("Role \"%s\" has a quota of %d live claims (sem_quotas); its claims "
                           "are counted from what each session lists.",
                           current_role_name(), max_claims)));
    const int64 live = static_cast<int64>(tally.claims) + count_leases(table, role);
    if (live + permits > max_claims)
        ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                        errmsg("pgsem: role \"%s\" has reached its quota of live claims "
                               "(max_claims = %d)",
                               current_role_name(), max_claims),
                        errdetail("It holds %lld live claim slots; this claim asks for %d more.",
                                  static_cast<long long>(live), permits),
                        errhint("Release claims first, or ask a superuser to raise the quota.")));
    return hold;
}

void let_go_of_claims_quota(const QuotaHold &hold) {
    if (hold.mutex_name != nullptr) unlock_slot_mutex(hold.mutex_name, -1);
}

void require_waiters_quota() {
    const Oid role = GetUserId();
    RoleQuota quota;
    if (!find_role_quota(role, &quota) || quota.max_waiters < 0) return;
    const int32 max_waiters = quota.max_waiters;
    const text *mutex_name = quota_mutex_name(role);
    // Under the mutex, this backend's wait (noted already) and the count of the others': of two
    // that note theirs at once, the second to count sees the first.
    (void)lock_slot_mutex(mutex_name, -1, true);
    RoleTally tally;
    if (!registry_tally_role(role, &tally)) raise_registry_out_of_reach("waits");
    unlock_slot_mutex(mutex_name, -1);
    if (tally.waits >= max_waiters)
        ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                        errmsg("pgsem: role \"%s\" has reached its quota of waiters "
                               "(max_waiters = %d)",
                               current_role_name(), max_waiters),
                        errdetail("%d other sessions of the role wait for a slot.", tally.waits),
                        errhint("Claim without waiting, or ask a superuser to raise the quota.")));
}

void set_role_quota(Oid role, const int32 *max_claims, const int32 *max_waiters) {
    if (!superuser())
        ereport(ERROR,
                (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                 errmsg("sem_set_quota(): permission denied to set the quota of role %s",
                        quote_identifier(role_or_oid(role))),
                 errdetail("Quotas bound roles that may not raise their own: only superusers "
                           "set them.")));
    quotas_set(role, max_claims, max_waiters);
}

}  // namespace pgsem
