#include "core/arguments.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/registry.hpp"

namespace pgsem {

namespace {

// Claims listed per session; more are held and counted but shown without a name.
constexpr int kListedClaims = 16;
// Changes with the layout of the entries: a library installed over a running server finds the
// segment an older one made, and must not read it with the wrong layout (it goes without).
constexpr uint32 kMagic = 0x50534d33;  // "PSM3": 1.2, with wait_permits and wait_timed
constexpr const char *kControlName = "pgsem";

struct NamedEntry {
    int32 length;  // of name, in bytes
    char name[core::kMaxNameBytes];
};

struct ClaimEntry {
    ClaimKind kind;
    Oid role;  // current_user when claimed
    int32 slot;
    int32 n;
    TimestampTz since;
    NamedEntry name;
};

// One per backend, written by that backend alone.
struct BackendEntry {
    pg_atomic_uint32 changecount;  // odd while its backend writes
    int32 pid;                     // 0: unused
    Oid database;
    char application_name[NAMEDATALEN];
    bool waiting;
    ClaimKind wait_kind;
    Oid wait_role;
    int32 wait_n;
    int32 wait_permits;
    bool wait_timed;  // a wait that only time ends (a token bucket's)
    TimestampTz wait_since;
    NamedEntry wait_name;
    int32 claim_count;  // listed in claims[]
    int32 unlisted;     // held beyond those
    ClaimEntry claims[kListedClaims];
};

struct Segment {
    uint32 magic;
    int32 entry_count;
    BackendEntry entries[FLEXIBLE_ARRAY_MEMBER];
};

// In the main shared memory segment: where the registry is.
struct Control {
    dsm_handle registry;
};

shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;
Segment *segment = nullptr;  // this backend's mapping
BackendEntry *mine = nullptr;

void request_shmem() {
    if (previous_shmem_request != nullptr) previous_shmem_request();
    RequestAddinShmemSpace(MAXALIGN(sizeof(Control)));
}

// Caller holds AddinShmemInitLock.
Control *find_control() {
    bool found = false;
    Control *control =
        static_cast<Control *>(ShmemInitStruct(kControlName, sizeof(Control), &found));
    if (!found) control->registry = DSM_HANDLE_INVALID;
    return control;
}

// Preloaded, the control struct is made at startup out of the space requested above, so no later
// session can find the server's spare shared memory used up. The registry itself (dynamic shared
// memory) is still made by the first session that needs it.
void create_control() {
    if (previous_shmem_startup != nullptr) previous_shmem_startup();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    find_control();
    LWLockRelease(AddinShmemInitLock);
}

Size segment_size(int entries) {
    return add_size(offsetof(Segment, entries), mul_size(entries, sizeof(BackendEntry)));
}

// Not preloaded, the control struct comes from the server's spare shared memory, which a lock
// table that grew may have used up: then the registry is not there for this backend (the views
// show its claims without names, as beyond kListedClaims), and claims go on. Caller holds
// AddinShmemInitLock.
Control *find_control_if_room() {
    const MemoryContext caller = CurrentMemoryContext;
    // With the caller's lock in it: the ERROR zeroes the count (errfinish), and releasing the lock
    // would then take it to 2^32 - 1, a session deaf to cancels, timeouts and terminate.
    const uint32 holdoff = InterruptHoldoffCount;
    Control *volatile control = nullptr;  // set inside PG_TRY, read after it
    PG_TRY();
    { control = find_control(); }
    PG_CATCH();
    {
        InterruptHoldoffCount = holdoff;
        MemoryContextSwitchTo(caller);
        FlushErrorState();
    }
    PG_END_TRY();
    return control;
}

bool unavailable = false;  // find_control_if_room found no room

// Whether this backend is attached to the registry, attaching it if it can.
bool attach() {
    if (segment != nullptr) return true;
    if (unavailable) return false;
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    Control *control = find_control_if_room();
    if (control == nullptr) {
        LWLockRelease(AddinShmemInitLock);
        unavailable = true;
        return false;
    }
    dsm_segment *dsm = nullptr;
    if (control->registry != DSM_HANDLE_INVALID) dsm = dsm_attach(control->registry);
    if (dsm == nullptr) {
        const Size size = segment_size(MaxBackends);
        dsm = dsm_create(size, 0);
        auto *fresh = static_cast<Segment *>(dsm_segment_address(dsm));
        memset(fresh, 0, size);
        fresh->magic = kMagic;
        fresh->entry_count = MaxBackends;
        for (int i = 0; i < MaxBackends; ++i) pg_atomic_init_u32(&fresh->entries[i].changecount, 0);
        dsm_pin_segment(dsm);  // kept when no backend is attached, until the server stops
        control->registry = dsm_segment_handle(dsm);
    }
    dsm_pin_mapping(dsm);  // mapped for the rest of this session
    LWLockRelease(AddinShmemInitLock);
    segment = static_cast<Segment *>(dsm_segment_address(dsm));
    return true;
}

// This backend's entry, set up on first use.
BackendEntry *own_entry() {
    if (mine != nullptr) return mine;
    if (!attach()) return nullptr;
    if (segment->magic != kMagic || MyBackendId < 1 || MyBackendId > segment->entry_count)
        return nullptr;
    BackendEntry *entry = &segment->entries[MyBackendId - 1];
    pg_atomic_fetch_add_u32(&entry->changecount, 1);
    pg_write_barrier();
    entry->pid = MyProcPid;
    entry->database = MyDatabaseId;
    entry->application_name[0] = '\0';
    entry->waiting = false;
    entry->claim_count = 0;
    entry->unlisted = 0;
    pg_write_barrier();
    pg_atomic_fetch_add_u32(&entry->changecount, 1);
    mine = entry;
    return mine;
}

// Every change of this backend's entry goes between these two.
BackendEntry *begin_write() {
    BackendEntry *entry = own_entry();
    if (entry == nullptr) return nullptr;
    pg_atomic_fetch_add_u32(&entry->changecount, 1);
    pg_write_barrier();
    strlcpy(entry->application_name, application_name != nullptr ? application_name : "",
            NAMEDATALEN);
    return entry;
}

void end_write(BackendEntry *entry) {
    pg_write_barrier();
    pg_atomic_fetch_add_u32(&entry->changecount, 1);
}

void set_name(NamedEntry *target, const text *name) {
    const int32 length = static_cast<int32>(
        Min(VARSIZE_ANY_EXHDR(name), static_cast<std::size_t>(core::kMaxNameBytes)));
    memcpy(target->name, VARDATA_ANY(name), length);
    target->length = length;
}

bool name_is(const NamedEntry &entry, const text *name) {
    return static_cast<std::size_t>(entry.length) == VARSIZE_ANY_EXHDR(name) &&
           memcmp(entry.name, VARDATA_ANY(name), entry.length) == 0;
}

// Copies an entry until the copy is whole: the change counter even, and the same before and
// after. False when its backend kept writing.
bool copy_whole(BackendEntry *entry, BackendEntry *snapshot) {
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const uint32 before = pg_atomic_read_u32(&entry->changecount);
        pg_read_barrier();
        memcpy(snapshot, entry, sizeof(BackendEntry));
        pg_read_barrier();
        if ((before & 1U) == 0 && pg_atomic_read_u32(&entry->changecount) == before) return true;
        CHECK_FOR_INTERRUPTS();
    }
    return false;
}

void copy_name(char *out, const NamedEntry &entry) {
    memcpy(out, entry.name, entry.length);
    out[entry.length] = '\0';
}

}  // namespace

