#include "core/arguments.hpp"
#include "core/claim_tally.hpp"
#include "core/slot_choice.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/lease_ops.hpp"
#include "pg/claim/slot_search.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/locks.hpp"
#include "pg/xact/commit_durability.hpp"
#include "pg/xact/history_pruning.hpp"
#include "pg/xact/pending_stats.hpp"
#include "pg/xact/pending_wakes.hpp"
#include "pg/xact/statement_depth.hpp"

namespace pgsem {

namespace {

core::ClaimStatus status(const ClaimRow &row, TimestampTz now) {
    const core::ClaimRowState state = claim_state(row);
    return PGSEM_NOTHROW(core::status_of(state, now));
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

// A rate limit's grant (sem_rate, or a rate member of sem_claim_all) counts in its window until
// the window has passed it: released or renewed it would let more than n through in one window,
// fenced it would hold its permits past it.
void require_not_rate_grant(const char *function, const ClaimRow &row) {
    if (!row.rate) return;
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s: claim %lld is a rate limit's grant", function,
                           static_cast<long long>(row.id)),
                    errdetail("A rate limit's grant counts until its window has passed it, at %s; "
                              "nothing ends it before.",
                              timestamptz_to_str(row.expires_at))));
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
            (void)under_slot_mutex(locked_claim_name(locked), locked.row.slot, true,
                                   [&] { claims_extend(table, locked, expires); });
            break;
        }
        case Act::kFence:
            break;  // the share lock is the fence
    }
}

// A release or renewal done, for sem_stats' counters: once per name of the claim (its rows are
// in (name, slot) order), when this transaction commits.
void count_act(Act act, const LockedClaim *locked, int count, TimestampTz now) {
    if (act == Act::kFence) return;
    for (int i = 0; i < count; ++i) {
        const text *name = locked_claim_name(locked[i]);
        if (i > 0 && same_text(name, locked_claim_name(locked[i - 1]))) continue;
        core::ClaimTally delta;
        if (act == Act::kRelease)
            delta = PGSEM_NOTHROW(core::tally_release(now - locked[i].row.claimed_at));
        else
            delta.renewed = 1;
        count_event(name, delta, true);
    }
}

// What a claim of several rows (one per permit) is as a whole: ended if any row is (a claimer
// reaped one after the lease ran out), else in flight if any row is, else expired if any is (they
// share one expiry), else live.
core::ClaimStatus status_of_all(const ClaimRow *rows, int count, TimestampTz now) {
    bool in_flight = false;
    bool expired = false;
    for (int i = 0; i < count; ++i) {
        switch (status(rows[i], now)) {
            case core::ClaimStatus::kEnded:
                return core::ClaimStatus::kEnded;
            case core::ClaimStatus::kUncommitted:
                in_flight = true;
                break;
            case core::ClaimStatus::kExpired:
                expired = true;
                break;
            case core::ClaimStatus::kLive:
                break;
        }
    }
    if (in_flight) return core::ClaimStatus::kUncommitted;
    return expired ? core::ClaimStatus::kExpired : core::ClaimStatus::kLive;
}

// The rows of claim `id` (claims_find_all), in `*rows`: the caller's room for a few, or, for a
// claim of more permits, palloc'd room for the most a claim can have.
constexpr int kFewRows = 4;
int find_claim_rows(ClaimsTable *table, int64 id, ClaimRow **rows) {
    const int count = claims_find_all(table, id, *rows, kFewRows);
    if (count < kFewRows) return count;
    *rows = static_cast<ClaimRow *>(palloc(sizeof(ClaimRow) * core::kMaxPermits));
    return claims_find_all(table, id, *rows, core::kMaxPermits);
}

// A claim of sem_claim_all with rate members (pers) holds both: its semaphores' leases and its
// rate grants, under one id. An act on the claim is an act on its leases alone (moved to the
// front of `rows`, in their order; returns how many): its rate grants count until their windows
// have passed them, whatever happens to the rest (require_not_rate_grant says why), and their
// expiries are their windows', not the claim's. 0: the claim is rate grants only (sem_rate's).
int keep_leases(ClaimRow *rows, int count) {
    int leases = 0;
    for (int i = 0; i < count; ++i)
        if (!rows[i].rate) rows[leases++] = rows[i];
    return leases;
}

