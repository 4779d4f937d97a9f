#include "core/arguments.hpp"
#include "core/slot_choice.hpp"
#include "pg/boundary.hpp"
#include "pg/claims_table.hpp"
#include "pg/commit_durability.hpp"
#include "pg/history_pruning.hpp"
#include "pg/lock_tags.hpp"
#include "pg/locked_claim.hpp"
#include "pg/semaphore.hpp"
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

core::ClaimRowState state_of(const ClaimRow &row) {
    return core::ClaimRowState{row.ended, row.expires_at, row.insert_in_progress,
                               row.change_in_progress};
}

core::Occupancy occupancy(const ClaimRow &row, TimestampTz now) {
    const core::ClaimRowState state = state_of(row);
    return PGSEM_NOTHROW(core::classify(state, now));
}

core::ClaimStatus status(const ClaimRow &row, TimestampTz now) {
    const core::ClaimRowState state = state_of(row);
    return PGSEM_NOTHROW(core::status_of(state, now));
}

void require_writable(const char *function) {
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("%s cannot run on a hot standby", function),
                        errdetail("Semaphore state lives in a table only the primary can write."),
                        errhint("Connect to the primary.")));
    PreventCommandIfReadOnly(function);
}

// A claim may be released, renewed or fenced by the role that made it, roles that have its
// privileges (members that inherit them) and superusers.
void require_may_act(const char *function, const ClaimRow &row) {
    if (has_privs_of_role(GetUserId(), row.holder_role)) return;
    const char *owner = GetUserNameFromId(row.holder_role, true);
    ereport(
        ERROR,
        (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
         errmsg("%s: permission denied for claim %lld", function, static_cast<long long>(row.id)),
         owner != nullptr ? errdetail("The claim belongs to role %s.", owner)
                          : errdetail("The claim belongs to a role that no longer exists (OID %u).",
                                      row.holder_role),
         errhint("Only that role, roles with its privileges and superusers may act "
                 "on it.")));
}

// Runs `write` under the lock-manager lock of one slot: the lock every claimer of the slot takes
// between reading the slot and inserting into it.
template <typename Write>
void under_slot_lock(const text *name, int32 slot, Write &&write) {
    static_assert(std::is_trivially_destructible_v<std::decay_t<Write>>);
    LOCKTAG tag;
    slot_locktag(&tag, name, slot);
    (void)LockAcquire(&tag, ExclusiveLock, false, false);
    write();
    // Released now rather than at commit: the rows written speak for the slot from here on.
    (void)LockRelease(&tag, ExclusiveLock, false);
}

// ---- timeouts ------------------------------------------------------------------------------

enum class Reap : unsigned char {
    kVacant,   // recorded as timed out now, or found ended already
    kHeld,     // someone holds the row (a fence, a release, a renewal): leave it alone
    kChanged,  // the row changed since it was read: read it again
};

// Records an expired claim as timed out, never waiting for a row lock.
Reap reap(ClaimsTable *table, ItemPointerData tid, TimestampTz now) {
    LockedClaim locked{};
    switch (claims_lock(table, tid, LockTupleExclusive, LockWaitSkip, &locked)) {
        case TM_Ok:
            break;
        case TM_Updated:
        case TM_Deleted:
            return Reap::kChanged;
        default:
            return Reap::kHeld;
    }
    if (locked.row.ended) return Reap::kVacant;
    // TM_Ok locks the very version that was read (a newer one gives TM_Updated), so the lease is
    // the one that ran out. Checked anyway: better a slot left alone than a live claim reaped.
    if (locked.row.expires_at > now) return Reap::kHeld;
    claims_end(table, locked, locked.row.expires_at, Outcome::kTimedOut);
    return Reap::kVacant;
}

// ---- claiming ------------------------------------------------------------------------------

// The rows of one slot: whether any holds it, and which expired ones a claimer would reap.
struct SlotView {
    bool held;
    int expired_count;
    ItemPointerData expired[kMaxRowsPerSlot];
};

void read_slot(ClaimsTable *table, const ClaimRequest &request, int32 slot, TimestampTz now,
               SlotView *view) {
    view->held = false;
    view->expired_count = 0;
    ClaimScan scan;
    ClaimRow row;
    slot_scan_begin(table, &scan, request.name, slot, slot + 1);
    while (!view->held && claim_scan_next(&scan, &row)) {
        const core::Occupancy occ = occupancy(row, now);
        if (occ == core::Occupancy::kHeld || view->expired_count == kMaxRowsPerSlot)
            view->held = true;
        else if (occ == core::Occupancy::kExpired)
            view->expired[view->expired_count++] = row.tid;
    }
    claim_scan_end(&scan);
}