void install_registry_shmem_hooks() {
    if (!process_shared_preload_libraries_in_progress) return;
    previous_shmem_request = shmem_request_hook;
    shmem_request_hook = request_shmem;
    previous_shmem_startup = shmem_startup_hook;
    shmem_startup_hook = create_control;
}

namespace {

void put_claim(BackendEntry *entry, const RegisteredClaim &registered) {
    ClaimEntry &claim = entry->claims[entry->claim_count++];
    claim.kind = registered.kind;
    claim.role = registered.role;
    claim.slot = registered.slot;
    claim.n = registered.n;
    claim.since = registered.since;
    set_name(&claim.name, registered.name);
}

bool lists(const BackendEntry &entry, ClaimKind kind, const text *name, int32 slot) {
    for (int i = 0; i < entry.claim_count; ++i) {
        const ClaimEntry &claim = entry.claims[i];
        if (claim.kind == kind && claim.slot == slot && name_is(claim.name, name)) return true;
    }
    return false;
}

}  // namespace

bool registry_attach() {
    return attach();
}

void registry_leave() {
    if (mine == nullptr) return;
    BackendEntry *entry = begin_write();
    entry->pid = 0;
    entry->waiting = false;
    entry->claim_count = 0;
    entry->unlisted = 0;
    end_write(entry);
    mine = nullptr;
}

