// Retry-safe claims: a lease claimed with a request key names the claim it made, so that a client
// that never saw the answer (its connection dropped after the grant committed) can ask again and
// get the same claim instead of a second one.
//
// A key is the caller's role's, per semaphore name, compared bytewise. The row of a keyed claim's
// lowest slot carries the key, and the unique index claims_request_key over unended keyed rows is
// the final arbiter: one live claim per (name, role, key). Callers with the same key take turns
// on the key's lock (store/locks.hpp) for the rest of their transactions, so a retry never finds
// the first attempt in flight: it waits for that transaction -- committing, or still waiting in
// line -- to end, and then finds its claim, or nothing.
#pragma once

#include "pg/base/claim_types.hpp"

namespace pgsem {

// For a lease request with a request key, before the claim sequence looks for a slot: takes the
// key's lock and looks for the key's claim. True, with *grant filled, when the key names a claim
// that holds its slots (made by an earlier call, or by this transaction): the answer. False when
// a claim is to be made; the key's previous claim, if its lease ran out unrecorded, is recorded
// as timed out first, so that the new claim may carry the key.
bool recall_keyed_claim(const SlotRequest &request, SlotGrant *grant);

// Which members of a set carry its request key, on their lowest slot's row: its semaphores, and
// in a set of rate limits alone, those of the longest window. A rate limit's grant outlives a
// release of the set (nothing ends it before its window has passed): a key on it would stay
// taken, by a claim that has ended, for the rest of the window, and the next claim with that key
// could not carry it. So the key's claim lives as long as its semaphores' leases, or, with none,
// as long as its last window; its other rate grants are found by the claim's id.
bool set_member_keyed(const SetRequest &set, int32 m);

// The same for a set (sem_claim_all): the keys' locks taken in the set's order; true, with
// *grant filled, when the key names one live claim on every keyed member (set_member_keyed)
// that holds the grants of the other members too; an error (55000) when it names claims on some
// members only, several claims, or a claim that holds members the set does not name, or lacks
// a rate member the set names; 22023 when a member's n, permits or window differ.
bool recall_keyed_set(const SetRequest &set, SetGrant *grant);

}  // namespace pgsem
