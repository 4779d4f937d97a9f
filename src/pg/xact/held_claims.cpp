#include "core/arguments.hpp"
#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/registry.hpp"
#include "pg/store/release_epochs.hpp"
#include "pg/xact/held_claims.hpp"
#include "pg/xact/pending_stats.hpp"
#include "pg/xact/pending_wakes.hpp"

namespace pgsem {

namespace {

// A claim this backend holds, by name and slot.
struct HeldSlot {
    int32 slot;
    int32 claim_slot;  // the lowest slot of its claim (a claim of several permits holds several);
                       // -1 until finish_lock_claim (the claim is being made)
    text *name;        // palloc'd copy
    // The subtransaction that took it (its parent once it commits; for session claims,
    // InvalidSubTransactionId once the top transaction has committed): a rollback of it takes
    // the claim back.
    SubTransactionId taken_in;
    // For the registry, which lists only so many claims per session and lists the others once
    // room frees up.
    int32 n;
    Oid role;
    TimestampTz since;
};

// Session claims, for sem_release_session and for the exit of the session; in TopMemoryContext.
HeldSlot *session_claims = nullptr;
int session_claim_count = 0;
int session_claim_capacity = 0;

// Transaction claims of the open transaction, for PREPARE; in TopTransactionContext, so gone with
// the transaction.
HeldSlot *transaction_claims = nullptr;
int transaction_claim_count = 0;
int transaction_claim_capacity = 0;

// Request keys' locks taken by the open transaction (count_request_key_locks).
int transaction_key_locks = 0;

void remember(HeldSlot **list, int *count, int *capacity, MemoryContext context, const text *name,
              int32 slot, int32 n) {
    if (*count == *capacity) {
        const int grown = *capacity == 0 ? 8 : *capacity * 2;
        *list = *list == nullptr
                    ? static_cast<HeldSlot *>(MemoryContextAlloc(context, grown * sizeof(HeldSlot)))
                    : static_cast<HeldSlot *>(repalloc(*list, grown * sizeof(HeldSlot)));
        *capacity = grown;
    }
    text *copy = static_cast<text *>(MemoryContextAlloc(context, VARSIZE_ANY(name)));
    memcpy(copy, name, VARSIZE_ANY(name));
    (*list)[(*count)++] = HeldSlot{
        slot, -1, copy, GetCurrentSubTransactionId(), n, GetUserId(), GetCurrentTimestamp()};
}

// Forgets the claim remember() added last, which never got its slot.
void forget_last(HeldSlot *list, int *count) {
    pfree(list[--*count].name);
}

RegisteredClaim registered(ClaimKind kind, const HeldSlot &held) {
    return RegisteredClaim{kind, held.name, held.slot, held.n, held.role, held.since};
}

// Lists in the registry the claims it had no room for, once room is free again.
void relist_claims() {
    for (int i = 0; i < session_claim_count && registry_has_room_for_unlisted(); ++i)
        registry_list_claim(registered(ClaimKind::kSession, session_claims[i]));
    for (int i = 0; i < transaction_claim_count && registry_has_room_for_unlisted(); ++i)
        registry_list_claim(registered(ClaimKind::kTransaction, transaction_claims[i]));
}

// A session claim's locks: both, or the first alone when taking the second failed.
void release_session_locks(const text *name, int32 slot) {
    release_slot_holder(name, slot, true);
    release_name_holders(name, true);
}

// Gives a session claim's slot back (if its lock is still held) and wakes the first waiter, a
// release that claimers looking meanwhile know of (store/release_epochs.hpp).
void end_session_claim(const text *name, int32 slot, bool held) {
    if (held) {
        release_epochs_begin(name);
        release_session_locks(name, slot);
    }
    wake_first_waiter(name);
    release_epochs_end(name, held);
}

// A claim ends for sem_stats' counters once, on the entry of its lowest slot (its claim_slot; a
// claim that never finished, -1, was never granted).
void count_claim_end(const HeldSlot &held) {
    if (held.claim_slot < 0 || held.slot != held.claim_slot) return;
    const int64 held_for = GetCurrentTimestamp() - held.since;
    count_event(held.name, PGSEM_NOTHROW(core::tally_release(held_for)), false);
}

bool session_lock_held(const HeldSlot &held) {
    return slot_holder_held_by_me(held.name, held.slot);
}

void forget_session_claim(int index) {
    count_claim_end(session_claims[index]);
    registry_forget_claim(ClaimKind::kSession, session_claims[index].name,
                          session_claims[index].slot);
    pfree(session_claims[index].name);
    session_claims[index] = session_claims[--session_claim_count];
    relist_claims();
}

// Session claims are session-level advisory locks, so pg_advisory_unlock_all() and DISCARD ALL
// (a session pooler's reset query) release them too, without a word to pgsem. At the end of each
// transaction a session that has session claims forgets those whose locks are gone and wakes
// their semaphores' first waiters: a lookup in the backend's own lock table per claim.
void forget_released_session_claims() {
    for (int i = session_claim_count - 1; i >= 0; --i) {
        if (session_lock_held(session_claims[i])) continue;
        end_session_claim(session_claims[i].name, session_claims[i].slot, false);
        forget_session_claim(i);
    }
}

// Releases the session claims taken in `subtransaction` (or in any, for the top transaction's
// abort) that have not been confirmed by a commit.
void release_unconfirmed_session_claims(SubTransactionId subtransaction) {
    for (int i = session_claim_count - 1; i >= 0; --i) {
        const HeldSlot &held = session_claims[i];
        if (held.taken_in == InvalidSubTransactionId) continue;
        if (subtransaction != InvalidSubTransactionId && held.taken_in != subtransaction) continue;
        end_session_claim(held.name, held.slot, session_lock_held(held));
        forget_session_claim(i);
    }
}

// A subtransaction that took transaction claims aborted: the lock manager let go of their locks
// with it; the list and the registry (which quotas count) forget them too.
void forget_aborted_transaction_claims(SubTransactionId subtransaction) {
    bool forgot = false;
    for (int i = transaction_claim_count - 1; i >= 0; --i) {
        const HeldSlot &held = transaction_claims[i];
        if (held.taken_in != subtransaction) continue;
        count_claim_end(held);
        registry_forget_claim(ClaimKind::kTransaction, held.name, held.slot);
        transaction_claims[i] = transaction_claims[--transaction_claim_count];
        forgot = true;
    }
    if (forgot) relist_claims();
}

void forget_transaction_claims() {
    for (int i = 0; i < transaction_claim_count; ++i) count_claim_end(transaction_claims[i]);
    transaction_claims = nullptr;  // its memory goes with TopTransactionContext
    transaction_claim_count = transaction_claim_capacity = 0;
    transaction_key_locks = 0;
    registry_forget_transaction_claims(session_claim_count);
    relist_claims();
}

HeldSlot *claims_of(ClaimKind kind) {
    return kind == ClaimKind::kSession ? session_claims : transaction_claims;
}

int *count_of(ClaimKind kind) {
    return kind == ClaimKind::kSession ? &session_claim_count : &transaction_claim_count;
}

}  // namespace

int max_locks_per_session = 64;

namespace {

// The lock-table entries this session holds through pgsem: each slot of its transaction and
// session claims, each such claim's name holders lock (two claims of one name share theirs: an
// estimate that errs high), and the request keys of the open transaction.
int64 entries_held() {
    int64 held =
        static_cast<int64>(session_claim_count) + transaction_claim_count + transaction_key_locks;
    for (int i = 0; i < session_claim_count; ++i)
        if (session_claims[i].slot == session_claims[i].claim_slot) ++held;
    for (int i = 0; i < transaction_claim_count; ++i)
        if (transaction_claims[i].slot == transaction_claims[i].claim_slot) ++held;
    return held;
}

}  // namespace

void require_lock_room(const LockNeed &need) {
    if (max_locks_per_session < 0) return;
    const int64 names = need.names;
    const int64 slots = need.slots;
    const int64 needed =
        names + slots + (need.holds_locks ? names + slots : 0) + (need.keyed ? names : 0);
    const int64 held = entries_held();
    if (held + needed <= max_locks_per_session) return;
    ereport(ERROR,
            (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
             errmsg("pgsem: a session holds at most %d entries of the server's lock table "
                    "through pgsem (pgsem.max_locks_per_session)",
                    max_locks_per_session),
             errdetail("It holds %lld; this claim needs %lld more at its peak (names: %lld, "
                       "slots: %lld%s%s).",
                       static_cast<long long>(held), static_cast<long long>(needed),
                       static_cast<long long>(names), static_cast<long long>(slots),
                       need.holds_locks ? ", each held as a lock" : "",
                       need.keyed ? ", with a request key" : ""),
             errhint("Release session claims or end the transaction first, claim fewer names or "
                     "permits at once, or ask a superuser to raise pgsem.max_locks_per_session "
                     "(and max_locks_per_transaction with it).")));
}

void count_request_key_locks(int32 keys) {
    transaction_key_locks += keys;
}

bool begin_lock_claim(ClaimKind kind, const text *name, int32 slot, int32 n) {
    const bool session = kind == ClaimKind::kSession;
    // Remembered first, so that an error from here to the end of the claim -- an interrupt while
    // the slot's rows are read, the lock table full at the second lock (53200) -- finds the
    // claim, unconfirmed, and takes it back with its (sub)transaction
    // (release_unconfirmed_session_claims): a session-level lock outlives the error that
    // interrupted its claim. Transaction-level locks go with the transaction anyway.
    if (session)
        remember(&session_claims, &session_claim_count, &session_claim_capacity, TopMemoryContext,
                 name, slot, n);
    else
        remember(&transaction_claims, &transaction_claim_count, &transaction_claim_capacity,
                 TopTransactionContext, name, slot, n);
    if (take_slot_holder(name, slot, session) == SlotLock::kTaken) return true;
    forget_last(claims_of(kind), count_of(kind));
    return false;
}

void abandon_lock_claim(ClaimKind kind, const text *name, int32 slot) {
    release_slot_holder(name, slot, kind == ClaimKind::kSession);
    forget_last(claims_of(kind), count_of(kind));
}

void finish_lock_claim(ClaimKind kind, const text *name, int32 permits, int32 claim_slot) {
    // The claim's slots are among the last remembered, but not necessarily the very last: a
    // claim on several semaphores remembers every member's slots before it finishes any.
    HeldSlot *claims = claims_of(kind);
    int32 left = permits;
    for (int i = *count_of(kind) - 1; i >= 0 && left > 0; --i) {
        if (claims[i].claim_slot != -1 || !same_text(claims[i].name, name)) continue;
        claims[i].claim_slot = claim_slot;
        take_name_holders(name, kind == ClaimKind::kSession);
        registry_note_claim(registered(kind, claims[i]));
        --left;
    }
}

bool release_session_claim(const text *name, int32 slot) {
    int32 claim_slot = -1;
    for (int i = 0; i < session_claim_count && claim_slot < 0; ++i)
        if (session_claims[i].slot == slot && same_text(session_claims[i].name, name))
            claim_slot = session_claims[i].claim_slot;
    if (claim_slot < 0) return false;
    bool held = false;
    for (int i = session_claim_count - 1; i >= 0; --i) {
        const HeldSlot &claim = session_claims[i];
        if (claim.claim_slot != claim_slot || !same_text(claim.name, name)) continue;
        const bool locked = session_lock_held(claim);  // else unlocked behind pgsem's back
        end_session_claim(claim.name, claim.slot, locked);
        held = held || locked;
        forget_session_claim(i);
    }
    return held;
}

// PREPARE TRANSACTION with transaction claims is refused: a prepared transaction may stay for
// days, its locks kept by no backend, and whoever ends it (COMMIT PREPARED) does not know to wake
// the semaphore's waiters. So is a PREPARE of a transaction that took a session claim: the claim
// is this session's lock, which the prepared transaction does not carry, so a ROLLBACK PREPARED
// could not take it back. Lease claims, which are rows, are fine in prepared transactions.
void held_claims_before_prepare() {
    for (int i = 0; i < session_claim_count; ++i) {
        const HeldSlot &held = session_claims[i];
        if (held.taken_in != InvalidSubTransactionId)
            ereport(ERROR,
                    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                     errmsg("cannot PREPARE a transaction that took a session claim of semaphore "
                            "\"%s\"",
                            text_to_cstring(held.name)),
                     errdetail("A session claim belongs to the session, which a prepared "
                               "transaction leaves behind: a ROLLBACK PREPARED could not take it "
                               "back."),
                     errhint("Take the session claim before or after the transaction, or a lease "
                             "(sem_claim) in it.")));
    }
    for (int i = 0; i < transaction_claim_count; ++i) {
        const HeldSlot &held = transaction_claims[i];
        if (slot_holder_held_by_me(held.name, held.slot))
            ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                            errmsg("cannot PREPARE a transaction that holds a transaction claim "
                                   "of semaphore \"%s\"",
                                   text_to_cstring(held.name)),
                            errhint("Take a lease (sem_claim) in a transaction to be prepared.")));
    }
}

