// The claim sequence: every claim of every kind -- a lease, a transaction claim, a session claim
// -- goes through claim(), which reads as the protocol:
//   1. admit: the arguments were checked by the SQL shim; here, primary or standby (and read-only
//      transactions for leases), a rate grant outside transaction blocks, and the warning for a
//      transaction claim that protects nothing;
//   2. look for a free slot, holding the line in share mode, which only an empty line allows;
//   3. wait in line, if the caller may wait and nobody passes anybody (waiting_line.hpp);
//   4. hold the slot, under its mutex: a lease row inserted, or a slot-holder lock taken -- the
//      only place that tells the kinds apart (hold_slot in claim_sequence.cpp);
//   5. after the grant: durability at commit, wake-ups at the end of the transaction, pruning.
#pragma once

#include "pg/base/claim_types.hpp"

namespace pgsem {

// Claims a slot for `request`, waiting up to `wait` microseconds for one (0: not at all).
// `function` names the SQL function in messages.
SlotGrant claim(const char *function, const SlotRequest &request, int64 wait);

// Claims every member of `set` at once, or nothing, waiting up to `wait` microseconds for the
// whole set: the same sequence, on each member's line and slots in the set's canonical order.
// Fills grant->slots; leases share one id.
void claim_all(const char *function, const SetRequest &set, int64 wait, SetGrant *grant);

}  // namespace pgsem