ActResult act_on_claim(const char *function, int64 id, Act act, bool has_lease, int64 new_lease) {
    require_primary(function, true);
    // Everything a release or renewal writes -- the row lock, the release, a timeout recorded
    // on the way -- may be lost in a crash without harm; a renewal that succeeds says otherwise
    // (require_durable_commit). A fence is a row lock the caller's own writes depend on.
    const bool losable = act != Act::kFence;
    if (losable) before_losable_write();
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    ActResult out{false, false, core::ClaimStatus::kEnded, {}};
    ClaimRow few[kFewRows];
    ClaimRow *rows = few;
    LockedClaim locked_few[kFewRows] = {};
    LockedClaim *locked = locked_few;
    for (int attempt = 0;; ++attempt) {
        if (attempt == kMaxRowRetries)
            ereport(ERROR,
                    (errcode(ERRCODE_INTERNAL_ERROR),
                     errmsg("%s: claim %lld kept changing", function, static_cast<long long>(id))));
        const int found = find_claim_rows(&table, id, &rows);
        out.found = found > 0;
        if (!out.found) break;
        require_may_act(function, rows[0]);
        const int count = keep_leases(rows, found);
        if (count == 0) require_not_rate_grant(function, rows[0]);
        if (count > kFewRows && locked == locked_few)
            locked = static_cast<LockedClaim *>(palloc0(sizeof(LockedClaim) * core::kMaxPermits));
        out.row = rows[0];
        out.status = status_of_all(rows, count, GetCurrentTimestamp());
        if (out.status == core::ClaimStatus::kExpired)
            for (int i = 0; i < count; ++i) record_timeout(&table, rows[i], act);
        if (out.status != core::ClaimStatus::kLive) break;

        // Every row locked, in (name, slot) order (every locker of a claim goes in that order).
        TM_Result result = TM_Ok;
        int locked_count = 0;
        for (; locked_count < count && result == TM_Ok; ++locked_count)
            result = lock_live(&table, rows[locked_count],
                               act == Act::kFence ? LockTupleShare : LockTupleExclusive,
                               &locked[locked_count]);
        if (result == TM_Updated || result == TM_Deleted) continue;  // read it again
        if (result == TM_WouldBlock) {
            out.status = core::ClaimStatus::kExpired;
            break;
        }
        if (result != TM_Ok) {
            out.status = core::ClaimStatus::kUncommitted;
            break;
        }
        // Whatever comes of the act, the rows are locked until this transaction ends, and
        // claimers count their slots as held until then even past the lease: the first waiter
        // must look again at the end (a release frees the slots, a renewal sets the expiry its
        // timer waits for, a fence -- also one that fails below, its lease having run out while
        // it waited for the rows -- lets go of them).
        for (int i = 0; i < count; ++i)
            if (i == 0 ||
                !same_text(locked_claim_name(locked[i]), locked_claim_name(locked[i - 1])))
                wake_first_waiter_at_end(locked_claim_name(locked[i]));
        const TimestampTz now = GetCurrentTimestamp();
        for (int i = 0; i < count; ++i) rows[i] = locked[i].row;
        out.row = rows[0];
        out.status = status_of_all(rows, count, now);
        if (out.status == core::ClaimStatus::kExpired)
            for (int i = 0; i < count; ++i) record_timeout(&table, rows[i], act);
        if (out.status != core::ClaimStatus::kLive) break;
        // A renewal is a lease asked for again: the declared maximum holds (declared_limits.hpp).
        if (act == Act::kRenew)
            for (int i = 0; i < count; ++i)
                require_lease_within_declared(function, locked_claim_name(locked[i]),
                                              has_lease ? new_lease : locked[i].row.lease);
        for (int i = 0; i < count; ++i) apply(&table, act, locked[i], now, has_lease, new_lease);
        count_act(act, locked, count, now);
        out.done = true;
        break;
    }
    claims_close(&table);
    if (losable) after_losable_write();
    return out;
}

}  // namespace

bool lease_release(int64 id) {
    return act_on_claim("sem_release()", id, Act::kRelease, false, 0).done;
}

bool lease_renew(int64 id, bool has_lease, int64 lease) {
    return act_on_claim("sem_renew()", id, Act::kRenew, has_lease, lease).done;
}

bool lease_held(int64 id) {
    ClaimsTable table;
    claims_open(&table, AccessShareLock);
    ClaimRow few[kFewRows];
    ClaimRow *rows = few;
    int count = find_claim_rows(&table, id, &rows);
    // A claim's leases say whether it is held; a rate limit's grant alone is held for its window.
    const int leases = keep_leases(rows, count);
    if (leases > 0) count = leases;
    bool held = false;
    if (count > 0) {
        const TimestampTz now = GetCurrentTimestamp();
        const core::ClaimStatus found = status_of_all(rows, count, now);
        // An uncommitted claim of another transaction holds its slots already.
        held = found == core::ClaimStatus::kLive ||
               (found == core::ClaimStatus::kUncommitted && rows[0].expires_at > now);
    }
    claims_close(&table);
    return held;
}

void lease_fence(int64 id) {
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

int64 prune_claim_history(int64 max_rows) {
    require_primary("sem_prune_history()", true);
    ClaimsTable table;
    claims_open(&table, RowExclusiveLock);
    const int64 pruned =
        prune_history(&table, GetCurrentTimestamp(), claims_last_id(&table), max_rows);
    claims_close(&table);
    return pruned;
}

}  // namespace pgsem
