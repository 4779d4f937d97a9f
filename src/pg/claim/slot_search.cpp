#include "core/arguments.hpp"
#include "core/claim_tally.hpp"
#include "core/slot_choice.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/slot_search.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/xact/pending_stats.hpp"
#include "pg/xact/pending_wakes.hpp"

namespace pgsem {

// The core objects below live in frames that call into Postgres (boundary rule 1).
static_assert(std::is_trivially_destructible_v<core::LowestFreeSlot>);
static_assert(std::is_trivially_destructible_v<core::ProbeSequence>);

namespace {

// One slot holds at most one committed live row; a few more versions can be in flight.
constexpr int kMaxRowsPerSlot = 8;

core::Occupancy occupancy(const ClaimRow &row, TimestampTz now) {
    const core::ClaimRowState state = claim_state(row);
    return PGSEM_NOTHROW(core::classify(state, now));
}

// The earliest expiry of a committed lease that holds a slot, for a first waiter's timer. Rows
// that an open transaction inserts, changes or locks are left out: their slot frees when that
// transaction ends (which wakes the first waiter), not at an expiry -- which may have passed
// already, and a timer set to it would wake the waiter again and again for nothing.
void note_expiry(const ClaimRow &row, SlotGrant *grant) {
    if (row.ended || row.insert_in_progress || row.change_in_progress) return;
    if (grant->next_expiry == 0 || row.expires_at < grant->next_expiry)
        grant->next_expiry = row.expires_at;
}

// Whether an open transaction locks the row the scan is on. A lease whose time has run out still
// holds its slot while a fence (a FOR SHARE row lock, which a dirty read does not report) or a
// renewal's row lock is on it: the fencer writes under it, the renewer is about to extend it.
bool locked_by_open_transaction(const ClaimScan &scan) {
    TransactionId locker;
    return claim_scan_row_lockers(&scan, &locker, 1) > 0;
}

}  // namespace

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
    // A rate grant's row ends this way as its slot is reused: that is no lease lost by a holder.
    if (!locked.row.rate) {
        core::ClaimTally expired;
        expired.expired_permits = 1;
        count_event(locked_claim_name(locked), expired, true);
    }
    // Until this transaction ends, other claimers see the change in flight and count the slot as
    // held.
    wake_first_waiter_at_end(locked_claim_name(locked));
    return Reap::kVacant;
}

namespace {

// ---- one slot ------------------------------------------------------------------------------

// The rows of one slot: whether any holds it, and which expired ones a lease claimer would reap.
struct SlotView {
    bool held;
    int expired_count;
    ItemPointerData expired[kMaxRowsPerSlot];
};

void read_slot(ClaimsTable *table, const SlotRequest &request, int32 slot, TimestampTz now,
               SlotView *view, SlotGrant *grant) {
    view->held = false;
    view->expired_count = 0;
    ClaimScan scan;
    ClaimRow row;
    slot_scan_begin(table, &scan, request.name, slot, slot + 1);
    while (!view->held && claim_scan_next(&scan, &row)) {
        core::Occupancy occ = occupancy(row, now);
        if (occ == core::Occupancy::kExpired && locked_by_open_transaction(scan))
            occ = core::Occupancy::kHeld;  // and no expiry to note: it has passed
        else if (occ == core::Occupancy::kHeld)
            note_expiry(row, grant);
        if (occ == core::Occupancy::kHeld || view->expired_count == kMaxRowsPerSlot)
            view->held = true;
        else if (occ == core::Occupancy::kExpired)
            view->expired[view->expired_count++] = row.tid;
    }
    claim_scan_end(&scan);
}

bool looks_free(ClaimsTable *table, const SlotRequest &request, int32 slot, TimestampTz now,
                SlotGrant *grant) {
    SlotView view;
    read_slot(table, request, slot, now, &view, grant);
    return !view.held;
}

// The lowest slot in [first, request.n) that no row holds, or -1.
int32 lowest_free_slot(ClaimsTable *table, const SlotRequest &request, int32 first, TimestampTz now,
                       SlotGrant *grant) {
    core::LowestFreeSlot finder(request.n, first);
    ClaimScan scan;
    ClaimRow row;
    int32 answer = -1;
    slot_scan_begin(table, &scan, request.name, first, request.n);
    while (answer < 0 && claim_scan_next(&scan, &row)) {
        const bool held = occupancy(row, now) == core::Occupancy::kHeld;
        if (held) note_expiry(row, grant);
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

}  // namespace

bool slot_rows_free(ClaimsTable *table, const SlotRequest &request, int32 slot, bool reap_expired,
                    SlotGrant *grant) {
    for (int attempt = 0; attempt < kMaxRowRetries; ++attempt) {
        const TimestampTz now = GetCurrentTimestamp();
        SlotView view;
        read_slot(table, request, slot, now, &view, grant);
        if (view.held) return false;
        if (!reap_expired) return true;
        Reap outcome = Reap::kVacant;
        for (int i = 0; i < view.expired_count && outcome == Reap::kVacant; ++i)
            outcome = reap(table, view.expired[i], now);
        if (outcome != Reap::kChanged) return outcome == Reap::kVacant;
    }
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("pgsem: slot %d kept changing under the slot mutex", slot)));
    return false;
}

