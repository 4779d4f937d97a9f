#include "pg/semaphore.hpp"

#include "core/arguments.hpp"
#include "core/slot_choice.hpp"
#include "pg/boundary.hpp"
#include "pg/claims_table.hpp"
#include "pg/history_pruning.hpp"
#include "pg/lock_tags.hpp"
#include "pg/statement_depth.hpp"

namespace pgsem {

// The core objects below live in frames that call into Postgres (boundary rule 1).
static_assert(std::is_trivially_destructible_v<core::LowestFreeSlot>);
static_assert(std::is_trivially_destructible_v<core::ProbeSequence>);

namespace {

// A claim row read while another transaction changes it may need a second look; past this many,
// something is looping and an error is better than a spin.
constexpr int kMaxRetries = 100;
// One slot holds at most one committed live row; a few more versions can be in flight.
constexpr int kMaxRowsPerSlot = 8;

core::Occupancy occupancy(const ClaimRow &row, TimestampTz now) {
    const core::ClaimRowState state{row.ended, row.expires_at, row.insert_in_progress,
                                    row.change_in_progress};
    return cpp_call([&] { return core::classify(state, now); });
}

void require_writable(const char *function) {
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("%s cannot run on a hot standby", function),
                        errdetail("Semaphore state lives in a table only the primary can write."),
                        errhint("Connect to the primary.")));
    PreventCommandIfReadOnly(function);
}

// A claim may be released, renewed or fenced by the role that made it, its members and
// superusers.
void require_may_act(const char *function, const ClaimRow &row) {
    if (has_privs_of_role(GetUserId(), row.holder_role)) return;
    const char *owner = GetUserNameFromId(row.holder_role, true);
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("%s: permission denied for claim %lld", function,
                           static_cast<long long>(row.id)),
                    errdetail("The claim belongs to role %s.", owner != nullptr ? owner : "?"),
                    errhint("Only that role, its members and superusers may act on it.")));
}

// ---- claiming ------------------------------------------------------------------------------

// Under the slot lock: re-reads the slot, records an expired holder as timed out, inserts the
// claim. False when the slot turns out to be held after all.
bool take_locked_slot(ClaimsTable *table, const ClaimRequest &request, int32 slot,
                      int64 *claim_id) {
    for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
        const TimestampTz now = GetCurrentTimestamp();
        ItemPointerData expired[kMaxRowsPerSlot];
        int expired_count = 0;
        bool held = false;
        SlotScan scan;
        ClaimRow row;
        slot_scan_begin(table, &scan, request.name, slot, slot + 1);
        while (!held && slot_scan_next(table, &scan, &row)) {
            const core::Occupancy occ = occupancy(row, now);
            if (occ == core::Occupancy::kHeld || expired_count == kMaxRowsPerSlot)
                held = true;
            else if (occ == core::Occupancy::kExpired)
                expired[expired_count++] = row.tid;
        }
        slot_scan_end(&scan);
        if (held) return false;

        bool changed_meanwhile = false;
        for (int i = 0; i < expired_count && !changed_meanwhile; ++i) {
            ClaimRow locked;
            // Never wait: whoever holds this row lock (a fence, a late release) keeps the slot.
            const TM_Result result =
                claims_lock(table, &expired[i], LockTupleExclusive, LockWaitSkip, &locked);
            if (result == TM_Updated || result == TM_Deleted) {
                changed_meanwhile = true;
            } else if (result != TM_Ok) {
                return false;
            } else if (!locked.ended) {
                if (locked.expires_at > now) return false;  // renewed just before we locked it
                claims_end(table, locked.expires_at, Outcome::kTimedOut);
            }
        }
        if (changed_meanwhile) continue;  // read the slot again

        const TimestampTz granted = GetCurrentTimestamp();
        NewClaim claim{};
        // The id is drawn inside the slot lock, so ids grow in the order claims are granted.
        claim.id = claims_next_id(table);
        claim.name = request.name;
        claim.slot = slot;
        claim.slots = request.slots;
        claim.claimed_at = granted;
        claim.lease_micros = request.lease_micros;
        claim.expires_at = cpp_call([&] { return core::lease_end(granted, request.lease_micros); });
        claims_insert(table, &claim);
        *claim_id = claim.id;
        return true;
    }
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("sem_claim(): slot %d kept changing under the slot lock", slot)));
    return false;
}

bool try_take_slot(ClaimsTable *table, const ClaimRequest &request, int32 slot, int64 *claim_id) {
    LOCKTAG tag;
    slot_locktag(&tag, request.name, slot);
    (void)LockAcquire(&tag, ExclusiveLock, false, false);
    const bool taken = take_locked_slot(table, request, slot, claim_id);
    // Released now rather than at commit: the row we inserted speaks for the slot from here on.
    (void)LockRelease(&tag, ExclusiveLock, false);
    return taken;
}