// Under the slot lock: reads the slot again, records expired holders as timed out, inserts the
// claim. False when the slot turns out to be held after all.
bool take_locked_slot(ClaimsTable *table, const ClaimRequest &request, int32 slot,
                      int64 *claim_id) {
    for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
        const TimestampTz now = GetCurrentTimestamp();
        SlotView view;
        read_slot(table, request, slot, now, &view);
        if (view.held) return false;
        Reap outcome = Reap::kVacant;
        for (int i = 0; i < view.expired_count && outcome == Reap::kVacant; ++i)
            outcome = reap(table, view.expired[i], now);
        if (outcome == Reap::kHeld) return false;
        if (outcome == Reap::kChanged) continue;

        NewClaim claim{};
        // The id is drawn inside the slot lock, so ids grow in the order claims are granted;
        // the grant time is taken after it, so claim times follow ids too.
        claim.id = claims_next_id(table);
        claim.name = request.name;
        claim.slot = slot;
        claim.n = request.n;
        claim.claimed_at = GetCurrentTimestamp();
        claim.lease = request.lease;
        claim.expires_at = PGSEM_NOTHROW(core::lease_end(claim.claimed_at, request.lease));
        claims_insert(table, claim);
        *claim_id = claim.id;
        return true;
    }
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("sem_claim(): slot %d kept changing under the slot lock", slot)));
    return false;
}

bool try_take_slot(ClaimsTable *table, const ClaimRequest &request, int32 slot, int64 *claim_id) {
    bool taken = false;
    under_slot_lock(request.name, slot,
                    [&] { taken = take_locked_slot(table, request, slot, claim_id); });
    return taken;
}

bool looks_free(ClaimsTable *table, const ClaimRequest &request, int32 slot, TimestampTz now) {
    SlotView view;
    read_slot(table, request, slot, now, &view);
    return !view.held;
}

// The lowest slot in [first, request.n) that no row holds, or -1.
int32 lowest_free_slot(ClaimsTable *table, const ClaimRequest &request, int32 first,
                       TimestampTz now) {
    core::LowestFreeSlot finder(request.n, first);
    ClaimScan scan;
    ClaimRow row;
    int32 answer = -1;
    slot_scan_begin(table, &scan, request.name, first, request.n);
    while (answer < 0 && claim_scan_next(&scan, &row)) {
        const bool held = occupancy(row, now) == core::Occupancy::kHeld;
        const std::optional<int32> found = PGSEM_NOTHROW(finder.observe(row.slot, held));
        if (found.has_value()) answer = *found;
    }
    claim_scan_end(&scan);
    if (answer < 0) {
        const std::optional<int32> found = PGSEM_NOTHROW(finder.finish());
        if (found.has_value()) answer = *found;
    }
    return answer;
}

int64 claim_in(ClaimsTable *table, const ClaimRequest &request, TimestampTz now) {
    int64 claim_id = 0;
    if (request.n <= core::kLockedScanMaxSlots) {
        for (int32 slot = 0; slot < request.n; ++slot)
            if (try_take_slot(table, request, slot, &claim_id)) return claim_id;
        return 0;
    }
    if (request.n > core::kOrderedScanMaxSlots) {
        core::ProbeSequence probes(request.n, pg_prng_uint64(&pg_global_prng_state));
        for (int i = 0; i < core::kRandomProbes; ++i) {
            CHECK_FOR_INTERRUPTS();
            const int32 slot = PGSEM_NOTHROW(probes.next());
            if (looks_free(table, request, slot, now) &&
                try_take_slot(table, request, slot, &claim_id))
                return claim_id;
        }
    }
    for (int32 first = 0; first < request.n;) {
        CHECK_FOR_INTERRUPTS();
        const int32 slot = lowest_free_slot(table, request, first, now);
        if (slot < 0) break;
        if (try_take_slot(table, request, slot, &claim_id)) return claim_id;
        first = slot + 1;  // someone else took it first
    }
    return 0;
}

// ---- acting on one claim ---------------------------------------------------------------------

// Locks a live claim's row, waiting for whoever holds it -- unless its lease has run out
// meanwhile: then the holder may be a claimer reaping it inside a long transaction, and there is
// nothing to wait for. Returns TM_WouldBlock in that case. (A renewal in flight counts with its
// new expiry: claims_find folded it into row.expires_at.)
TM_Result lock_live(ClaimsTable *table, const ClaimRow &row, LockTupleMode mode,
                    LockedClaim *locked) {
    const TM_Result first = claims_lock(table, row.tid, mode, LockWaitSkip, locked);
    if (first != TM_WouldBlock) return first;
    if (row.expires_at <= GetCurrentTimestamp()) return TM_WouldBlock;
    return claims_lock(table, row.tid, mode, LockWaitBlock, locked);
}

enum class Act : unsigned char { kRelease, kRenew, kFence };

struct ActResult {
    bool done;                 // released / renewed / fenced
    bool found;                // the claim exists
    core::ClaimStatus status;  // what stood in the way otherwise
    ClaimRow row;              // the row as last seen
};