int32 holders_above_n(ClaimsTable *table, const SlotRequest &request, SlotGrant *grant) {
    const TimestampTz now = GetCurrentTimestamp();
    int32 held = 0;
    // Leases: one range read of the slots above n, which only held (or expired) slots have rows
    // in; a slot counts once, whatever versions it shows.
    int32 last_counted = -1;
    ClaimScan scan;
    ClaimRow row;
    slot_scan_begin(table, &scan, request.name, request.declared_n, request.peak_n);
    while (claim_scan_next(&scan, &row)) {
        if (row.slot == last_counted) continue;
        core::Occupancy occ = occupancy(row, now);
        if (occ == core::Occupancy::kExpired && locked_by_open_transaction(scan))
            occ = core::Occupancy::kHeld;
        else if (occ == core::Occupancy::kHeld)
            note_expiry(row, grant);  // a lease there that runs out is room no release makes
        if (occ != core::Occupancy::kHeld) continue;
        ++held;
        last_counted = row.slot;
    }
    claim_scan_end(&scan);
    // Transaction and session claims: a probe per slot, only if anybody holds one of this name.
    if (!name_has_lock_claims(request.name)) return held;
    for (int32 slot = request.declared_n; slot < request.peak_n; ++slot) {
        CHECK_FOR_INTERRUPTS();
        if (slot_held_by_lock(request.name, slot)) ++held;
    }
    return held;
}

namespace {

// A rate limit's slots whose grants' windows have passed, earliest first, into the candidates,
// which offer them next (kRatePassed); the earliest expiry still ahead is noted for a waiter's
// timer. The index orders the grants by
// grant time, and a grant's window is its name's one `per` (a grant is never renewed), so the
// first committed one still held ends the read: every later one expires later. (Callers that
// pass a name different pers can leave passed windows unread here: fewer grants, never more.)
void read_passed_windows(SlotCandidates *candidates) {
    candidates->phase = SlotCandidates::kRatePassed;
    const SlotRequest &request = *candidates->request;
    candidates->passed_count = 0;
    candidates->passed_next = 0;
    candidates->passed_room = request.permits + 16;
    candidates->passed =
        static_cast<int32 *>(palloc(sizeof(int32) * static_cast<size_t>(candidates->passed_room)));
    ClaimScan scan;
    if (!rate_grants_scan_begin(candidates->table, &scan, request.name)) return;
    ClaimRow row;
    while (candidates->passed_count < candidates->passed_room && claim_scan_next(&scan, &row)) {
        core::Occupancy occ = occupancy(row, candidates->now);
        if (occ == core::Occupancy::kExpired && locked_by_open_transaction(scan))
            occ = core::Occupancy::kHeld;
        if (occ == core::Occupancy::kExpired && row.slot < request.n)
            candidates->passed[candidates->passed_count++] = row.slot;
        if (occ == core::Occupancy::kHeld && !row.insert_in_progress && !row.change_in_progress) {
            note_expiry(row, candidates->grant);
            break;
        }
    }
    claim_scan_end(&scan);
}

// The highest slot in [low, n) that a row holds (or is expired on), or -1.
int32 highest_slot_from(SlotCandidates *candidates, int32 low) {
    const SlotRequest &request = *candidates->request;
    ClaimScan scan;
    ClaimRow row;
    slot_scan_begin(candidates->table, &scan, request.name, low, request.n, true);
    const int32 highest = claim_scan_next(&scan, &row) ? row.slot : -1;
    claim_scan_end(&scan);
    return highest;
}

// This backend's last answer of highest_slot_with_rows, by name key. A backward index scan
// checks every entry of its first page that its lower bound admits: from slot 0, the whole last
// page of the name's entries (measured: 3 % of a grant's CPU at 8 clients); from the last answer,
// the few slots taken since. A stale or colliding hint only costs the second read.
struct HighestHint {
    uint64 name;
    int32 slot;
};
HighestHint last_highest{0, -1};

// The highest slot below n that a row holds (or is expired on), or -1: the slots above it have
// never been taken since their rows were pruned, or were given back.
int32 highest_slot_with_rows(SlotCandidates *candidates) {
    const SlotRequest &request = *candidates->request;
    const uint64 key = name_key(request.name);
    int32 highest = -1;
    if (last_highest.name == key && last_highest.slot > 0 && last_highest.slot < request.n)
        highest = highest_slot_from(candidates, last_highest.slot);
    if (highest < 0) highest = highest_slot_from(candidates, 0);
    last_highest = HighestHint{key, highest};
    return highest;
}

}  // namespace

