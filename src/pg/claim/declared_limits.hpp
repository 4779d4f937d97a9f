// What a declaration (store/declarations.hpp) makes of a claim: the n it claims below, the lease
// and wait it may ask for, and whether its role may claim the name at all. The first step of the
// claim sequence after admission, and of every look of a waiter (a declared n may change while it
// waits).
#pragma once

#include "pg/base/claim_types.hpp"
#include "pg/store/buckets.hpp"

namespace pgsem {

// pgsem.require_declared (superuser only): undeclared names are refused. Defined in module.cpp.
extern bool require_declared;

// Fills request->n from the caller's n (request->asked_n) and the declaration the name falls
// under, and caps *wait at the declared maximum wait; errors, with nothing changed:
//   42501  the role may not claim the name (sem_grant), or it is undeclared and
//          pgsem.require_declared is on;
//   22004  no n given and the name is undeclared, or a rate grant with no per and the name is not
//          declared a sliding window;
//   22023  an n above the declared one, a lease above the declared maximum, permits above n, a
//          per other than a declared window's;
//   42809  a semaphore's claim on a name declared a rate limit, or a window's grant on a name
//          declared a token bucket.
// A lease longer than the maximum is refused, not shortened: its holder counts on having it
// that long, and fences against a lease that ended early would fail its writes at random.
// A wait is shortened: a wait that ends early answers NULL, which every caller handles.
void apply_declaration(const char *function, SlotRequest *request, int64 *wait);

// For a waiter, before each look: what the declaration says now. The right to claim, the lease
// and the permits are checked again (a revoke, a lower maximum or a lower n refuse the waiter
// with the errors above); n is the declared one now, capped by the caller's own (a raise is the
// waiter's at once); a lower maximum wait moves *deadline to `since` plus it.
void reapply_declaration(const char *function, SlotRequest *request, TimestampTz since,
                         TimestampTz *deadline);

// A grant of a sliding window whose per the declaration gives (SlotRequest::per_declared), or a
// set member that is one if its name is declared a window (rate_if_declared): made a rate grant
// with the declared per, before the claim is admitted (a rate grant must be a statement of its
// own). Nothing else is checked here: apply_declaration does, and refuses what does not fit.
void resolve_declared_rate(SlotRequest *request);

// For a token bucket on `name`: its rule, from the caller's (`asked`; 0 for what it left out) and
// the declaration: a name declared a bucket (sem_declare_bucket) is granted under the declared
// rule alone (anything else the caller passes: 22023); otherwise the caller gives n and per
// (22004), its n and burst at most a declared semaphore's n, its per at most the declared maximum
// lease (22023). Then the right to claim (42501, or undeclared under pgsem.require_declared), a
// refill within a day and permits within the burst (22023); caps *wait at the declared maximum
// wait. 42809 for a name declared a sliding window. The reapply form is for a waiter's every
// look, as reapply_declaration is: a revoke or a change refuses it, or moves its rule.
BucketRule apply_bucket_declaration(const char *function, const text *name, const BucketRule &asked,
                                    int32 permits, int64 *wait);
BucketRule reapply_bucket_declaration(const char *function, const text *name,
                                      const BucketRule &asked, int32 permits, TimestampTz since,
                                      TimestampTz *deadline);

// For an act on `name` that needs the right to claim it (sem_pause): 42501 without it, as a
// claim would get.
void require_right_to_claim(const char *function, const text *name);

// For a renewal of a lease on `name` for `lease` microseconds: 22023 above the declared maximum.
void require_lease_within_declared(const char *function, const text *name, int64 lease);

}  // namespace pgsem
