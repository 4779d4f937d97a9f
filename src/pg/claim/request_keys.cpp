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

// A retry repeats its first attempt. One whose n or permits differ is another request under the
// same key: the key's claim would answer it with slots it did not ask for (fewer permits than it
// counts on, or a slot at or above its n), so it is refused rather than answered.
void require_same_request(const SlotRequest &request, const ClaimRow &row) {
    if (row.n == request.n && row.permits == request.permits) return;
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("sem_claim(): request key \"%s\" names claim %lld of semaphore \"%s\", made "
                    "with other arguments",
                    text_to_cstring(request.request_key), static_cast<long long>(row.id),
                    text_to_cstring(request.name)),
             errdetail("That claim was made with n = %d and permits = %d; this call asks for "
                       "n = %d and permits = %d.",
                       row.n, row.permits, request.n, request.permits),
             errhint("A retry must repeat its first attempt's n and permits; use another key for "
                     "another claim.")));
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
        // Another transaction is changing the key's row: releasing it, renewing it, or -- its
        // lease having run out -- a claimer recording its timeout. What the key names depends
        // on how that ends (a release that commits frees the key; one that rolls back leaves the
        // claim live), and neither an answer nor a new keyed row can be right until then: wait
        // for that transaction, taking no lock on the row (lock_timeout and the deadlock
        // detector apply), and look again.
        if (keyed.change_in_progress) {
            claims_wait_for_changer(&table, keyed);
            continue;
        }
        // The key's row is its claim's lowest slot's; the claim's rows share their expiry and
        // end together (a release ends them all, only an expiry lets a claimer reap one), so the
        // key's row speaks for the claim. Nobody else's insert can be in flight: the key's lock
        // waited for it. This transaction's own shows as committed.
        const TimestampTz now = GetCurrentTimestamp();
        const core::ClaimRowState state = claim_state(keyed);
        const core::ClaimStatus status = PGSEM_NOTHROW(core::status_of(state, now));
        if (status == core::ClaimStatus::kLive || status == core::ClaimStatus::kUncommitted) {
            require_same_request(request, keyed);
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
