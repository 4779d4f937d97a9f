#include "core/arguments.hpp"
#include "core/slot_choice.hpp"
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/request_keys.hpp"
#include "pg/claim/slot_search.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/locks.hpp"
#include "pg/xact/held_claims.hpp"

namespace pgsem {

namespace {

// A keyed claim whose lease ran out while a transaction still locks its row (a fence taken before
// it ran out holds its slots until that transaction ends): neither the key's claim, which
// sem_held calls not held, nor free for a new claim to carry the key.
[[noreturn]] void raise_key_in_use(const char *function, const SlotRequest &request,
                                   const ClaimRow &row) {
    ereport(ERROR, (errcode(ERRCODE_OBJECT_IN_USE),
                    errmsg("%s: request key \"%s\" names claim %lld of semaphore \"%s\", whose "
                           "lease ran out while a transaction holds its row",
                           function, text_to_cstring(request.request_key),
                           static_cast<long long>(row.id), text_to_cstring(request.name)),
                    errhint("Ask again once that transaction (a fence, most likely) has ended.")));
    pg_unreachable();
}

// What a claim row is, in a message's words: a semaphore's lease, or a rate limit's grant (its
// lease is its window).
char *kind_of(bool rate, int64 lease) {
    return rate ? psprintf("a grant of a rate limit of per = %s", interval_text(lease))
                : pstrdup("a lease of a semaphore");
}

// A retry that asks for a semaphore's slots where its key's claim holds a rate limit's grant, or
// for a grant of another window (sem_claim_all's pers), is another request under the same key:
// answered, it would count on slots it does not have, or on a window it did not ask for.
// A window left to the declaration (per_declared) matches the window the grant was made with: the
// declared per may have changed since.
void require_same_kind(const char *function, const SlotRequest &request, const ClaimRow &row) {
    if (row.rate == request.rate &&
        (!row.rate || row.lease == request.lease || request.per_declared))
        return;
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("%s: request key \"%s\" names claim %lld, made with other arguments on \"%s\"",
                    function, text_to_cstring(request.request_key), static_cast<long long>(row.id),
                    text_to_cstring(request.name)),
             errdetail("That claim holds %s there; this call asks for %s.",
                       kind_of(row.rate, row.lease), kind_of(request.rate, request.lease)),
             errhint("A retry must repeat its first attempt's arguments; use another key for "
                     "another claim.")));
}

// A retry repeats its first attempt. One whose n or permits differ is another request under the
// same key: the key's claim would answer it with slots it did not ask for (fewer permits than it
// counts on, or a slot at or above its n), so it is refused rather than answered. A retry that
// leaves n to the declaration (request.n is 0 here) matches whatever n the declaration said when
// the claim was made: it may have changed since.
void require_same_request(const char *function, const SlotRequest &request, const ClaimRow &row) {
    require_same_kind(function, request, row);
    if ((request.n == 0 || row.n == request.n) && row.permits == request.permits) return;
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("%s: request key \"%s\" names claim %lld of semaphore \"%s\", made "
                    "with other arguments",
                    function, text_to_cstring(request.request_key), static_cast<long long>(row.id),
                    text_to_cstring(request.name)),
             errdetail("That claim was made with n = %d and permits = %d; this call asks for "
                       "n = %d and permits = %d.",
                       row.n, row.permits, request.n, request.permits),
             errhint("A retry must repeat its first attempt's n and permits; use another key for "
                     "another claim.")));
    pg_unreachable();
}

// Whether claim `id` has more rows than `rows` -- slots on semaphores the caller did not name: a
// key given to a claim on several semaphores (sem_claim_all) names all of it, and a retry that
// names only some of them is not that claim's first attempt.
bool has_more_rows_than(ClaimsTable *table, int64 id, int64 rows) {
    const int room = static_cast<int>(Min(rows, static_cast<int64>(core::kMaxPermits))) + 1;
    ClaimRow *found = static_cast<ClaimRow *>(palloc(sizeof(ClaimRow) * room));
    const int count = claims_find_all(table, id, found, room);
    pfree(found);
    return count > rows;
}

