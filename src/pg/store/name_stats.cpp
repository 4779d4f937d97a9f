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

static_assert(std::is_trivially_copyable_v<core::ClaimTally>);

struct Entry {
    char name[core::kMaxNameBytes + 1];  // the hash key: a NUL-terminated name
    slock_t mutex;                       // over the fields below
    TimestampTz since;
    TimestampTz last_active;
    core::ClaimTally tally;
    core::PauseSpan pause;
};

struct Control {
    LWLock *lock;  // over the table's rows (shared: adding to one; exclusive: a new row, a reset)
    TimestampTz reset_at;
    slock_t other_mutex;  // over the fields below
    TimestampTz other_since;
    TimestampTz other_last_active;
    int64 names_folded;
    core::ClaimTally other;
    uint64 other_paused_micros;
};

shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;
Control *control = nullptr;
HTAB *table = nullptr;

void request_shmem() {
    if (previous_shmem_request != nullptr) previous_shmem_request();
    RequestAddinShmemSpace(MAXALIGN(sizeof(Control)));
    RequestAddinShmemSpace(hash_estimate_size(stats_max_names, sizeof(Entry)));
    RequestNamedLWLockTranche(kTrancheName, 1);
}

void create_shmem() {
    if (previous_shmem_startup != nullptr) previous_shmem_startup();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    control = static_cast<Control *>(ShmemInitStruct(kControlName, sizeof(Control), &found));
    if (!found) {
        control->lock = &(GetNamedLWLockTranche(kTrancheName))->lock;
        control->reset_at = GetCurrentTimestamp();
        SpinLockInit(&control->other_mutex);
        control->other_since = 0;
        control->other_last_active = 0;
        control->names_folded = 0;
        control->other = core::ClaimTally{};
        control->other_paused_micros = 0;
    }
    HASHCTL info;
    memset(&info, 0, sizeof(info));
    info.keysize = core::kMaxNameBytes + 1;
    info.entrysize = sizeof(Entry);
    table = ShmemInitHash(kTableName, stats_max_names, stats_max_names, &info,
                          HASH_ELEM | HASH_STRINGS);
    LWLockRelease(AddinShmemInitLock);
}

// The hash key of a name: NUL-terminated in a buffer of the key's size.
void name_key_of(const char *name, size_t length, char *key) {
    memset(key, 0, core::kMaxNameBytes + 1);
    memcpy(key, name, Min(length, core::kMaxNameBytes));
}

void name_key_of(const text *name, char *key) {
    name_key_of(VARDATA_ANY(name), static_cast<size_t>(VARSIZE_ANY_EXHDR(name)), key);
}

// What one event does to a name's row (under its spinlock), or to the other row when the name
// has none (under the other row's).
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

void add_to_other(const core::ClaimTally &delta, uint64 paused, TimestampTz since, TimestampTz now,
                  int64 names) {
    SpinLockAcquire(&control->other_mutex);
    PGSEM_NOTHROW(core::merge(control->other, delta));
    control->other_paused_micros += paused;
    if (control->other_since == 0 || (since != 0 && since < control->other_since))
        control->other_since = since;
    if (now > control->other_last_active) control->other_last_active = now;
    control->names_folded += names;
    SpinLockRelease(&control->other_mutex);
}

// Under the lock held exclusively, with the table full: folds the least recently active row into
// the other row, making room for one. O(stats_max_names), paid once per name past the limit.
void fold_least_recent(TimestampTz now) {
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, table);
    Entry *oldest = nullptr;
    for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
         entry = static_cast<Entry *>(hash_seq_search(&scan)))
        if (oldest == nullptr || entry->last_active < oldest->last_active) oldest = entry;
    if (oldest == nullptr) return;
    const uint64 paused = PGSEM_NOTHROW(core::paused_by(oldest->pause, now));
    add_to_other(oldest->tally, paused, oldest->since, oldest->last_active, 1);
    (void)hash_search(table, oldest->name, HASH_REMOVE, nullptr);
}

