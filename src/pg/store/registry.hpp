// The registry: what one session cannot learn of another's transaction and session claims and
// of its wait from the lock manager alone -- the semaphore's name, n, since when -- kept in shared
// memory for the monitoring views.
//
// It is for display, and for the quotas per role. The lock manager says who holds and who waits
// (a view shows an entry only when the locks agree), and nothing that decides whether a slot is
// free reads the registry; a role's quota (claim/role_quotas.hpp) counts its entries, under a
// mutex of the role's that every writer of that role's entries holds. Each backend
// writes its own entry and nobody else's, with a change counter that readers check (the scheme of
// PgBackendStatus), so writing takes no lock.
//
// Shared memory: a few bytes of the main segment name a dynamic shared memory segment that holds
// the entries, created by the first backend that needs it and kept until the server stops.
// Preloading pgsem reserves those few bytes at startup; without it they come from the server's
// spare shared memory, as contrib's autoprewarm does when it is not preloaded.
#pragma once

#include "core/arguments.hpp"
#include "pg/base/postgres_api.hpp"
#include "pg/base/claim_types.hpp"

namespace pgsem {

// Called from _PG_init: when preloading, reserves the main-segment bytes.
void install_registry_shmem_hooks();

// Attaches this backend to the registry if it is not yet, and says whether it is. Called before a
// claim: not preloaded, the registry's few bytes of control come from the server's spare shared
// memory, and it is better to take them while there is room (a lock table that grows takes the
// rest) than at the end of a claim; without them the views show this backend's claims nameless.
bool registry_attach();

// The session ends: its entry is cleared.
void registry_leave();

// A transaction or session claim as the registry lists it.
struct RegisteredClaim {
    ClaimKind kind;
    const text *name;
    int32 slot;
    int32 n;
    Oid role;  // current_user when claimed
    TimestampTz since;
};

// The calling backend's own entry. It lists up to kListedClaims claims and counts the others;
// when listed ones end, the backend lists others in their place (registry_list_claim).
void registry_note_claim(const RegisteredClaim &claim);
void registry_forget_claim(ClaimKind kind, const text *name, int32 slot);
// The transaction's claims ended; `session_claims` session claims are still held.
void registry_forget_transaction_claims(int session_claims);
// Whether the entry has room for a claim that is held but not listed.
bool registry_has_room_for_unlisted();
// Lists a held claim that was counted but not listed, unless it is listed already.
void registry_list_claim(const RegisteredClaim &claim);
// `timed`: a wait that time alone ends (a token bucket's: nobody's release), which no deadlock
// check may take for a stuck one.
void registry_note_wait(ClaimKind kind, const text *name, int32 n, int32 permits, TimestampTz since,
                        bool timed);
void registry_forget_wait();

// The n that backend `pid` waits with for the semaphore whose key is `key` (locks.hpp's
// name_key), its name (palloc'd), and whether time alone ends it; false when its entry says
// nothing of such a wait.
bool registry_find_wait(int32 pid, uint64 key, int32 *n, text **name, bool *timed);

// In this database: the transaction and session claims listed as made by `role`, one per slot,
// and the waits of `role` by backends other than this one. False when the registry is out of
// reach (its shared memory could not be had).
struct RoleTally {
    int32 claims;
    int32 waits;
};
bool registry_tally_role(Oid role, RoleTally *tally);
// Whether this backend's entry can list `slots` more claims (not merely count them).
bool registry_can_list(int32 slots);

// Copies of every entry of this database, palloc'd. Names are NUL-terminated.
struct ListedClaim {
    int32 pid;
    Oid role;
    ClaimKind kind;
    int32 slot;
    int32 n;
    TimestampTz since;
    char application_name[NAMEDATALEN];
    char name[core::kMaxNameBytes + 1];
};
struct ListedWait {
    int32 pid;
    Oid role;
    ClaimKind kind;
    int32 n;
    int32 permits;
    bool timed;
    TimestampTz since;
    char application_name[NAMEDATALEN];
    char name[core::kMaxNameBytes + 1];
};
struct RegistryCopy {
    ListedClaim *claims;
    int claim_count;
    ListedWait *waits;
    int wait_count;
    int unlisted_claims;  // claims sessions hold beyond what their entries have room for
};
void registry_copy(RegistryCopy *copy);

}  // namespace pgsem