[[noreturn]] void raise_key_of_larger_claim(const char *function, const text *key, int64 id,
                                            int named) {
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("%s: request key \"%s\" names claim %lld, which holds semaphores this call "
                    "does not name",
                    function, text_to_cstring(key), static_cast<long long>(id)),
             errdetail("This call names %d semaphore%s; that claim was made on more.", named,
                       named == 1 ? "" : "s"),
             errhint("A retry must name the semaphores of its first attempt; use another key "
                     "for another claim.")));
    pg_unreachable();
}

}  // namespace

namespace {

// The key's live claim on request.name, in *keyed; false when the key is free (a claim of it that
// ran out unrecorded is recorded as timed out on the way). The key's lock is held.
bool find_keyed_claim(const char *function, ClaimsTable *table, const SlotRequest &request,
                      Oid role, ClaimRow *keyed) {
    for (int attempt = 0;; ++attempt) {
        if (attempt == kMaxRowRetries)
            ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                            errmsg("pgsem: the claim of a request key kept changing")));
        if (!claims_find_keyed(table, request.name, role, request.request_key, keyed)) return false;
        // Another transaction is changing the key's row: releasing it, renewing it, or -- its
        // lease having run out -- a claimer recording its timeout. What the key names depends
        // on how that ends (a release that commits frees the key; one that rolls back leaves the
        // claim live), and neither an answer nor a new keyed row can be right until then: wait
        // for that transaction, taking no lock on the row (lock_timeout and the deadlock
        // detector apply), and look again.
        if (keyed->change_in_progress) {
            claims_wait_for_changer(table, *keyed);
            continue;
        }
        // The key's row is its claim's lowest slot's (on this semaphore); the claim's rows share
        // their expiry and end together (a release ends them all, only an expiry lets a claimer
        // reap one), so the key's row speaks for the claim. Nobody else's insert can be in
        // flight: the key's lock waited for it. This transaction's own shows as committed.
        const TimestampTz now = GetCurrentTimestamp();
        const core::ClaimRowState state = claim_state(*keyed);
        const core::ClaimStatus status = PGSEM_NOTHROW(core::status_of(state, now));
        if (status == core::ClaimStatus::kLive || status == core::ClaimStatus::kUncommitted) {
            require_same_request(function, request, *keyed);
            return true;
        }
        const Reap outcome = reap(table, keyed->tid, now);
        if (outcome == Reap::kVacant) return false;
        if (outcome == Reap::kHeld) raise_key_in_use(function, request, *keyed);
    }
}

}  // namespace

bool recall_keyed_claim(const SlotRequest &request, SlotGrant *grant) {
    const Oid role = GetUserId();
    count_request_key_locks(1);
    lock_request_key(request.name, role, request.request_key);
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    ClaimRow keyed;
    const bool recalled = find_keyed_claim("sem_claim()", &table, request, role, &keyed);
    if (recalled && has_more_rows_than(&table, keyed.id, request.permits))
        raise_key_of_larger_claim("sem_claim()", request.request_key, keyed.id, 1);
    if (recalled) *grant = SlotGrant{true, keyed.slot, keyed.id, 0, request.permits};
    claims_close_unlocking(&table);
    return recalled;
}

bool set_member_keyed(const SetRequest &set, int32 m) {
    if (!set.members[m].rate) return true;
    int64 longest = 0;
    for (int32 i = 0; i < set.count; ++i) {
        if (!set.members[i].rate) return false;  // the semaphores carry it
        longest = Max(longest, set.members[i].lease);
    }
    return set.members[m].lease == longest;
}