void change_name(const char *name, size_t length, const Change &change) {
    char key[core::kMaxNameBytes + 1];
    name_key_of(name, length, key);
    const TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(control->lock, LW_SHARED);
    auto *entry = static_cast<Entry *>(hash_search(table, key, HASH_FIND, nullptr));
    if (entry != nullptr) {
        apply_to_entry(entry, change, now);
        LWLockRelease(control->lock);
        return;
    }
    LWLockRelease(control->lock);
    LWLockAcquire(control->lock, LW_EXCLUSIVE);
    entry = static_cast<Entry *>(hash_search(table, key, HASH_FIND, nullptr));
    if (entry == nullptr) {
        if (hash_get_num_entries(table) >= stats_max_names) fold_least_recent(now);
        bool found = false;
        // HASH_ENTER_NULL: no error at the end of a transaction, if memory ran out after all.
        entry = static_cast<Entry *>(hash_search(table, key, HASH_ENTER_NULL, &found));
        if (entry != nullptr && !found) {
            SpinLockInit(&entry->mutex);
            entry->since = now;
            entry->last_active = now;
            entry->tally = core::ClaimTally{};
            entry->pause = core::PauseSpan{};
        }
    }
    if (entry != nullptr)
        apply_to_entry(entry, change, now);
    else if (change.tally != nullptr)
        add_to_other(*change.tally, 0, now, now, 0);  // a pause of a name with no room: not kept
    LWLockRelease(control->lock);
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

void name_stats_pause(const text *name, TimestampTz until) {
    if (!name_stats_ready()) return;
    change_name(VARDATA_ANY(name), static_cast<size_t>(VARSIZE_ANY_EXHDR(name)),
                Change{nullptr, true, until});
}

int name_stats_copy(NameStatsRow **rows) {
    *rows = nullptr;
    if (!name_stats_ready()) return 0;
    const TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(control->lock, LW_SHARED);
    const long entries = hash_get_num_entries(table);
    auto *out = static_cast<NameStatsRow *>(
        palloc0(sizeof(NameStatsRow) * static_cast<size_t>(entries + 1)));
    int count = 0;
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, table);
    for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
         entry = static_cast<Entry *>(hash_seq_search(&scan))) {
        if (count > entries) {  // cannot happen under the lock; a scan must end anyway
            hash_seq_term(&scan);
            break;
        }
        NameStatsRow &row = out[count++];
        row.other = false;
        memcpy(row.name, entry->name, sizeof(row.name));
        SpinLockAcquire(&entry->mutex);
        row.since = entry->since;
        row.last_active = entry->last_active;
        row.tally = entry->tally;
        const core::PauseSpan pause = entry->pause;
        SpinLockRelease(&entry->mutex);
        row.paused_micros = PGSEM_NOTHROW(core::paused_by(pause, now));
    }
    NameStatsRow &other = out[count];
    SpinLockAcquire(&control->other_mutex);
    other.other = true;
    other.since = control->other_since;
    other.last_active = control->other_last_active;
    other.names_folded = control->names_folded;
    other.tally = control->other;
    other.paused_micros = control->other_paused_micros;
    SpinLockRelease(&control->other_mutex);
    LWLockRelease(control->lock);
    if (other.names_folded > 0 || !PGSEM_NOTHROW(core::empty(other.tally)) ||
        other.paused_micros > 0)
        ++count;
    *rows = out;
    return count;
}

int64 name_stats_reset(const text *name) {
    if (!name_stats_ready()) return 0;
    int64 forgotten = 0;
    LWLockAcquire(control->lock, LW_EXCLUSIVE);
    if (name != nullptr) {
        char key[core::kMaxNameBytes + 1];
        name_key_of(name, key);
        if (hash_search(table, key, HASH_REMOVE, nullptr) != nullptr) forgotten = 1;
    } else {
        HASH_SEQ_STATUS scan;
        hash_seq_init(&scan, table);
        for (auto *entry = static_cast<Entry *>(hash_seq_search(&scan)); entry != nullptr;
             entry = static_cast<Entry *>(hash_seq_search(&scan))) {
            // Removing the entry just returned is allowed during a scan (dynahash.c).
            (void)hash_search(table, entry->name, HASH_REMOVE, nullptr);
            ++forgotten;
        }
        SpinLockAcquire(&control->other_mutex);
        if (control->names_folded > 0 || !PGSEM_NOTHROW(core::empty(control->other))) ++forgotten;
        control->other = core::ClaimTally{};
        control->other_since = 0;
        control->other_last_active = 0;
        control->names_folded = 0;
        control->other_paused_micros = 0;
        SpinLockRelease(&control->other_mutex);
        control->reset_at = GetCurrentTimestamp();
    }
    LWLockRelease(control->lock);
    return forgotten;
}

TimestampTz name_stats_reset_at() {
    if (!name_stats_ready()) return 0;
    LWLockAcquire(control->lock, LW_SHARED);
    const TimestampTz at = control->reset_at;
    LWLockRelease(control->lock);
    return at;
}

}  // namespace pgsem