void held_claims_at_end(bool committed) {
    if (committed) {
        for (int i = 0; i < session_claim_count; ++i)
            session_claims[i].taken_in = InvalidSubTransactionId;
    } else {
        release_unconfirmed_session_claims(InvalidSubTransactionId);
    }
    if (session_claim_count > 0) forget_released_session_claims();
    forget_transaction_claims();
}

void held_claims_at_subtransaction_end(bool committed, SubTransactionId mine,
                                       SubTransactionId parent) {
    if (!committed) {
        release_unconfirmed_session_claims(mine);
        forget_aborted_transaction_claims(mine);
        return;
    }
    for (int i = 0; i < session_claim_count; ++i)
        if (session_claims[i].taken_in == mine) session_claims[i].taken_in = parent;
    for (int i = 0; i < transaction_claim_count; ++i)
        if (transaction_claims[i].taken_in == mine) transaction_claims[i].taken_in = parent;
}

void held_claims_at_parallel_end() {
    forget_transaction_claims();
}

// The session claims go before the backend's locks do, so that their first waiters can be woken,
// which releasing them at the very end of the backend's life (as Postgres does) would not allow.
void held_claims_at_exit() {
    for (int i = 0; i < session_claim_count; ++i) {
        const HeldSlot &held = session_claims[i];
        end_session_claim(held.name, held.slot, true);
        count_claim_end(held);
    }
    session_claim_count = 0;
}

}  // namespace pgsem