namespace {

// The grant of claim `id` on an unkeyed rate member of a set (set_member_keyed), which a retry
// that found the claim by its keyed members must also have asked for: the claim's rows on that
// name, one per permit, a grant of the same window. Its lowest slot into *slot. The rows are read
// ended or not: a grant whose window has passed was still this claim's.
void require_rate_member(const char *function, ClaimsTable *table, const SlotRequest &member,
                         int64 id, int32 *slot) {
    const int room = member.permits + 1;
    ClaimRow *rows = static_cast<ClaimRow *>(palloc(sizeof(ClaimRow) * room));
    const int count = claims_find_on(table, id, member.name, rows, room);
    if (count == 0)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("%s: request key \"%s\" names claim %lld, which holds nothing of rate "
                        "limit \"%s\"",
                        function, text_to_cstring(member.request_key), static_cast<long long>(id),
                        text_to_cstring(member.name)),
                 errhint("A retry must name the semaphores and rate limits of its first attempt; "
                         "use another key for another claim.")));
    require_same_kind(function, member, rows[0]);
    if ((member.n != 0 && rows[0].n != member.n) || count != member.permits)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("%s: request key \"%s\" names claim %lld, made with other arguments on "
                        "\"%s\"",
                        function, text_to_cstring(member.request_key), static_cast<long long>(id),
                        text_to_cstring(member.name)),
                 errdetail("That claim was granted %d permits there with n = %d; this call asks "
                           "for %d with n = %d.",
                           count, rows[0].n, member.permits, member.n),
                 errhint("A retry must repeat its first attempt's arguments; use another key "
                         "for another claim.")));
    *slot = rows[0].slot;
    pfree(rows);
}

}  // namespace

bool recall_keyed_set(const SetRequest &set, SetGrant *grant) {
    constexpr const char *kFunction = "sem_claim_all()";
    const Oid role = GetUserId();
    // The keys' locks in the set's order, as every claimer of the set takes them.
    count_request_key_locks(set.count);
    for (int32 m = 0; m < set.count; ++m)
        lock_request_key(set.members[m].name, role, set.members[m].request_key);
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    // A set of rate limits alone has its key on the grants of its longest window, as the windows
    // were at its first attempt: a declared per changed since may make another member the longest
    // now, so such a set looks on every member, and the first that has it is the keyed one.
    bool rate_only = true;
    for (int32 m = 0; m < set.count; ++m) rate_only = rate_only && set.members[m].rate;
    bool *keyed_here = static_cast<bool *>(palloc0(sizeof(bool) * set.count));
    int32 keyed_members = 0;
    int32 found = 0;
    int64 id = 0;
    bool one_claim = true;
    int64 permit_sum = 0;
    for (int32 m = 0; m < set.count; ++m) permit_sum += set.members[m].permits;
    for (int32 m = 0; m < set.count && !(rate_only && found > 0); ++m) {
        ClaimRow keyed;
        if (!rate_only && !set_member_keyed(set, m)) continue;
        if (!rate_only) ++keyed_members;
        if (!find_keyed_claim(kFunction, &table, set.members[m], role, &keyed)) continue;
        one_claim = one_claim && (found == 0 || keyed.id == id);
        id = keyed.id;
        grant->slots[m] = keyed.slot;
        keyed_here[m] = true;
        ++found;
    }
    if (rate_only) keyed_members = 1;
    const bool whole = found == keyed_members && one_claim;
    const bool larger = whole && has_more_rows_than(&table, id, permit_sum);
    // The key's claim: a retry answered with it must have asked for its rate grants too.
    if (whole && !larger)
        for (int32 m = 0; m < set.count; ++m)
            if (!keyed_here[m])
                require_rate_member(kFunction, &table, set.members[m], id, &grant->slots[m]);
    claims_close_unlocking(&table);
    if (found == 0) return false;
    if (larger) raise_key_of_larger_claim(kFunction, set.members[0].request_key, id, set.count);
    // The key names a claim on some of these semaphores only, or several claims: not this set's
    // first attempt (a set's claim holds all of its members or none, and ends on all at once).
    if (!whole)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("%s: request key \"%s\" names claims that are not this set", kFunction,
                        text_to_cstring(set.members[0].request_key)),
                 errdetail("It names live claims on %d of the %d semaphores%s.", found,
                           keyed_members, one_claim ? "" : ", and more than one claim"),
                 errhint("A retry must name the semaphores of its first attempt; use another key "
                         "for another claim.")));
    grant->granted = true;
    grant->claim_id = id;
    return true;
}

}  // namespace pgsem
