#include "core/slot_choice.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/request_keys.hpp"
#include "pg/claim/slot_search.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/locks.hpp"

namespace pgsem {

namespace {

// A keyed claim whose lease ran out while a transaction still locks its row (a fence taken before
// it ran out holds its slots until that transaction ends): neither the key's claim, which
// sem_held calls not held, nor free for a new claim to carry the key.
[[noreturn]] void raise_key_in_use(const SlotRequest &request, const ClaimRow &row) {
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_IN_USE),
             errmsg("sem_claim(): request key \"%s\" names claim %lld of semaphore \"%s\", whose "
                    "lease ran out while a transaction holds its row",
                    text_to_cstring(request.request_key), static_cast<long long>(row.id),
                    text_to_cstring(request.name)),
             errhint("Ask again once that transaction (a fence, most likely) has ended.")));
    pg_unreachable();
}

}  // namespace

bool recall_keyed_claim(const SlotRequest &request, SlotGrant *grant) {
    const Oid role = GetUserId();
    lock_request_key(request.name, role, request.request_key);
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    bool recalled = false;
    for (int attempt = 0;; ++attempt) {
        if (attempt == kMaxRowRetries)
            ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                            errmsg("pgsem: the claim of a request key kept changing")));
        ClaimRow keyed;
        if (!claims_find_keyed(&table, request.name, role, request.request_key, &keyed)) break;
        // The key's row is its claim's lowest slot's; the claim's rows share their expiry and
        // end together (a release ends them all, only an expiry lets a claimer reap one), so the
        // key's row speaks for the claim. Nobody else's insert can be in flight: the key's lock
        // waited for it. This transaction's own shows as committed.
        const TimestampTz now = GetCurrentTimestamp();
        const core::ClaimRowState state = claim_state(keyed);
        const core::ClaimStatus status = PGSEM_NOTHROW(core::status_of(state, now));
        if (status == core::ClaimStatus::kLive || status == core::ClaimStatus::kUncommitted) {
            *grant = SlotGrant{true, keyed.slot, keyed.id, 0, request.permits};
            recalled = true;
            break;
        }
        const Reap outcome = reap(&table, keyed.tid, now);
        if (outcome == Reap::kVacant) break;
        if (outcome == Reap::kHeld) raise_key_in_use(request, keyed);
    }
    claims_close_unlocking(&table);
    return recalled;
}

}  // namespace pgsem