bool looks_free(ClaimsTable *table, const ClaimRequest &request, int32 slot, TimestampTz now) {
    SlotScan scan;
    ClaimRow row;
    bool held = false;
    slot_scan_begin(table, &scan, request.name, slot, slot + 1);
    while (!held && slot_scan_next(table, &scan, &row))
        held = occupancy(row, now) == core::Occupancy::kHeld;
    slot_scan_end(&scan);
    return !held;
}

// The lowest slot in [first, request.slots) that no row holds, or -1.
int32 lowest_free_slot(ClaimsTable *table, const ClaimRequest &request, int32 first,
                       TimestampTz now) {
    core::LowestFreeSlot finder(request.slots, first);
    SlotScan scan;
    ClaimRow row;
    int32 answer = -1;
    slot_scan_begin(table, &scan, request.name, first, request.slots);
    while (answer < 0 && slot_scan_next(table, &scan, &row)) {
        const bool held = occupancy(row, now) == core::Occupancy::kHeld;
        const std::optional<int32> found = cpp_call([&] { return finder.observe(row.slot, held); });
        if (found.has_value()) answer = *found;
    }
    slot_scan_end(&scan);
    if (answer < 0) {
        const std::optional<int32> found = cpp_call([&] { return finder.finish(); });
        if (found.has_value()) answer = *found;
    }
    return answer;
}

int64 claim_in(ClaimsTable *table, const ClaimRequest &request, TimestampTz now) {
    int64 claim_id = 0;
    if (request.slots > core::kOrderedScanMaxSlots) {
        core::ProbeSequence probes(request.slots, pg_prng_uint64(&pg_global_prng_state));
        for (int i = 0; i < core::kRandomProbes; ++i) {
            CHECK_FOR_INTERRUPTS();
            const int32 slot = cpp_call([&] { return probes.next(); });
            if (looks_free(table, request, slot, now) &&
                try_take_slot(table, request, slot, &claim_id))
                return claim_id;
        }
    }
    for (int32 first = 0; first < request.slots;) {
        CHECK_FOR_INTERRUPTS();
        const int32 slot = lowest_free_slot(table, request, first, now);
        if (slot < 0) break;
        if (try_take_slot(table, request, slot, &claim_id)) return claim_id;
        first = slot + 1;  // someone else took it first
    }
    return 0;
}

// ---- acting on one claim ---------------------------------------------------------------------

enum class Found : unsigned char { kNone, kEnded, kNotCommitted, kExpired, kLive };

Found state_of(const ClaimRow &row, TimestampTz now) {
    if (row.ended) return Found::kEnded;
    if (row.insert_in_progress) return Found::kNotCommitted;
    return row.expires_at > now ? Found::kLive : Found::kExpired;
}

// Records an expired claim as timed out if nobody holds its row; never waits.
void record_timeout(ClaimsTable *table, const ClaimRow &row) {
    ClaimRow locked;
    if (claims_lock(table, const_cast<ItemPointer>(&row.tid), LockTupleExclusive, LockWaitSkip,
                    &locked) != TM_Ok)
        return;
    if (!locked.ended && locked.expires_at <= GetCurrentTimestamp())
        claims_end(table, locked.expires_at, Outcome::kTimedOut);
}

// Locks a live claim's row, waiting for whoever holds it -- unless its lease has run out
// meanwhile: then the holder may be a claimer reaping it inside a long transaction, and there is
// nothing to wait for. Returns TM_WouldBlock in that case.
TM_Result lock_live(ClaimsTable *table, const ClaimRow &row, LockTupleMode mode, ClaimRow *locked) {
    auto *tid = const_cast<ItemPointer>(&row.tid);
    const TM_Result first = claims_lock(table, tid, mode, LockWaitSkip, locked);
    if (first != TM_WouldBlock) return first;
    if (row.expires_at <= GetCurrentTimestamp()) return TM_WouldBlock;
    return claims_lock(table, tid, mode, LockWaitBlock, locked);
}

enum class Act : unsigned char { kRelease, kRenew, kFence };

struct ActResult {
    bool done;     // released / renewed / fenced
    Found found;   // what stood in the way otherwise
    ClaimRow row;  // the row as last seen
};

// A release that is a transaction of its own commits without waiting for its WAL flush, so the
// slot is free a flush sooner. This cannot let a second holder in after a crash: the next claim
// of the slot commits synchronously, and flushing its commit record flushes every earlier record,
// this release's included. A crash before that only leaves the claim held until its lease ends.
// Inside a larger transaction the caller's own durability settings stand.
void commit_release_without_waiting_if_alone(bool alone) {
    if (!alone) return;
    (void)set_config_option("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION,
                            GUC_ACTION_LOCAL, true, 0, false);
}

