// The table pgsem.declarations (1.2): semaphores and prefixes of names an operator declared with
// sem_declare -- capacity, maximum lease and wait, owner, who may claim -- read by every claim
// from a copy each backend keeps, and written by the declaration functions.
//
// The copy: loaded whole (an operator writes a handful of rows, not one per claim) with the
// latest committed state, and dropped when the relcache says the table changed. Every statement
// that changes the table fires the trigger pgsem.declarations_changed (declarations_changed()
// below), which sends that invalidation when its transaction commits; a claim processes pending
// invalidations first, so it sees every change committed before it began -- also inside a
// transaction that began earlier, and a waiter at each look.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// What a declaration declares: a semaphore of n slots, or a rate limit of n permits per `per`,
// counted in a sliding window (sem_rate) or a token bucket holding up to `burst` (sem_bucket).
enum class DeclaredKind : unsigned char { kSemaphore, kWindow, kBucket };

struct Declaration {
    const char *pattern;  // as declared ("payments-api", "tenant:*"), NUL-terminated
    int32 n;
    // Above n: holders may remain on slots up to here, from before the declaration was lowered
    // (or made); they count against n (claim/declared_limits.hpp). 0: none.
    int32 peak_n;
    int64 max_lease;  // microseconds; 0: no maximum
    int64 max_wait;   // microseconds; -1: no maximum
    DeclaredKind kind;
    int64 per;    // microseconds, for a rate limit; 0 for a semaphore
    int32 burst;  // for a token bucket; 0 otherwise
    Oid owner;
    bool public_claims;  // PUBLIC may claim
    int grantee_count;
    const Oid *grantees;  // roles granted the right to claim
};

// Called from _PG_init.
void install_declarations_cache_invalidation();

// The declaration `name` falls under (core/name_patterns.hpp), or nullptr: none, or no table
// (SQL objects older than 1.2). Valid until the next call.
const Declaration *find_declaration(const text *name);

// The declaration of the longest prefix under which the names of `pattern` fall today (its own
// row aside), or nullptr; and how many declarations there are. For a new declaration.
const Declaration *find_covering_prefix(const text *pattern);
int declarations_count();

// For the trigger on pgsem.declarations: the copies of every backend are out of date once this
// transaction commits.
void declarations_changed(Oid relid);

// A declaration's limits as its function gives them: NULL maxima are none; per and burst as
// Declaration has them (the kind says which apply).
struct DeclaredLimits {
    int32 n;
    const Interval *max_lease;
    const Interval *max_wait;
    DeclaredKind kind;
    const Interval *per;
    int32 burst;
};

// ---- writes, as the table's owner (the caller checked the right to make them) ---------------

// The declaration of exactly `pattern`, its row locked until the transaction ends; false if none.
bool declarations_lock(const text *pattern, Declaration *found);
// Creates a declaration (owner: `owner`) or changes one's limits; NULL maxima are none. Both set
// peak_n from the slots held now under the pattern, and a lowering keeps the n it lowers from:
// its holders' claims are in flight or live above the new n. Insert returns false when a
// concurrent one made the declaration first.
bool declarations_insert(const text *pattern, const DeclaredLimits &limits, Oid owner);
void declarations_update(const text *pattern, const DeclaredLimits &limits);
// Removes the declaration of `pattern`; its names fall under `covering` (a prefix declaration, or
// nullptr), whose peak_n then counts their holders and the n they had. False if none.
bool declarations_delete(const text *pattern, const char *covering);
// For a declaration that would make the names of `pattern` a sliding window or a token bucket:
// whether a name under it has state of the other kind in force, which the new kind would not
// count -- grants of a window whose windows have not passed (for a bucket), a bucket not full
// again (for a window). One such name and when the last of that state ends go to *name and
// *until. Read with the latest snapshot (at repeatable read too), under the lock that keeps rate
// grants out meanwhile (store/locks.hpp: lock_rate_declarations).
bool declarations_other_rate_in_force(const text *pattern, DeclaredKind kind, char **name,
                                      TimestampTz *until);
// Gives (`granted`) or takes the right to claim to `grantee`, InvalidOid meaning PUBLIC.
void declarations_set_grant(const text *pattern, Oid grantee, bool granted);

}  // namespace pgsem
