#include "core/arguments.hpp"
#include "core/claim_tally.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/name_stats.hpp"

namespace pgsem {

int stats_max_names = 1000;
bool track_stats = true;

namespace {

constexpr const char *kControlName = "pgsem name stats";
constexpr const char *kTableName = "pgsem name stats table";
constexpr const char *kTrancheName = "pgsem_stats";
// Rows beyond stats_max_names for the `other` rows, one per database that folded names.
constexpr int kOtherRows = 64;

static_assert(std::is_trivially_copyable_v<core::ClaimTally>);

// A name of a database; the empty name is the database's `other` row (no semaphore has it).
struct Key {
    Oid database;
    char name[core::kMaxNameBytes + 1];  // NUL-terminated, zero-padded: keys compare bytewise
};

struct Entry {
    Key key;
    slock_t mutex;  // over the fields below
    TimestampTz since;
    TimestampTz last_active;
    int64 names_folded;  // the other row: how many names it holds
    core::ClaimTally tally;
    core::PauseSpan pause;
};

// A fold scans every row (at most 10,000) with the table locked exclusively: at most ten a
// second, so that names churning past the limit cannot stall every counted event (measured: one
// role churning new names past 100,000 rows took another database's claims from 4,539 to 93 per
// second). Between folds, a new name counts in its database's other row.
constexpr TimestampTz kFoldEveryMicros = 100 * core::kMicrosPerMilli;

struct Control {
    LWLock *lock;       // over the table (shared: changing a row; exclusive: a new row, a reset)
    int named_entries;  // rows of names (not `other` rows), under the lock held exclusively
    TimestampTz last_fold;
};

shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;
Control *control = nullptr;
HTAB *table = nullptr;

long table_size() {
    return static_cast<long>(stats_max_names) + kOtherRows;
}

void request_shmem() {
    if (previous_shmem_request != nullptr) previous_shmem_request();
    RequestAddinShmemSpace(MAXALIGN(sizeof(Control)));
    RequestAddinShmemSpace(hash_estimate_size(table_size(), sizeof(Entry)));
    RequestNamedLWLockTranche(kTrancheName, 1);
}

void create_shmem() {
    if (previous_shmem_startup != nullptr) previous_shmem_startup();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    control = static_cast<Control *>(ShmemInitStruct(kControlName, sizeof(Control), &found));
    if (!found) {
        control->lock = &(GetNamedLWLockTranche(kTrancheName))->lock;
        control->named_entries = 0;
        control->last_fold = 0;
    }
    HASHCTL info;
    memset(&info, 0, sizeof(info));
    info.keysize = sizeof(Key);
    info.entrysize = sizeof(Entry);
    table = ShmemInitHash(kTableName, table_size(), table_size(), &info, HASH_ELEM | HASH_BLOBS);
    LWLockRelease(AddinShmemInitLock);
}

void key_of(const char *name, size_t length, Key *key) {
    memset(key, 0, sizeof(Key));
    key->database = MyDatabaseId;
    memcpy(key->name, name, Min(length, core::kMaxNameBytes));
}

void key_of(const text *name, Key *key) {
    key_of(VARDATA_ANY(name), static_cast<size_t>(VARSIZE_ANY_EXHDR(name)), key);
}

bool is_other(const Entry &entry) {
    return entry.key.name[0] == '\0';
}

void init_entry(Entry *entry, TimestampTz since) {
    SpinLockInit(&entry->mutex);
    entry->since = since;
    entry->last_active = since;
    entry->names_folded = 0;
    entry->tally = core::ClaimTally{};
    entry->pause = core::PauseSpan{};
}

// What one event does to a row (under its spinlock).
struct Change {
    const core::ClaimTally *tally;  // added, if set
    bool pause;                     // the pause in force from now on ends at pause_until (0: none)
    TimestampTz pause_until;
};

void apply_to_entry(Entry *entry, const Change &change, TimestampTz now) {
    SpinLockAcquire(&entry->mutex);
    if (change.tally != nullptr) PGSEM_NOTHROW(core::merge(entry->tally, *change.tally));
    if (change.pause) PGSEM_NOTHROW(core::pause_change(entry->pause, now, change.pause_until));
    entry->last_active = now;
    SpinLockRelease(&entry->mutex);
}

// Under the lock held exclusively: the other row of `database`, made if need be (nullptr when
// the table has no room even for it).
Entry *other_row(Oid database, TimestampTz now) {
    Key key;
    memset(&key, 0, sizeof(key));
    key.database = database;
    auto *entry = static_cast<Entry *>(hash_search(table, &key, HASH_FIND, nullptr));
    if (entry != nullptr) return entry;
    // Never past the rows startup reserved: the table would take the server's spare shared
    // memory, which the lock table grows into.
    if (hash_get_num_entries(table) >= table_size()) return nullptr;
    bool found = false;
    entry = static_cast<Entry *>(hash_search(table, &key, HASH_ENTER_NULL, &found));
    if (entry != nullptr && !found) {
        init_entry(entry, now);
        entry->since = 0;  // set by the first name folded into it
    }
    return entry;
}

// Under the lock held exclusively, with stats_max_names rows of names: folds the least recently
// active name of any database into its database's other row, making room for one.
// O(stats_max_names), paid once per new name past the limit.
void fold_least_recent(TimestampTz now) {
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, table);
    Entry *oldest = nullptr;
    for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
         entry = static_cast<Entry *>(hash_seq_search(&scan)))
        if (!is_other(*entry) && (oldest == nullptr || entry->last_active < oldest->last_active))
            oldest = entry;
    if (oldest == nullptr) return;
    Entry *other = other_row(oldest->key.database, now);
    if (other != nullptr) {
        const uint64 paused = PGSEM_NOTHROW(core::paused_by(oldest->pause, now));
        PGSEM_NOTHROW(core::merge(other->tally, oldest->tally));
        other->pause.paused_micros += paused;
        if (other->since == 0 || oldest->since < other->since) other->since = oldest->since;
        other->last_active = Max(other->last_active, oldest->last_active);
        ++other->names_folded;
    }
    (void)hash_search(table, &oldest->key, HASH_REMOVE, nullptr);
    --control->named_entries;
}

