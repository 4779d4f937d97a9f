// Finding a free slot of a semaphore, for each kind of claim.
//
// A slot is held by a lease claim -- a row of pgsem.claims -- or by a transaction or session
// claim -- a slot-holder lock in the lock manager. Every kind counts against the same n, so a
// claimer of any kind checks both, under the slot's mutex (store/locks.hpp: a lock-manager lock
// held for the microseconds between reading the slot and taking it):
//   1. Candidate slots come from dirty reads of the partial unique index over live claims
//      (src/core/slot_choice.hpp decides what each row means and which slot to try).
//   2. Under the slot mutex the claim sequence's hold step (claim_sequence.cpp) checks the
//      slot-holder lock, has the slot's rows read again (slot_rows_free: an expired lease is
//      recorded as timed out by a lease claimer, which is about to insert; others merely see it
//      as free; an expired lease that an open transaction fences or renews still holds its slot),
//      and takes the slot: inserts its row, or takes the slot-holder lock for its transaction or
//      session. It never waits for another transaction. A transaction or session claimer does
//      not wait for another claimer either: it counts a slot whose mutex is taken as held.
//      Whoever holds the mutex takes the slot if it is free (or renews the lease that holds it),
//      so the slot is held or being taken, as an insert in progress is; and lock claimers racing
//      for a freed slot never sleep in the lock manager behind each other (measured: a quarter
//      more transaction claims at 8 clients on one semaphore of 4). A lease claimer waits for the
//      mutex: it is about to wait for its own durable commit anyway, and those waits keep a retry
//      storm of lease callers (which skipping made faster) from taking the CPU that the holders
//      need to release (measured: 32 callers retrying at once on 4 slots made half as many pairs
//      when they skipped).
//   3. For leases the unique index over (name, slot) WHERE ended_at IS NULL is the final arbiter:
//      if the logic above were wrong, the insert would fail, never oversubscribe.
// The line of waiters (waiting_line.hpp) decides who may look for a slot at all.
#pragma once

#include "core/slot_choice.hpp"
#include "pg/base/claim_types.hpp"
#include "pg/store/claims_table.hpp"
#include "pg/store/locks.hpp"

namespace pgsem {

enum class Reap : unsigned char {
    kVacant,   // recorded as timed out now, or found ended already
    kHeld,     // someone holds the row (a fence, a release, a renewal): leave it alone
    kChanged,  // the row changed since it was read: read it again
};

// Records an expired lease claim as timed out, never waiting for a row lock.
Reap reap(ClaimsTable *table, ItemPointerData tid, TimestampTz now);

// The slots worth trying for a request, best first: up to core::kLockedScanMaxSlots every slot in
// turn; above core::kOrderedScanMaxSlots random probes of slots that look free first; then the
// lowest slot that looks free, again and again past the ones that turn out held. "Looks free" is
// a read without the slot's mutex: the caller takes the mutex and looks again (slot_rows_free).
// A rate limit's grant tries first the slots above the highest one any row is on (never used, or
// pruned: taking one only inserts), then (above core::kOrderedScanMaxSlots) a few random probes,
// then the slots whose grants' windows have passed (from the index of rate grants in grant order;
// reusing one also records the passed grant as ended), and only then the others: at any n, a
// grant on a window that has room finds it in a few index reads.
// A window's slots are so used up in order, as a lease's are not (random probes): a window of
// many slots would otherwise be left with scattered unused slots that only probes could find.
// A lease claimer (a grant is one) waits for the mutex of its first pick there too: skipping to
// the next slot left the skipped one empty below a taken one whenever its holder then gave it
// back (a grant of several permits or a set that could not have them all), and only probes find
// such a hole (measured: a hostile caller's refused grants of 1000 made 53 holes, and then 99 of
// 400 single grants were refused with room).
struct SlotCandidates {
    enum Phase : unsigned char {
        kAboveHighest,
        kRatePassed,
        kEverySlot,
        kRandomProbes,
        kLowestFree
    };
    ClaimsTable *table;
    const SlotRequest *request;
    SlotGrant *grant;  // where the reads note the earliest expiry they see
    TimestampTz now;
    Phase phase;
    Phase after_rate;  // the phase a rate grant goes on with
    // kEverySlot, kAboveHighest: the next slot; kLowestFree: where the next look starts.
    int32 next;
    int probes_left;
    core::ProbeSequence probes;
    // kRatePassed: slots whose grants' windows have passed (room for the permits and a few
    // more, which concurrent grants may take first).
    int32 *passed;
    int passed_room;
    int passed_count;
    int passed_next;
    int passed_start;
    bool passed_pending;  // a rate grant's first probes are under way; the passed windows next
};
void candidates_begin(SlotCandidates *candidates, ClaimsTable *table, const SlotRequest &request,
                      SlotGrant *grant);
// The next slot to try; false when there is none left.
bool candidates_next(SlotCandidates *candidates, int32 *slot);

// Under the slot's mutex: whether the slot's rows leave it free. With `reap_expired`, expired
// leases are recorded as timed out on the way (a lease claimer's insert needs their rows ended);
// false then also when one of them is locked by another transaction.
bool slot_rows_free(ClaimsTable *table, const SlotRequest &request, int32 slot, bool reap_expired,
                    SlotGrant *grant);

// A declaration lowered while holders hold slots above its new n (request.declared_n up to
// request.peak_n): how many of those slots are held, by a row or a lock, read without their
// mutexes. The count can only fall while the claim looks: nobody takes a slot above n.
int32 holders_above_n(ClaimsTable *table, const SlotRequest &request, SlotGrant *grant);

}  // namespace pgsem
