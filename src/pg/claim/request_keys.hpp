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

// The same for a set (sem_claim_all): the keys' locks taken in the set's order; true, with
// *grant filled, when the key names one live claim on every member; an error (55000) when it
// names claims on some members only, or several claims.
bool recall_keyed_set(const SetRequest &set, SetGrant *grant);

}  // namespace pgsem
