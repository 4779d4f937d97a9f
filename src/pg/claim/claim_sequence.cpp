#include "core/slot_choice.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"
#include "pg/claim/claim_counts.hpp"
#include "pg/claim/claim_sequence.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/request_keys.hpp"
#include "pg/claim/role_quotas.hpp"
#include "pg/claim/slot_search.hpp"
#include "pg/claim/waiting_line.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/pauses.hpp"
#include "pg/store/registry.hpp"
#include "pg/store/release_epochs.hpp"
#include "pg/store/timed_locks.hpp"
#include "pg/xact/commit_durability.hpp"
#include "pg/xact/held_claims.hpp"
#include "pg/xact/history_pruning.hpp"
#include "pg/xact/pending_wakes.hpp"
#include "pg/xact/statement_depth.hpp"

namespace pgsem {

namespace {

// Whether any member of a set is a rate limit's grant.
bool has_rate_member(const SlotRequest *members, int32 count) {
    for (int32 m = 0; m < count; ++m)
        if (members[m].rate) return true;
    return false;
}

// ---- 1. admit ----------------------------------------------------------------------------------

// claim() and claim_all() then apply each semaphore's declaration (declared_limits.hpp): it sets
// the n, may refuse the role, and caps the wait.
void admit(const char *function, const SlotRequest &request) {
    // Transaction and session claims write nothing: read-only transactions may take them.
    require_primary(function, request.kind == ClaimKind::kLease);
    if (request.rate) {
        require_outside_transaction_block(function);
        lock_rate_grants();  // before the declaration is read (store/locks.hpp says why)
    }
    if (request.kind == ClaimKind::kTransaction)
        warn_if_statement_scoped(function,
                                 "Call it between BEGIN and COMMIT, or take a lease (sem_claim) "
                                 "or a session claim.");
}

// A set is one grant, all or nothing: admitted as its members are (all of one kind), and as a
// rate grant if any member is one (sem_claim_all's pers): refused in a transaction block, as
// sem_rate is, since a rollback would give back the rate grant along with the rest after the
// caller acted on it. (Its commit is durable as every lease's is: after_grant.)
void admit_set(const char *function, const SetRequest &set) {
    SlotRequest as_one = set.members[0];
    as_one.rate = has_rate_member(set.members, set.count);
    admit(function, as_one);
}

// What the claim may hold of the server's lock table at its peak, checked before it takes any of
// it (held_claims.hpp).
void require_room_for(const SlotRequest *members, int32 count) {
    LockNeed need{count, 0, members[0].kind != ClaimKind::kLease,
                  members[0].request_key != nullptr};
    for (int32 m = 0; m < count; ++m) need.slots += members[m].permits;
    require_lock_room(need);
}

// After a lowering a look also picks a slot for each holder above the new n (slots_wanted), each
// under its mutex: `spares` more, known only once the look has counted them, checked before it
// picks them (its request keys, taken by then, count among what the session holds).
void require_room_for_spares(const SlotRequest *members, int32 count, int32 spares) {
    LockNeed need{count, spares, members[0].kind != ClaimKind::kLease, false};
    for (int32 m = 0; m < count; ++m) need.slots += members[m].permits;
    require_lock_room(need);
}

// ---- the slots of one claim -------------------------------------------------------------------

// The slots one look has found free, each under its mutex, until it has as many as the claim has
// permits: a claim holds all of its slots or none, and it never holds one while waiting for
// another. Only the first mutex may be waited for (and only by a lease claimer): a claimer that
// holds one never waits for another, so no two claimers wait for each other's mutexes.
struct PickedSlots {
    int32 *slots;  // in the order picked
    int32 count;
};

bool picked(const PickedSlots &picks, int32 slot) {
    for (int32 i = 0; i < picks.count; ++i)
        if (picks.slots[i] == slot) return true;
    return false;
}

int32 lowest(const PickedSlots &picks) {
    int32 low = picks.slots[0];
    for (int32 i = 1; i < picks.count; ++i) low = Min(low, picks.slots[i]);
    return low;
}

// ---- 4. hold -----------------------------------------------------------------------------------

// Under the slot's mutex (slot_search.hpp): whether this claim can have the slot, keeping it if
// so. Of the two ways a slot can be held, the lock is the cheaper to look at, so it is looked at
// first. A lease claimer takes the slot at the end (take_leases); a transaction or session
// claimer has its slot-holder lock from here on, recorded as a claim by finish_lock_claim.
bool keep_slot(ClaimsTable *table, const SlotRequest &request, int32 slot, SlotGrant *grant) {
    if (request.kind == ClaimKind::kLease)
        return !slot_held_by_lock(request.name, slot) &&
               slot_rows_free(table, request, slot, true, grant);
    if (!begin_lock_claim(request.kind, request.name, slot, request.n)) return false;
    if (slot_rows_free(table, request, slot, false, grant)) return true;
    abandon_lock_claim(request.kind, request.name, slot);
    return false;
}

// Every picked slot under its mutex: the claim takes them all, its lease rows sharing one id
// (`id`; 0: drawn here) and one grant time (`claimed_at`; 0: now), so that a set's rows on each
// of its semaphores begin, expire and end as one.
void take_slots(ClaimsTable *table, const SlotRequest &request, const PickedSlots &picks,
                SlotGrant *grant, int64 id, TimestampTz claimed_at) {
    grant->slot = lowest(picks);
    if (request.kind != ClaimKind::kLease) {
        finish_lock_claim(request.kind, request.name, request.permits, grant->slot);
        return;
    }
    NewClaim row{};
    // The id is drawn inside the slot mutex, so ids grow in the order claims are granted; the
    // grant time is taken after it, so claim times follow ids too.
    row.id = id != 0 ? id : claims_next_id(table);
    row.name = const_cast<text *>(request.name);
    row.n = request.n;
    row.permits = request.permits;
    row.claimed_at = claimed_at != 0 ? claimed_at : GetCurrentTimestamp();
    row.lease = request.lease;
    row.rate = request.rate;
    row.expires_at = PGSEM_NOTHROW(core::lease_end(row.claimed_at, request.lease));
    for (int32 i = 0; i < picks.count; ++i) {
        row.slot = picks.slots[i];
        // The key goes on one row, the lowest slot's: its unique index allows one per claim.
        row.request_key =
            row.slot == grant->slot ? const_cast<text *>(request.request_key) : nullptr;
        claims_insert(table, row);
    }
    grant->claim_id = row.id;
}

// A claim that could not have all its slots lets go of those it kept, the last kept first.
void give_back(const SlotRequest &request, const PickedSlots &picks) {
    if (request.kind == ClaimKind::kLease) return;  // a lease claimer took nothing yet
    for (int32 i = picks.count - 1; i >= 0; --i)
        abandon_lock_claim(request.kind, request.name, picks.slots[i]);
}

// Below a lowered n, a claim picks one free slot more for each holder above n, and takes only
// its permits: the spares are given back here, and their mutexes let go. Holding them free under
// their mutexes while it takes its own is what makes the count exact: two claimers cannot both
// count the same free slot as room.
void give_back_spares(const SlotRequest &request, PickedSlots *picks) {
    const PickedSlots spares{picks->slots + request.permits, picks->count - request.permits};
    give_back(request, spares);
    for (int32 i = 0; i < spares.count; ++i) unlock_slot_mutex(request.name, spares.slots[i]);
    picks->count = request.permits;
}

// How many slots a look must find free: the claim's permits, and one for every holder above a
// lowered n (slot_search.hpp: holders_above_n).
int32 slots_wanted(ClaimsTable *table, const SlotRequest &request, SlotGrant *grant) {
    if (request.peak_n <= request.declared_n) return request.permits;
    return request.permits + holders_above_n(table, request, grant);
}

// ---- 2. look ----------------------------------------------------------------------------------

// Picks `wanted` free slots (slots_wanted), each under its mutex, into *picks; false when too few
// are free (what it picked stays picked, for give_back). A transaction or session claimer skips a
// slot whose mutex another claimer holds (slot_search.hpp, 2.); a lease claimer waits for it
// (`may_wait`), but never while it holds a mutex already.
bool pick_slots(ClaimsTable *table, const SlotRequest &request, int32 wanted, bool may_wait,
                PickedSlots *picks, SlotGrant *grant) {
    if (wanted > request.n) return false;
    SlotCandidates candidates;
    candidates_begin(&candidates, table, request, grant);
    int32 slot = -1;
    while (picks->count < wanted && candidates_next(&candidates, &slot)) {
        if (picks->count > 0 && picked(*picks, slot)) continue;
        if (!lock_slot_mutex(request.name, slot, may_wait && picks->count == 0)) continue;
        if (keep_slot(table, request, slot, grant))
            picks->slots[picks->count++] = slot;
        else
            unlock_slot_mutex(request.name, slot);
    }
    return picks->count == wanted;
}

// The claim's own slots, below its n, then the spare slots a lowered declaration asks for
// (slots_wanted), anywhere below the declared n: a caller's smaller n bounds where its own slots
// are, not where the room that the holders above n leave may be.
bool pick_wanted(ClaimsTable *table, const SlotRequest &request, int32 wanted, bool may_wait,
                 PickedSlots *picks, SlotGrant *grant) {
    if (!pick_slots(table, request, request.permits, may_wait, picks, grant)) return false;
    if (wanted == request.permits) return true;
    SlotRequest declared = request;
    declared.n = Max(request.n, request.declared_n);
    return pick_slots(table, declared, wanted, may_wait, picks, grant);
}

// How many slots a claim that was not granted lacks, as its deadlock check counts them.
int32 lack(const SlotRequest &request, int32 wanted, const PickedSlots &picks) {
    return Max(Min(wanted - picks.count, request.permits), 1);
}

void unlock_picked(const SlotRequest &request, const PickedSlots &picks) {
    for (int32 i = 0; i < picks.count; ++i) unlock_slot_mutex(request.name, picks.slots[i]);
}

// A paused name (sem_pause) has no room until its pause ends, when a waiter's timer wakes it:
// the latest pause of `count` semaphores, and in *member the one paused that long (-1, and 0
// returned: none is paused).
TimestampTz latest_pause(const SlotRequest *members, int32 count, int32 *member) {
    TimestampTz latest = 0;
    *member = -1;
    for (int32 m = 0; m < count; ++m) {
        const TimestampTz until = pause_until(members[m].name);
        if (until <= latest) continue;
        latest = until;
        *member = m;
    }
    return latest;
}

// One look for free slots, taking them if there are enough, with pgsem.claims open for the look
// alone: unless the look wrote (leases inserted, an expired one recorded as timed out), the table
// lock goes with it, so that nobody sleeps holding it (claims_close_unlocking). `first_waiter`:
// the look of the first in line, which must not wait in the lock manager once it has read a slot:
// a release of that slot would set its latch while it waits, the lock manager's sleep would reset
// it, and the first waiter would then sleep through the release. (The only other taker of a
// mutex then is a renewal, of a lease that holds the slot.)
SlotGrant look_for_slot(const SlotRequest &request, bool first_waiter) {
    SlotGrant grant{false, -1, 0, 0, 0};
    int32 paused_member = -1;
    grant.next_expiry = latest_pause(&request, 1, &paused_member);
    if (paused_member >= 0) return grant;
    ClaimsTable table;
    claims_open(&table, request.kind == ClaimKind::kLease ? RowExclusiveLock : AccessShareLock);
    const QuotaHold quota = hold_claims_quota(&table, request.kind, request.permits);
    const int32 wanted = slots_wanted(&table, request, &grant);
    if (wanted > request.permits) require_room_for_spares(&request, 1, wanted - request.permits);
    int32 one_slot = 0;
    PickedSlots picks{&one_slot, 0};
    if (wanted > 1) picks.slots = static_cast<int32 *>(palloc(sizeof(int32) * wanted));
    grant.granted = pick_wanted(&table, request, wanted,
                                request.kind == ClaimKind::kLease && !first_waiter, &picks, &grant);
    if (grant.granted) {
        give_back_spares(request, &picks);
        take_slots(&table, request, picks, &grant, 0, 0);
    } else {
        grant.free_seen = request.permits - lack(request, wanted, picks);
        give_back(request, picks);
    }
    unlock_picked(request, picks);
    let_go_of_claims_quota(quota);
    claims_close_unlocking(&table);
    return grant;
}

// A set's look: every member's slots picked in the set's order, all under their mutexes at once,
// then all taken (leases under one id) or all given back. Only the very first mutex of the set
// may be waited for. Returns the index of the first member that lacked slots, with its lack in
// *lacking, or -1 when the set was taken; *next_expiry is the earliest expiry any member saw.
int32 look_for_set(const SetRequest &set, bool first_waiter, SetGrant *out, int32 *lacking,
                   TimestampTz *next_expiry) {
    int32 paused_member = -1;
    *next_expiry = latest_pause(set.members, set.count, &paused_member);
    if (paused_member >= 0) {
        *lacking = set.members[paused_member].permits;
        return paused_member;
    }
    const ClaimKind kind = set.members[0].kind;
    ClaimsTable table;
    claims_open(&table, kind == ClaimKind::kLease ? RowExclusiveLock : AccessShareLock);
    PickedSlots *picks = static_cast<PickedSlots *>(palloc(sizeof(PickedSlots) * set.count));
    SlotGrant *grants = static_cast<SlotGrant *>(palloc0(sizeof(SlotGrant) * set.count));
    int32 short_member = -1;
    int32 picked_members = 0;
    *next_expiry = 0;
    int32 permits = 0;
    for (int32 m = 0; m < set.count; ++m) permits += set.members[m].permits;
    const QuotaHold quota = hold_claims_quota(&table, kind, permits);
    int32 spares = 0;
    for (int32 m = 0; m < set.count && short_member < 0; ++m) {
        const SlotRequest &member = set.members[m];
        const int32 wanted = slots_wanted(&table, member, &grants[m]);
        if (wanted > member.permits) {
            spares += wanted - member.permits;
            require_room_for_spares(set.members, set.count, spares);
        }
        picks[m] = PickedSlots{static_cast<int32 *>(palloc(sizeof(int32) * wanted)), 0};
        const bool may_wait = kind == ClaimKind::kLease && !first_waiter && m == 0;
        ++picked_members;
        if (!pick_wanted(&table, member, wanted, may_wait, &picks[m], &grants[m])) {
            short_member = m;
            *lacking = lack(member, wanted, picks[m]);
        }
        if (grants[m].next_expiry != 0 &&
            (*next_expiry == 0 || grants[m].next_expiry < *next_expiry))
            *next_expiry = grants[m].next_expiry;
    }
    if (short_member < 0) {
        // Drawn under the mutexes, as a single claim's id is: ids grow in grant order.
        const int64 id = kind == ClaimKind::kLease ? claims_next_id(&table) : 0;
        const TimestampTz claimed_at = GetCurrentTimestamp();
        for (int32 m = 0; m < set.count; ++m) {
            give_back_spares(set.members[m], &picks[m]);
            // The request key goes on the members that end the claim (request_keys.hpp).
            SlotRequest member = set.members[m];
            if (!set_member_keyed(set, m)) member.request_key = nullptr;
            take_slots(&table, member, picks[m], &grants[m], id, claimed_at);
            out->slots[m] = grants[m].slot;
        }
        out->claim_id = id;
    } else {
        for (int32 m = picked_members - 1; m >= 0; --m) give_back(set.members[m], picks[m]);
    }
    for (int32 m = picked_members - 1; m >= 0; --m) unlock_picked(set.members[m], picks[m]);
    let_go_of_claims_quota(quota);
    claims_close_unlocking(&table);
    return short_member;
}

// ---- 3. wait in line ---------------------------------------------------------------------------

// Each look claims under what the semaphore's declaration says then (a raise of n is the first
// waiter's at once: a declaration's change wakes it; a revoke refuses it).
SlotGrant wait_for_slot(const char *function, SlotRequest *request, TimestampTz start,
                        TimestampTz deadline) {
    SlotGrant grant{false, -1, 0, 0, 0};
    LineWait line;
    if (!line_join(&line, *request, start, deadline)) return grant;
    for (;;) {
        line_begin_look(&line);
        if (request->rate) lock_rate_grants();  // let go of below when the look grants nothing
        reapply_declaration(function, request, start, &line.deadline);
        grant = look_for_slot(*request, true);
        line_end_look(&line);
        if (!grant.granted && request->rate) unlock_rate_grants();
        if (grant.granted ||
            !line_sleep(&line, grant.next_expiry, request->permits - grant.free_seen))
            break;
    }
    line_leave(&line);
    return grant;
}

// A set waits in the line of every member, joined in the set's order (so two sets naming the
// same semaphores line up on the first of them, and never each hold a line the other waits
// for), and looks for the whole set each time it is woken: by a release on any member, or its
// timer. Its deadlock check is the first short member's (deadlock_check.hpp): a member whose
// slots can never free makes the set impossible. Each look applies the members' declarations
// again, to `members` themselves.
bool wait_for_set(const char *function, SlotRequest *members, int32 count, TimestampTz start,
                  TimestampTz deadline, SetGrant *out) {
    const SetRequest set{members, count};
    const bool rate = has_rate_member(members, count);
    LineWait *lines = static_cast<LineWait *>(palloc(sizeof(LineWait) * set.count));
    int32 joined = 0;
    while (joined < set.count && line_join(&lines[joined], set.members[joined], start, deadline))
        ++joined;
    bool granted = false;
    if (joined == set.count) {
        for (;;) {
            int32 lacking = 0;
            TimestampTz next_expiry = 0;
            line_begin_look(&lines[0]);
            if (rate) lock_rate_grants();  // let go of below when the look grants nothing
            for (int32 m = 0; m < set.count; ++m)
                reapply_declaration(function, &members[m], start, &deadline);
            for (int32 m = 0; m < set.count; ++m) lines[m].deadline = deadline;
            const int32 short_member = look_for_set(set, true, out, &lacking, &next_expiry);
            line_end_look(&lines[0]);
            granted = short_member < 0;
            if (!granted && rate) unlock_rate_grants();
            if (granted || !line_sleep(&lines[short_member], next_expiry, lacking)) break;
        }
    }
    for (int32 m = joined - 1; m >= 0; --m) line_leave(&lines[m]);
    return granted;
}

// ---- 5. after the grant ------------------------------------------------------------------------

void after_grant(const SlotRequest &request) {
    switch (request.kind) {
        case ClaimKind::kLease:
            // A claim lost in a crash after its holder saw it commit would let a second holder in.
            require_durable_commit();
            // A rollback frees the slot again; a commit sets the expiry a first waiter that saw
            // the claim in flight has to wait for.
            wake_first_waiter_at_end(request.name, FreesAt::kRollbackOnly);
            break;
        case ClaimKind::kTransaction:
            wake_first_waiter_at_end(request.name);  // the slot frees when the transaction ends
            break;
        case ClaimKind::kSession:
            break;  // released by sem_release_session, or when the session ends
    }
}

}  // namespace

SlotGrant claim(const char *function, const SlotRequest &asked, int64 wait) {
    const TimestampTz start = wait_clock_start();
    SlotRequest request = asked;
    resolve_declared_rate(&request);
    admit(function, request);
    require_room_for(&request, 1);
    SlotGrant grant{false, -1, 0, 0, 0};
    // A retry of a claim made with the same key answers with that claim (request_keys.hpp),
    // whatever the declaration says since: the claim is the caller's already.
    if (request.request_key != nullptr && recall_keyed_claim(request, &grant)) return grant;
    apply_declaration(function, &request, &wait);
    // Shared memory this claim may need later, attached now, where a failure costs nothing but a
    // name in the views or a second look: the registry (for the views of transaction and session
    // claims and of waits; a lease needs none) first, whose few bytes matter more, then the
    // release epochs (a session claim's release counts for others' looks, and the end of the
    // session is no place to attach).
    if (request.kind != ClaimKind::kLease || wait > 0) (void)registry_attach();
    (void)release_epochs_attach();
    // From here an error (a cancel, a lock_timeout while a slot's mutex is waited for, one while
    // waiting in line) ends the claim: the abort counts it (claim_counts.hpp).
    count_wait_begins(&request.name, 1, start);
    if (hold_line_if_empty(request.name)) {
        const EpochMark mark = release_epochs_mark(request.name);
        grant = look_for_slot(request, false);
        // A look reads the slots one after another, not all at one instant: a holder can give
        // slot 0 back after the look saw it held and take slot 1 before the look gets there (a
        // claimer's slot mutex even sends it there), and a look that then answers NULL does so
        // while a slot is free. A caller that does not wait looks once more before it answers
        // NULL if a release may have overlapped the look (one that waits is woken by such a
        // release anyway). A lease that ran out is a release nobody counts: the look noted the
        // earliest expiry of the leases it saw holding their slots.
        if (!grant.granted && wait == 0 &&
            (release_epochs_moved(request.name, mark) ||
             (grant.next_expiry != 0 && grant.next_expiry <= GetCurrentTimestamp())))
            grant = look_for_slot(request, false);
        let_go_of_line(request.name);
    } else if (wait == 0) {
        count_wait_ends();
        count_answer(request.name, request.permits, false, false, false, start);
        return grant;  // others wait: no passing them
    }
    const bool waited = !grant.granted && wait > 0;
    if (waited) {
        if (request.rate) unlock_rate_grants();  // taken by admit(); a waiter holds it per look
        grant = wait_for_slot(function, &request, start, start + wait);
    }
    count_wait_ends();
    count_answer(request.name, request.permits, request.kind == ClaimKind::kLease, grant.granted,
                 waited, start);
    if (grant.granted) after_grant(request);
    if (request.kind == ClaimKind::kLease)
        prune_history_sometimes(grant.granted ? grant.claim_id : 0);
    return grant;
}

void claim_all(const char *function, const SetRequest &asked, int64 wait, SetGrant *grant) {
    const TimestampTz start = wait_clock_start();
    // Members on names declared sliding windows are rate grants (declared_limits.hpp), which
    // admission and a retry's recall must know.
    SlotRequest *members = static_cast<SlotRequest *>(palloc(sizeof(SlotRequest) * asked.count));
    for (int32 m = 0; m < asked.count; ++m) {
        members[m] = asked.members[m];
        resolve_declared_rate(&members[m]);
    }
    const SetRequest set{members, asked.count};
    admit_set(function, set);
    require_room_for(set.members, set.count);
    grant->granted = false;
    grant->claim_id = 0;
    if (members[0].request_key != nullptr && recall_keyed_set(set, grant)) return;
    for (int32 m = 0; m < asked.count; ++m) apply_declaration(function, &members[m], &wait);
    const SlotRequest &first = set.members[0];
    if (first.kind != ClaimKind::kLease || wait > 0) (void)registry_attach();
    (void)release_epochs_attach();
    // From here an error ends the claim: the abort counts it on each name (claim()).
    const text **names = static_cast<const text **>(palloc(sizeof(text *) * set.count));
    for (int32 m = 0; m < set.count; ++m) names[m] = set.members[m].name;
    count_wait_begins(names, set.count, start);
    // The lines in the set's order, each held in share mode if nobody waits in it.
    int32 held_lines = 0;
    while (held_lines < set.count && hold_line_if_empty(set.members[held_lines].name)) ++held_lines;
    if (held_lines == set.count) {
        EpochMark *marks = static_cast<EpochMark *>(palloc(sizeof(EpochMark) * set.count));
        for (int32 m = 0; m < set.count; ++m) marks[m] = release_epochs_mark(set.members[m].name);
        int32 lacking = 0;
        TimestampTz next_expiry = 0;
        grant->granted = look_for_set(set, false, grant, &lacking, &next_expiry) < 0;
        // The second look of a caller that does not wait (claim() says why), when a release on
        // any member may have overlapped the look.
        bool moved = next_expiry != 0 && next_expiry <= GetCurrentTimestamp();
        for (int32 m = 0; m < set.count && !moved; ++m)
            moved = release_epochs_moved(set.members[m].name, marks[m]);
        if (!grant->granted && wait == 0 && moved)
            grant->granted = look_for_set(set, false, grant, &lacking, &next_expiry) < 0;
    }
    for (int32 m = held_lines - 1; m >= 0; --m) let_go_of_line(set.members[m].name);
    const bool waited = !grant->granted && wait > 0;
    if (waited) {
        if (has_rate_member(members, set.count))
            unlock_rate_grants();  // taken by admit_set(); a waiter holds it per look
        grant->granted = wait_for_set(function, members, set.count, start, start + wait, grant);
    }
    count_wait_ends();
    for (int32 m = 0; m < set.count; ++m)
        count_answer(set.members[m].name, set.members[m].permits,
                     set.members[m].kind == ClaimKind::kLease, grant->granted, waited, start);
    if (grant->granted)
        for (int32 m = 0; m < set.count; ++m) after_grant(set.members[m]);
    if (first.kind == ClaimKind::kLease)
        prune_history_sometimes(grant->granted ? grant->claim_id : 0);
}

}  // namespace pgsem
