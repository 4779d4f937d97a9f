// The counters behind sem_stats: a tally per semaphore or rate limit (core/claim_tally.hpp) of each
// database, in shared memory, since the server started or since sem_stats_reset().
//
// Only with pgsem in shared_preload_libraries: the table is sized at startup by
// pgsem.stats_max_names (names of all databases together). Without it nothing is counted
// (name_stats_ready() is false) and everything else works as before. A name gets its row with its
// first counted event; once stats_max_names names have rows, the least recently active one (of
// any database) is folded into its database's row for all such names (`other`) to make room (at
// most ten a second: a new name meanwhile counts in that row), and no more rows are made than
// startup reserved (stats_max_names and 64 `other` rows).
//
// Adding takes the table's lock in shared mode and the row's spinlock for the microseconds of the
// sums; a new name takes the lock exclusively. Nothing here raises an error: it is called at the
// end of transactions.
#pragma once

#include "core/arguments.hpp"
#include "core/claim_tally.hpp"
#include "pg/base/postgres_api.hpp"

namespace pgsem {

extern int stats_max_names;  // pgsem.stats_max_names
extern bool track_stats;     // pgsem.track_stats

// Called from _PG_init: when preloading, reserves the table's shared memory.
void install_name_stats_shmem_hooks();

// Whether counters exist in this server (pgsem was preloaded).
bool name_stats_ready();
// Whether this backend counts: counters exist and pgsem.track_stats is on.
bool name_stats_counting();

// Adds `delta` to `name`'s counters (`length` bytes at `name`, for callers that hold no text).
void name_stats_add(const text *name, const core::ClaimTally &delta);
void name_stats_add_bytes(const char *name, size_t length, const core::ClaimTally &delta);
// The pause in force on `name` (`length` bytes) from now on ends at `until` (0: lifted).
void name_stats_pause(const char *name, size_t length, TimestampTz until);

struct NameStatsRow {
    bool other;  // the row of the names folded to make room
    char name[core::kMaxNameBytes + 1];
    TimestampTz since;        // the row's first event (other: the first name folded into it)
    TimestampTz last_active;  // its latest event
    int64 names_folded;       // other: how many names were folded into it
    core::ClaimTally tally;
    uint64 paused_micros;  // time paused (sem_pause), up to now
};

// Forgets the rows of databases that no longer exist (reads the catalog: not at the end of a
// transaction). Called before the rows are shown.
void name_stats_forget_dropped_databases();

// Every row of this database, palloc'd, in *rows; the count.
int name_stats_copy(NameStatsRow **rows);

// Forgets the counters of `name` in this database (NULL: of every name of this database, and its
// other row). Returns the number of rows forgotten.
int64 name_stats_reset(const text *name);

}  // namespace pgsem