void registry_note_claim(const RegisteredClaim &claim) {
    BackendEntry *entry = begin_write();
    if (entry == nullptr) return;
    if (entry->claim_count == kListedClaims)
        ++entry->unlisted;
    else
        put_claim(entry, claim);
    end_write(entry);
}

bool registry_has_room_for_unlisted() {
    return mine != nullptr && mine->unlisted > 0 && mine->claim_count < kListedClaims;
}

void registry_list_claim(const RegisteredClaim &claim) {
    if (!registry_has_room_for_unlisted() || lists(*mine, claim.kind, claim.name, claim.slot))
        return;
    BackendEntry *entry = begin_write();
    put_claim(entry, claim);
    --entry->unlisted;
    end_write(entry);
}

void registry_forget_claim(ClaimKind kind, const text *name, int32 slot) {
    // Never attaches: this runs when a claim ends, also in an abort, where the attachment's
    // allocation must not fail (the lock table may have taken the spare shared memory), and a
    // backend not attached has noted no claim.
    if (mine == nullptr) return;
    BackendEntry *entry = begin_write();
    if (entry == nullptr) return;
    bool found = false;
    for (int i = 0; i < entry->claim_count && !found; ++i) {
        const ClaimEntry &claim = entry->claims[i];
        if (claim.kind != kind || claim.slot != slot || !name_is(claim.name, name)) continue;
        entry->claims[i] = entry->claims[--entry->claim_count];
        found = true;
    }
    if (!found && entry->unlisted > 0) --entry->unlisted;
    end_write(entry);
}

void registry_forget_transaction_claims(int session_claims) {
    if (mine == nullptr) return;
    BackendEntry *entry = begin_write();
    int kept = 0;
    for (int i = 0; i < entry->claim_count; ++i)
        if (entry->claims[i].kind == ClaimKind::kSession) entry->claims[kept++] = entry->claims[i];
    entry->claim_count = kept;
    entry->unlisted = Max(session_claims - kept, 0);
    end_write(entry);
}

void registry_note_wait(ClaimKind kind, const text *name, int32 n, int32 permits, TimestampTz since,
                        bool timed) {
    BackendEntry *entry = begin_write();
    if (entry == nullptr) return;
    entry->waiting = true;
    entry->wait_kind = kind;
    entry->wait_role = GetUserId();
    entry->wait_n = n;
    entry->wait_permits = permits;
    entry->wait_timed = timed;
    entry->wait_since = since;
    set_name(&entry->wait_name, name);
    end_write(entry);
}

void registry_forget_wait() {
    if (mine == nullptr || !mine->waiting) return;
    BackendEntry *entry = begin_write();
    entry->waiting = false;
    end_write(entry);
}