void change_name(const char *name, size_t length, const Change &change) {
    Key key;
    key_of(name, length, &key);
    const TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(control->lock, LW_SHARED);
    auto *entry = static_cast<Entry *>(hash_search(table, &key, HASH_FIND, nullptr));
    if (entry != nullptr) {
        apply_to_entry(entry, change, now);
        LWLockRelease(control->lock);
        return;
    }
    LWLockRelease(control->lock);
    LWLockAcquire(control->lock, LW_EXCLUSIVE);
    entry = static_cast<Entry *>(hash_search(table, &key, HASH_FIND, nullptr));
    if (entry == nullptr && control->named_entries >= stats_max_names &&
        now - control->last_fold >= kFoldEveryMicros) {
        fold_least_recent(now);
        control->last_fold = now;
    }
    if (entry == nullptr && control->named_entries < stats_max_names &&
        hash_get_num_entries(table) < table_size()) {
        bool found = false;
        // HASH_ENTER_NULL: no error at the end of a transaction, if memory ran out after all.
        entry = static_cast<Entry *>(hash_search(table, &key, HASH_ENTER_NULL, &found));
        if (entry != nullptr && !found) {
            init_entry(entry, now);
            ++control->named_entries;
        }
    }
    if (entry != nullptr) {
        apply_to_entry(entry, change, now);
    } else if (change.tally != nullptr) {
        // No row for the name (the table full and folded less than a second ago, or shared
        // memory gone): its counts go to its database's other row; a pause is not kept there.
        entry = other_row(MyDatabaseId, now);
        if (entry != nullptr) apply_to_entry(entry, Change{change.tally, false, 0}, now);
    }
    LWLockRelease(control->lock);
}

// Under the lock held exclusively: forgets a row's counters. A name paused now keeps its row, its
// pause counting from now (a new row would know of no pause in force); the others go. Removing
// the entry a scan just returned is allowed during the scan (dynahash.c).
void forget_entry(Entry *entry, TimestampTz now) {
    const TimestampTz paused_until = entry->pause.until;
    if (!is_other(*entry) && paused_until > now) {
        init_entry(entry, now);
        PGSEM_NOTHROW(core::pause_change(entry->pause, now, paused_until));
        return;
    }
    if (!is_other(*entry)) --control->named_entries;
    (void)hash_search(table, &entry->key, HASH_REMOVE, nullptr);
}

}  // namespace

void install_name_stats_shmem_hooks() {
    if (!process_shared_preload_libraries_in_progress) return;
    previous_shmem_request = shmem_request_hook;
    shmem_request_hook = request_shmem;
    previous_shmem_startup = shmem_startup_hook;
    shmem_startup_hook = create_shmem;
}