// Records the timeout of an expired claim on the way out of a release or renewal (not a fence:
// it is about to raise an error that would roll the record back).
void record_timeout(ClaimsTable *table, const ClaimRow &row, Act act) {
    if (act == Act::kFence) return;
    (void)reap(table, row.tid, GetCurrentTimestamp());
}

void apply(ClaimsTable *table, Act act, const LockedClaim &locked, TimestampTz now, bool has_lease,
           int64 new_lease) {
    switch (act) {
        case Act::kRelease:
            claims_end(table, locked, now, Outcome::kReleased);
            break;
        case Act::kRenew: {
            const int64 lease = has_lease ? new_lease : locked.row.lease;
            const TimestampTz expires = PGSEM_NOTHROW(core::lease_end(now, lease));
            require_durable_commit();  // a renewal lost in a crash would shorten a lease in use
            // The renewed row may not fit its page and get a new index entry: claimers of the
            // slot must not read the slot halfway through that.
            under_slot_lock(locked_claim_name(locked), locked.row.slot,
                            [&] { claims_extend(table, locked, expires); });
            break;
        }
        case Act::kFence:
            break;  // the share lock is the fence
    }
}

ActResult act_on_claim(const char *function, int64 id, Act act, bool has_lease, int64 new_lease) {
    require_writable(function);
    // Everything a release or renewal writes -- the row lock, the release, a timeout recorded
    // on the way -- may be lost in a crash without harm; a renewal that succeeds says otherwise
    // (require_durable_commit). A fence is a row lock the caller's own writes depend on.
    const bool losable = act != Act::kFence;
    if (losable) before_losable_write();
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    ActResult out{false, false, core::ClaimStatus::kEnded, {}};
    for (int attempt = 0;; ++attempt) {
        if (attempt == kMaxRetries)
            ereport(ERROR,
                    (errcode(ERRCODE_INTERNAL_ERROR),
                     errmsg("%s: claim %lld kept changing", function, static_cast<long long>(id))));
        ClaimRow row;
        out.found = claims_find(&table, id, &row);
        if (!out.found) break;
        out.row = row;
        require_may_act(function, row);
        out.status = status(row, GetCurrentTimestamp());
        if (out.status == core::ClaimStatus::kExpired) record_timeout(&table, row, act);
        if (out.status != core::ClaimStatus::kLive) break;

        LockedClaim locked{};
        const TM_Result result = lock_live(
            &table, row, act == Act::kFence ? LockTupleShare : LockTupleExclusive, &locked);
        if (result == TM_Updated || result == TM_Deleted) continue;  // read it again
        if (result == TM_WouldBlock) {
            out.status = core::ClaimStatus::kExpired;
            break;
        }
        if (result != TM_Ok) {
            out.status = core::ClaimStatus::kUncommitted;
            break;
        }
        const TimestampTz now = GetCurrentTimestamp();
        out.row = locked.row;
        out.status = status(locked.row, now);
        if (out.status == core::ClaimStatus::kExpired) record_timeout(&table, locked.row, act);
        if (out.status != core::ClaimStatus::kLive) break;
        apply(&table, act, locked, now, has_lease, new_lease);
        out.done = true;
        break;
    }
    claims_close(&table);
    if (losable) after_losable_write();
    return out;
}

}  // namespace

int64 semaphore_claim(const ClaimRequest &request) {
    require_writable("sem_claim()");
    const TimestampTz now = GetCurrentTimestamp();
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    const int64 id = claim_in(&table, request, now);
    // A claim lost in a crash after its holder saw it commit would let a second holder in.
    if (id != 0) require_durable_commit();
    prune_history_sometimes(&table, now);
    claims_close(&table);
    return id;
}

bool semaphore_release(int64 id) {
    return act_on_claim("sem_release()", id, Act::kRelease, false, 0).done;
}

bool semaphore_renew(int64 id, bool has_lease, int64 lease) {
    return act_on_claim("sem_renew()", id, Act::kRenew, has_lease, lease).done;
}

bool semaphore_held(int64 id) {
    ClaimsTable table;
    claims_open(&table, AccessShareLock);
    ClaimRow row;
    bool held = false;
    if (claims_find(&table, id, &row)) {
        const TimestampTz now = GetCurrentTimestamp();
        const core::ClaimStatus found = status(row, now);
        // An uncommitted claim of another transaction holds its slot already.
        held = found == core::ClaimStatus::kLive ||
               (found == core::ClaimStatus::kUncommitted && row.expires_at > now);
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
    if (!result.found)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("sem_fence(): there is no claim %lld", shown)));
    switch (result.status) {
        case core::ClaimStatus::kEnded:
            ereport(ERROR,
                    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                     errmsg("sem_fence(): claim %lld is not held", shown),
                     result.row.released ? errdetail("It was released at %s.",
                                                     timestamptz_to_str(result.row.ended_at))
                                         : errdetail("Its lease ran out at %s.",
                                                     timestamptz_to_str(result.row.ended_at))));
            break;
        case core::ClaimStatus::kExpired:
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