void candidates_begin(SlotCandidates *candidates, ClaimsTable *table, const SlotRequest &request,
                      SlotGrant *grant) {
    candidates->table = table;
    candidates->request = &request;
    candidates->grant = grant;
    candidates->now = GetCurrentTimestamp();
    candidates->next = 0;
    candidates->probes_left = 0;
    candidates->passed = nullptr;
    candidates->passed_room = 0;
    candidates->passed_count = 0;
    candidates->passed_next = 0;
    candidates->passed_pending = false;
    if (request.n <= core::kLockedScanMaxSlots) {
        candidates->phase = SlotCandidates::kEverySlot;
    } else if (request.n > core::kOrderedScanMaxSlots) {
        candidates->phase = SlotCandidates::kRandomProbes;
        candidates->probes = core::ProbeSequence(request.n, pg_prng_uint64(&pg_global_prng_state));
        candidates->probes_left = core::kRandomProbes;
    } else {
        candidates->phase = SlotCandidates::kLowestFree;
    }
    if (request.rate && request.n > core::kLockedScanMaxSlots) {
        candidates->after_rate = candidates->phase;
        candidates->phase = SlotCandidates::kAboveHighest;
        candidates->next = highest_slot_with_rows(candidates) + 1;
    }
}

bool candidates_next(SlotCandidates *candidates, int32 *slot) {
    const SlotRequest &request = *candidates->request;
    CHECK_FOR_INTERRUPTS();
    switch (candidates->phase) {
        case SlotCandidates::kAboveHighest:
            if (candidates->next < request.n) {
                *slot = candidates->next++;
                return true;
            }
            if (candidates->after_rate == SlotCandidates::kRandomProbes) {
                // Every slot used: a few random probes first, which find a passed grant's slot
                // in one read each while the window has room to spare; the index of grants in
                // grant order is read only when they miss.
                candidates->phase = SlotCandidates::kRandomProbes;
                candidates->probes_left = core::kRateFirstProbes;
                candidates->passed_pending = true;
                return candidates_next(candidates, slot);
            }
            read_passed_windows(candidates);
            [[fallthrough]];
        case SlotCandidates::kRatePassed:
            if (candidates->passed_next < candidates->passed_count) {
                // From a random one on: concurrent grants would all start at the earliest, and
                // wait for each other at its mutex; any slot whose window has passed will do.
                if (candidates->passed_next == 0)
                    candidates->passed_start =
                        static_cast<int>(pg_prng_uint64(&pg_global_prng_state) %
                                         static_cast<uint64>(candidates->passed_count));
                const int at = (candidates->passed_start + candidates->passed_next++) %
                               candidates->passed_count;
                *slot = candidates->passed[at];
                return true;
            }
            // Holes below the highest slot (a grant rolled back while a later one took a slot
            // above it, a claim of another kind given back): with few slots the general search
            // finds them; with many, only its random probes look, so that a refusal of a full
            // window costs what a grant costs at any n, and a hole is found by a later call.
            candidates->phase = candidates->after_rate;
            candidates->next = 0;
            return candidates_next(candidates, slot);
        case SlotCandidates::kEverySlot:
            if (candidates->next >= request.n) return false;
            *slot = candidates->next++;
            return true;
        case SlotCandidates::kRandomProbes:
            while (candidates->probes_left > 0) {
                --candidates->probes_left;
                *slot = PGSEM_NOTHROW(candidates->probes.next());
                if (looks_free(candidates->table, request, *slot, candidates->now,
                               candidates->grant))
                    return true;
            }
            if (candidates->passed_pending) {
                candidates->passed_pending = false;
                candidates->probes_left = core::kRandomProbes - core::kRateFirstProbes;
                read_passed_windows(candidates);
                return candidates_next(candidates, slot);
            }
            if (request.rate) return false;  // see kRatePassed
            candidates->phase = SlotCandidates::kLowestFree;
            [[fallthrough]];
        case SlotCandidates::kLowestFree:
            if (candidates->next >= request.n) return false;
            *slot = lowest_free_slot(candidates->table, request, candidates->next, candidates->now,
                                     candidates->grant);
            if (*slot < 0) return false;
            // Tried, and found held (by a row or a lock) or being taken: the next look starts
            // after it.
            candidates->next = *slot + 1;
            return true;
    }
    return false;
}

}  // namespace pgsem