bool name_stats_ready() {
    return control != nullptr && table != nullptr;
}

bool name_stats_counting() {
    return track_stats && name_stats_ready();
}

void name_stats_add(const text *name, const core::ClaimTally &delta) {
    name_stats_add_bytes(VARDATA_ANY(name), static_cast<size_t>(VARSIZE_ANY_EXHDR(name)), delta);
}

void name_stats_add_bytes(const char *name, size_t length, const core::ClaimTally &delta) {
    if (!name_stats_ready() || PGSEM_NOTHROW(core::empty(delta))) return;
    change_name(name, length, Change{&delta, false, 0});
}

void name_stats_pause(const char *name, size_t length, TimestampTz until) {
    if (!name_stats_ready()) return;
    change_name(name, length, Change{nullptr, true, until});
}

void name_stats_forget_dropped_databases() {
    if (!name_stats_ready()) return;
    // The databases with rows, read in shared mode; a row of a dropped one is only looked at
    // again (exclusively) if there is one.
    constexpr int kMaxDatabases = 256;
    Oid seen[kMaxDatabases];
    int seen_count = 0;
    LWLockAcquire(control->lock, LW_SHARED);
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, table);
    for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
         entry = static_cast<Entry *>(hash_seq_search(&scan))) {
        bool known = false;
        for (int i = 0; i < seen_count && !known; ++i) known = seen[i] == entry->key.database;
        if (!known && seen_count < kMaxDatabases) seen[seen_count++] = entry->key.database;
    }
    LWLockRelease(control->lock);
    for (int i = 0; i < seen_count; ++i) {
        if (SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(seen[i]))) continue;
        LWLockAcquire(control->lock, LW_EXCLUSIVE);
        hash_seq_init(&scan, table);
        for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
             entry = static_cast<Entry *>(hash_seq_search(&scan))) {
            if (entry->key.database != seen[i]) continue;
            if (!is_other(*entry)) --control->named_entries;
            (void)hash_search(table, &entry->key, HASH_REMOVE, nullptr);
        }
        LWLockRelease(control->lock);
    }
}

int name_stats_copy(NameStatsRow **rows) {
    *rows = nullptr;
    if (!name_stats_ready()) return 0;
    const TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(control->lock, LW_SHARED);
    const long entries = hash_get_num_entries(table);
    auto *out = static_cast<NameStatsRow *>(
        palloc0(sizeof(NameStatsRow) * static_cast<size_t>(Max(entries, 1L))));
    int count = 0;
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, table);
    for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
         entry = static_cast<Entry *>(hash_seq_search(&scan))) {
        if (entry->key.database != MyDatabaseId) continue;
        if (count >= entries) {  // cannot happen under the lock; a scan must end anyway
            hash_seq_term(&scan);
            break;
        }
        NameStatsRow &row = out[count++];
        row.other = is_other(*entry);
        memcpy(row.name, entry->key.name, sizeof(row.name));
        SpinLockAcquire(&entry->mutex);
        row.since = entry->since;
        row.last_active = entry->last_active;
        row.names_folded = entry->names_folded;
        row.tally = entry->tally;
        const core::PauseSpan pause = entry->pause;
        SpinLockRelease(&entry->mutex);
        row.paused_micros = PGSEM_NOTHROW(core::paused_by(pause, now));
    }
    LWLockRelease(control->lock);
    *rows = out;
    return count;
}

int64 name_stats_reset(const text *name) {
    if (!name_stats_ready()) return 0;
    int64 forgotten = 0;
    LWLockAcquire(control->lock, LW_EXCLUSIVE);
    const TimestampTz now = GetCurrentTimestamp();
    if (name != nullptr) {
        Key key;
        key_of(name, &key);
        auto *entry = static_cast<Entry *>(hash_search(table, &key, HASH_FIND, nullptr));
        if (entry != nullptr) {
            forget_entry(entry, now);
            forgotten = 1;
        }
    } else {
        HASH_SEQ_STATUS scan;
        hash_seq_init(&scan, table);
        for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
             entry = static_cast<Entry *>(hash_seq_search(&scan))) {
            if (entry->key.database != MyDatabaseId) continue;
            forget_entry(entry, now);
            ++forgotten;
        }
    }
    LWLockRelease(control->lock);
    return forgotten;
}

}  // namespace pgsem
