// The words of a claim, shared by every floor above this one: what kind it is, what it asks for,
// what it got.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// A lease is a row of pgsem.claims with an expiry and an id; a transaction or session claim is a
// lock in the lock manager, held until its transaction or session ends (or it is released).
// Names compare bytewise (they are COLLATE "C" in the table).
inline bool same_text(const text *a, const text *b) {
    return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
           memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

enum class ClaimKind : unsigned char { kLease, kTransaction, kSession };

struct SlotRequest {
    const text *name;
    int32 n;  // the slots are those below n: the caller's n, or the declared one (below)
    // The n the caller passed; 0 when it left n to the semaphore's declaration
    // (claim/declared_limits.hpp fills n in).
    int32 asked_n;
    ClaimKind kind;
    int64 lease;    // microseconds, for kLease
    int32 permits;  // slots taken at once, all or none: 1 up to n
    // kLease: the caller's request key, or nullptr. A claim made with a key that has a live claim
    // of the same role on the name answers with that claim (claim/request_keys.hpp).
    const text *request_key;
    // Set with n by the declaration (claim/declared_limits.hpp). A declaration lowered while
    // its holders hold slots above the new n (or made over live claims): holders on slots in
    // [declared_n, peak_n) count against n, so that no claim succeeds until fewer than n hold
    // the semaphore. Both 0: none, the usual case.
    int32 declared_n;
    int32 peak_n;
    // kLease: a rate limit's grant (sem_rate). Its lease is the window `per`, and nothing ends
    // it before that: each permit comes back exactly `per` after it was granted.
    bool rate;
    // A rate grant whose per the name's declaration gives (sem_declare_rate): the caller left it
    // out, and its lease is set from the declaration at each look (claim/declared_limits.hpp).
    bool per_declared = false;
    // A member of sem_claim_all with no per of its own: a rate grant (with the declared per) if
    // its name is declared a sliding window, else a semaphore's lease.
    bool rate_if_declared = false;
};

struct SlotGrant {
    bool granted;
    int32 slot;      // the lowest of the claim's slots: what names a transaction or session claim
    int64 claim_id;  // kLease: the id of every row of the claim
    // When not granted: the earliest expiry of a lease that holds a slot below n, the moment a
    // slot may free up with no release at all (0: none).
    TimestampTz next_expiry;
    // When not granted: how many free slots the look found, fewer than the claim's permits.
    int32 free_seen;
};

// A claim on several semaphores at once (sem_claim_all and friends): one request per semaphore,
// in the canonical order (src/core/claim_sets.hpp), all of one kind, lease and request key. It
// holds every member's slots or none.
struct SetRequest {
    const SlotRequest *members;
    int32 count;
};

struct SetGrant {
    bool granted;
    int64 claim_id;  // kLease: the id of every row of the claim, on every semaphore
    int32 *slots;    // each member's lowest slot, in member order (room for count, the caller's)
};

}  // namespace pgsem