bool registry_find_wait(int32 pid, uint64 key, int32 *n, text **name, bool *timed) {
    if (!attach()) return false;
    BackendEntry *snapshot = static_cast<BackendEntry *>(palloc(sizeof(BackendEntry)));
    bool found = false;
    for (int i = 0; i < segment->entry_count && !found; ++i) {
        BackendEntry *entry = &segment->entries[i];
        if (entry->pid != pid) continue;
        if (!copy_whole(entry, snapshot) || !snapshot->waiting || snapshot->pid != pid) break;
        text *waited =
            cstring_to_text_with_len(snapshot->wait_name.name, snapshot->wait_name.length);
        if (name_key(waited) == key) {
            *n = snapshot->wait_n;
            *name = waited;
            *timed = snapshot->wait_timed;
            found = true;
        }
        break;
    }
    pfree(snapshot);
    return found;
}

bool registry_tally_role(Oid role, RoleTally *tally) {
    *tally = RoleTally{0, 0};
    if (!attach()) return false;
    BackendEntry *snapshot = static_cast<BackendEntry *>(palloc(sizeof(BackendEntry)));
    for (int i = 0; i < segment->entry_count; ++i) {
        if (!copy_whole(&segment->entries[i], snapshot) || snapshot->pid == 0 ||
            snapshot->database != MyDatabaseId)
            continue;
        for (int c = 0; c < Min(snapshot->claim_count, kListedClaims); ++c)
            if (snapshot->claims[c].role == role) ++tally->claims;
        if (snapshot->waiting && snapshot->wait_role == role && snapshot->pid != MyProcPid)
            ++tally->waits;
    }
    pfree(snapshot);
    return true;
}

bool registry_can_list(int32 slots) {
    const BackendEntry *entry = own_entry();
    return entry != nullptr && entry->unlisted == 0 && entry->claim_count + slots <= kListedClaims;
}

void registry_copy(RegistryCopy *copy) {
    if (!attach()) {
        *copy = RegistryCopy{nullptr, 0, nullptr, 0, 0};
        return;
    }
    const int entries = segment->entry_count;
    copy->claims =
        static_cast<ListedClaim *>(palloc(sizeof(ListedClaim) * entries * kListedClaims));
    copy->waits = static_cast<ListedWait *>(palloc(sizeof(ListedWait) * entries));
    copy->claim_count = copy->wait_count = copy->unlisted_claims = 0;
    BackendEntry *snapshot = static_cast<BackendEntry *>(palloc(sizeof(BackendEntry)));
    for (int i = 0; i < entries; ++i) {
        if (!copy_whole(&segment->entries[i], snapshot) || snapshot->pid == 0 ||
            snapshot->database != MyDatabaseId)
            continue;
        copy->unlisted_claims += snapshot->unlisted;
        for (int c = 0; c < Min(snapshot->claim_count, kListedClaims); ++c) {
            const ClaimEntry &claim = snapshot->claims[c];
            ListedClaim &out = copy->claims[copy->claim_count++];
            out.pid = snapshot->pid;
            out.role = claim.role;
            out.kind = claim.kind;
            out.slot = claim.slot;
            out.n = claim.n;
            out.since = claim.since;
            memcpy(out.application_name, snapshot->application_name, NAMEDATALEN);
            out.application_name[NAMEDATALEN - 1] = '\0';
            copy_name(out.name, claim.name);
        }
        if (snapshot->waiting) {
            ListedWait &out = copy->waits[copy->wait_count++];
            out.pid = snapshot->pid;
            out.role = snapshot->wait_role;
            out.kind = snapshot->wait_kind;
            out.n = snapshot->wait_n;
            out.permits = snapshot->wait_permits;
            out.timed = snapshot->wait_timed;
            out.since = snapshot->wait_since;
            memcpy(out.application_name, snapshot->application_name, NAMEDATALEN);
            out.application_name[NAMEDATALEN - 1] = '\0';
            copy_name(out.name, snapshot->wait_name);
        }
    }
    pfree(snapshot);
}

}  // namespace pgsem
