// Release epochs: whether a slot of a semaphore may have been given back while a claimer looked.
//
// A look reads a semaphore's slots one after another, not all at one instant. If none was given
// back during the look, every slot it saw held was still held when it ended, so a NULL answer
// tells the truth about one instant. If one may have been, a caller that will not wait looks
// again (claim_sequence.cpp). These counters tell the two apart, so that the second look is paid
// only when a release overlapped the first, not on every refusal.
//
// Per bucket of names (names hash into kBuckets; two names that share a bucket only cost each
// other a second look), in shared memory:
//  - `active`: releases begun and not ended. A release begins before its slot can free (before the
//    commit that makes a row's change visible, before the lock manager lets go of a lock) and
//    ends after (where the first waiter is woken).
//  - `epoch`: releases ended.
// A look marks the epoch before it starts; it may trust a NULL when, after it, nothing is active
// and the epoch has not moved. A release that begins and never ends (an error between the two)
// leaves `active` up until its backend's transaction ends (release_epochs_end_begun): only a
// second look too many meanwhile. Where a slot frees with nothing begun before (a rolled-back
// lease claim, whose row frees as the rollback becomes visible, before any callback; DISCARD ALL),
// only the end counts: a look ending in the microseconds between may miss that release, as it
// would miss one a moment after it ended.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// Called from _PG_init: when preloading, reserves the counters' shared memory at startup.
void install_release_epochs_shmem_hooks();

// Attaches this backend to the counters (creating them if it is the first), and says whether it
// could: not preloaded, they come from the server's spare shared memory, which a lock table that
// grew can have used up, and then every refusal pays its second look. Called where an error is
// fine: before a claim, where a transaction first writes a lease row. The calls below that run
// at the end of a transaction use the counters only if this backend attached them before (a
// release that cannot be counted is a second look missed, not an error while aborting).
bool release_epochs_attach();

struct EpochMark {
    uint32 epoch;
    bool valid;  // false: no counters: always look again
};

// Before a look.
EpochMark release_epochs_mark(const text *name);
// After it: whether a release of `name`'s bucket may have overlapped it.
bool release_epochs_moved(const text *name, EpochMark mark);

// Around one release of a slot of `name`: begin before the slot can free, end after; `began`
// says whether this release began (one that could not only ends, and must not end another's
// begin in the same bucket).
void release_epochs_begin(const text *name);
void release_epochs_end(const text *name, bool began);
// The same for every bucket (a transaction that freed slots of too many names to list).
void release_epochs_begin_all();
void release_epochs_end_all();
// Ends what this backend began and has not ended (at the end of its transaction, at its exit).
void release_epochs_end_begun();

}  // namespace pgsem