ActResult act_on_claim(const char *function, int64 id, Act act, bool has_lease,
                       int64 lease_micros) {
    require_writable(function);
    // Decided before this call writes anything: no earlier write, and nothing after this statement.
    const bool alone =
        transaction_ends_with_statement() && !TransactionIdIsValid(GetTopTransactionIdIfAny());
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    ActResult out{false, Found::kNone, {}};
    for (int attempt = 0;; ++attempt) {
        if (attempt == kMaxRetries)
            ereport(ERROR,
                    (errcode(ERRCODE_INTERNAL_ERROR),
                     errmsg("%s: claim %lld kept changing", function, static_cast<long long>(id))));
        ClaimRow row;
        if (!claims_find(&table, id, &row)) break;
        out.row = row;
        require_may_act(function, row);
        out.found = state_of(row, GetCurrentTimestamp());
        if (out.found == Found::kExpired) record_timeout(&table, row);
        if (out.found != Found::kLive) break;

        ClaimRow locked;
        const TM_Result result = lock_live(
            &table, row, act == Act::kFence ? LockTupleShare : LockTupleExclusive, &locked);
        if (result == TM_Updated || result == TM_Deleted) continue;  // read it again
        if (result == TM_WouldBlock) {
            out.found = Found::kExpired;
            break;
        }
        if (result != TM_Ok) {
            out.found = Found::kNotCommitted;
            break;
        }
        const TimestampTz now = GetCurrentTimestamp();
        out.row = locked;
        out.found = state_of(locked, now);
        if (out.found == Found::kExpired && act != Act::kFence)
            claims_end(&table, locked.expires_at, Outcome::kTimedOut);
        if (out.found != Found::kLive) break;

        switch (act) {
            case Act::kRelease:
                claims_end(&table, now, Outcome::kReleased);
                commit_release_without_waiting_if_alone(alone);
                break;
            case Act::kRenew: {
                const int64 lease = has_lease ? lease_micros : locked.lease_micros;
                claims_extend(&table, cpp_call([&] { return core::lease_end(now, lease); }));
                ForceSyncCommit();  // a renewal lost in a crash would shorten a lease in use
                break;
            }
            case Act::kFence:
                break;  // the share lock is the fence
        }
        out.done = true;
        break;
    }
    claims_close(&table);
    return out;
}

}  // namespace

int64 semaphore_claim(const ClaimRequest &request) {
    require_writable("sem_claim()");
    const TimestampTz now = GetCurrentTimestamp();
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    const int64 id = claim_in(&table, request, now);
    // A claim lost in a crash after its holder saw it commit would let a second holder in: the
    // commit must be durable even where the session runs with synchronous_commit = off.
    if (id != 0) ForceSyncCommit();
    prune_history_sometimes(&table, now);
    claims_close(&table);
    return id;
}

bool semaphore_release(int64 id) {
    return act_on_claim("sem_release()", id, Act::kRelease, false, 0).done;
}

bool semaphore_renew(int64 id, bool has_lease, int64 lease_micros) {
    return act_on_claim("sem_renew()", id, Act::kRenew, has_lease, lease_micros).done;
}

bool semaphore_held(int64 id) {
    ClaimsTable table;
    claims_open(&table, AccessShareLock);
    ClaimRow row;
    bool held = false;
    if (claims_find(&table, id, &row)) {
        const Found found = state_of(row, GetCurrentTimestamp());
        // An uncommitted claim of another transaction holds its slot already.
        held = found == Found::kLive ||
               (found == Found::kNotCommitted && row.expires_at > GetCurrentTimestamp());
    }
    claims_close(&table);
    return held;
}

void semaphore_fence(int64 id) {
    warn_if_statement_scoped("sem_fence()",
                             "Call it between BEGIN and COMMIT, in the transaction that writes "
                             "what the claim protects.");
    const ActResult result = act_on_claim("sem_fence()", id, Act::kFence, false, 0);
    if (result.done) return;
    const long long shown = static_cast<long long>(id);
    switch (result.found) {
        case Found::kNone:
            ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                            errmsg("sem_fence(): there is no claim %lld", shown)));
            break;
        case Found::kEnded:
            ereport(ERROR,
                    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                     errmsg("sem_fence(): claim %lld is not held", shown),
                     result.row.released ? errdetail("It was released at %s.",
                                                     timestamptz_to_str(result.row.ended_at))
                                         : errdetail("Its lease ran out at %s.",
                                                     timestamptz_to_str(result.row.ended_at))));
            break;
        case Found::kExpired:
            ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                            errmsg("sem_fence(): claim %lld is not held", shown),
                            errdetail("Its lease ran out at %s.",
                                      timestamptz_to_str(result.row.expires_at))));
            break;
        default:
            ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                            errmsg("sem_fence(): claim %lld is not held", shown),
                            errdetail("The transaction that made it has not committed.")));
            break;
    }
}

int64 semaphore_prune_history(int64 max_rows) {
    require_writable("sem_prune_history()");
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    const int64 pruned = prune_history(&table, GetCurrentTimestamp(), max_rows);
    claims_close(&table);
    return pruned;
}

}  // namespace pgsem
