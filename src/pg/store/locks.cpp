#include "core/fnv1a.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/locks.hpp"

namespace pgsem {

namespace {

// The modes, written once.
constexpr LOCKMODE kSlotMutexMode = ExclusiveLock;
constexpr LOCKMODE kSlotHolderMode = ExclusiveLock;
constexpr LOCKMODE kNameHoldersMode = ShareLock;  // only ever taken in share mode
constexpr LOCKMODE kFirstPlaceMode = ExclusiveLock;
constexpr LOCKMODE kEmptyLineMode = ShareLock;  // conflicts with first place only
constexpr LOCKMODE kRequestKeyMode = ExclusiveLock;
constexpr LOCKMODE kBucketMode = ExclusiveLock;
constexpr LOCKMODE kRateGrantMode = ShareLock;  // conflicts with the declarations' only
constexpr LOCKMODE kRateDeclarationMode = ExclusiveLock;

const unsigned char *bytes_of(const varlena *value) {
    return reinterpret_cast<const unsigned char *>(VARDATA_ANY(value));
}

void set_advisory_tag(LOCKTAG *tag, uint64 key, uint16 lock_class) {
    SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, static_cast<uint32>(key >> 32),
                         static_cast<uint32>(key), lock_class);
}

uint64 name_hash(const text *name) {
    const unsigned char *bytes = bytes_of(name);
    const std::size_t length = VARSIZE_ANY_EXHDR(name);
    return PGSEM_NOTHROW(core::fnv1a_64(bytes, length));
}

uint64 slot_hash(const text *name, int32 slot) {
    const uint64 name_part = name_hash(name);
    const std::array<unsigned char, 4> slot_bytes = PGSEM_NOTHROW(core::le32_bytes(slot));
    return PGSEM_NOTHROW(core::fnv1a_64_update(name_part, slot_bytes.data(), slot_bytes.size()));
}

// Name, role and key hashed together; each length-prefixed part keeps ("ab", "c") apart from
// ("a", "bc"). A collision only makes two keys wait for each other's transactions.
uint64 request_key_hash(const text *name, Oid role, const text *key) {
    uint64 hash = name_hash(name);
    const std::array<unsigned char, 4> role_bytes =
        PGSEM_NOTHROW(core::le32_bytes(static_cast<int32>(role)));
    hash = PGSEM_NOTHROW(core::fnv1a_64_update(hash, role_bytes.data(), role_bytes.size()));
    const std::size_t length = VARSIZE_ANY_EXHDR(key);
    const std::array<unsigned char, 4> length_bytes =
        PGSEM_NOTHROW(core::le32_bytes(static_cast<int32>(length)));
    hash = PGSEM_NOTHROW(core::fnv1a_64_update(hash, length_bytes.data(), length_bytes.size()));
    const unsigned char *bytes = bytes_of(key);
    return PGSEM_NOTHROW(core::fnv1a_64_update(hash, bytes, length));
}

LOCKTAG slot_tag(LockClass lock_class, const text *name, int32 slot) {
    LOCKTAG tag;
    set_advisory_tag(&tag, slot_hash(name, slot), static_cast<uint16>(lock_class));
    return tag;
}

LOCKTAG name_tag(LockClass lock_class, const text *name) {
    LOCKTAG tag;
    set_advisory_tag(&tag, name_hash(name), static_cast<uint16>(lock_class));
    return tag;
}

void wake(const VirtualTransactionId &holder) {
    PGPROC *proc = BackendIdGetProc(holder.backendId);
    if (proc != nullptr) SetLatch(&proc->procLatch);
}

// A lock held by the transaction's own resource owner, not by the caller's (a portal's): taken
// there, or handed on to it by the commit of a subtransaction that waited for it. A release then
// finds it whichever way it came. (An error on the way leaves the owner to the abort, which
// resets it.)
LockAcquireResult acquire_for_transaction(const LOCKTAG &tag, LOCKMODE mode, bool dont_wait) {
    const ResourceOwner owner = CurrentResourceOwner;
    CurrentResourceOwner = CurTransactionResourceOwner;
    const LockAcquireResult result = LockAcquire(&tag, mode, false, dont_wait);
    CurrentResourceOwner = owner;
    return result;
}

void release_for_transaction(const LOCKTAG &tag, LOCKMODE mode) {
    const ResourceOwner owner = CurrentResourceOwner;
    CurrentResourceOwner = CurTransactionResourceOwner;
    (void)LockRelease(&tag, mode, false);
    CurrentResourceOwner = owner;
}

}  // namespace

// ---- tags ------------------------------------------------------------------------------------

int64 varlena_key(const varlena *value) {
    const unsigned char *bytes = bytes_of(value);
    const std::size_t length = VARSIZE_ANY_EXHDR(value);
    return PGSEM_NOTHROW(core::as_bigint(core::fnv1a_64(bytes, length)));
}

void bigint_key_locktag(LOCKTAG *tag, int64 key) {
    set_advisory_tag(tag, static_cast<uint64>(key), 1);  // the class pg_advisory_lock(bigint) uses
}

LockClass pgsem_lock_class(const LOCKTAG &tag) {
    if (tag.locktag_type != LOCKTAG_ADVISORY || tag.locktag_lockmethodid != USER_LOCKMETHOD ||
        tag.locktag_field1 != MyDatabaseId)
        return LockClass::kOther;
    switch (static_cast<LockClass>(tag.locktag_field4)) {
        case LockClass::kSlotMutex:
        case LockClass::kSlotHolder:
        case LockClass::kNameHolders:
        case LockClass::kQueue:
        case LockClass::kRequestKey:
        case LockClass::kBucket:
        case LockClass::kRateKinds:
            return static_cast<LockClass>(tag.locktag_field4);
        default:
            return LockClass::kOther;
    }
}

uint64 locktag_key(const LOCKTAG &tag) {
    return (static_cast<uint64>(tag.locktag_field2) << 32) | tag.locktag_field3;
}

uint64 name_key(const text *name) {
    return name_hash(name);
}

uint64 slot_key(const text *name, int32 slot) {
    return slot_hash(name, slot);
}

// ---- a token bucket's mutex -------------------------------------------------------------------

// The bucket mutex is held by the transaction's own resource owner, however it was taken: at
// once in the statement's (a portal's) or in a subtransaction that waited for it and handed it
// on (store/timed_locks.hpp). So a release finds it wherever it came from.
void lock_bucket_mutex(const text *name) {
    (void)acquire_for_transaction(name_tag(LockClass::kBucket, name), kBucketMode, false);
}

void unlock_bucket_mutex(const text *name) {
    release_for_transaction(name_tag(LockClass::kBucket, name), kBucketMode);
}

bool try_lock_bucket_mutex(const text *name) {
    return acquire_for_transaction(name_tag(LockClass::kBucket, name), kBucketMode, true) !=
           LOCKACQUIRE_NOT_AVAIL;
}

// ---- rate grants against rate declarations ----------------------------------------------------

namespace {

LOCKTAG rate_kinds_tag() {
    LOCKTAG tag;
    set_advisory_tag(&tag, 0, static_cast<uint16>(LockClass::kRateKinds));
    return tag;
}

}  // namespace

void lock_rate_grants() {
    (void)acquire_for_transaction(rate_kinds_tag(), kRateGrantMode, false);
}

void unlock_rate_grants() {
    release_for_transaction(rate_kinds_tag(), kRateGrantMode);
}

void lock_rate_declarations() {
    (void)acquire_for_transaction(rate_kinds_tag(), kRateDeclarationMode, false);
}

// ---- the slot mutex --------------------------------------------------------------------------

bool lock_slot_mutex(const text *name, int32 slot, bool wait) {
    const LOCKTAG tag = slot_tag(LockClass::kSlotMutex, name, slot);
    return LockAcquire(&tag, kSlotMutexMode, false, !wait) != LOCKACQUIRE_NOT_AVAIL;
}

void unlock_slot_mutex(const text *name, int32 slot) {
    const LOCKTAG tag = slot_tag(LockClass::kSlotMutex, name, slot);
    (void)LockRelease(&tag, kSlotMutexMode, false);
}

// ---- slot holders ----------------------------------------------------------------------------

SlotLock take_slot_holder(const text *name, int32 slot, bool session) {
    const LOCKTAG tag = slot_tag(LockClass::kSlotHolder, name, slot);
    const LockAcquireResult result = LockAcquire(&tag, kSlotHolderMode, session, true);
    if (result == LOCKACQUIRE_OK) return SlotLock::kTaken;
    if (result == LOCKACQUIRE_NOT_AVAIL) return SlotLock::kHeldByOther;
    (void)LockRelease(&tag, kSlotHolderMode, session);  // the count just added
    return SlotLock::kHeldByMe;
}

void release_slot_holder(const text *name, int32 slot, bool session) {
    const LOCKTAG tag = slot_tag(LockClass::kSlotHolder, name, slot);
    (void)LockRelease(&tag, kSlotHolderMode, session);
}

bool slot_holder_held_by_me(const text *name, int32 slot) {
    const LOCKTAG tag = slot_tag(LockClass::kSlotHolder, name, slot);
    return LockHeldByMe(&tag, kSlotHolderMode);
}

bool slot_held_by_lock(const text *name, int32 slot) {
    const LOCKTAG tag = slot_tag(LockClass::kSlotHolder, name, slot);
    const LockAcquireResult result = LockAcquire(&tag, kSlotHolderMode, false, true);
    if (result == LOCKACQUIRE_NOT_AVAIL) return true;
    (void)LockRelease(&tag, kSlotHolderMode, false);  // the probe's own count
    return result != LOCKACQUIRE_OK;                  // ALREADY_HELD: this backend holds it
}

bool name_has_lock_claims(const text *name) {
    const LOCKTAG tag = name_tag(LockClass::kNameHolders, name);
    if (LockHeldByMe(&tag, kNameHoldersMode)) return true;
    // A no-wait try in a mode that conflicts with the holders' share: it fails while anybody
    // holds one, an idle session's session claims too (the lock table's list of conflicting
    // transactions would leave out a session with no transaction open). Got, it is given back at
    // once; a claimer taking its share meanwhile waits those microseconds.
    if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL) return true;
    (void)LockRelease(&tag, ExclusiveLock, false);
    return false;
}

void take_name_holders(const text *name, bool session) {
    const LOCKTAG tag = name_tag(LockClass::kNameHolders, name);
    (void)LockAcquire(&tag, kNameHoldersMode, session, false);  // share: never waits
}

void release_name_holders(const text *name, bool session) {
    const LOCKTAG tag = name_tag(LockClass::kNameHolders, name);
    if (LockHeldByMe(&tag, kNameHoldersMode)) (void)LockRelease(&tag, kNameHoldersMode, session);
}

// ---- request keys ----------------------------------------------------------------------------

namespace {

struct RequestKeyWait {
    const text *name;
    const text *key;
};

// The lock manager names the key's lock "advisory lock [db,hash,hash,20555]", which means nothing
// to a caller that took no advisory lock: a timeout, cancel or deadlock while waiting for it
// says which key of which semaphore it was.
void request_key_wait_context(void *arg) {
    const auto *wait = static_cast<const RequestKeyWait *>(arg);
    errcontext(
        "waiting for the transaction of another sem_claim() with request key \"%s\" on "
        "semaphore \"%s\" (advisory lock class %d)",
        text_to_cstring(wait->key), text_to_cstring(wait->name),
        static_cast<int>(LockClass::kRequestKey));
}

}  // namespace

void lock_request_key(const text *name, Oid role, const text *key) {
    LOCKTAG tag;
    set_advisory_tag(&tag, request_key_hash(name, role, key),
                     static_cast<uint16>(LockClass::kRequestKey));
    RequestKeyWait wait{name, key};
    ErrorContextCallback context;
    context.callback = request_key_wait_context;
    context.arg = &wait;
    context.previous = error_context_stack;
    error_context_stack = &context;
    (void)LockAcquire(&tag, kRequestKeyMode, false, false);
    error_context_stack = context.previous;
}

// ---- the line --------------------------------------------------------------------------------

bool hold_line_if_empty(const text *name) {
    const LOCKTAG tag = name_tag(LockClass::kQueue, name);
    return LockAcquire(&tag, kEmptyLineMode, false, true) != LOCKACQUIRE_NOT_AVAIL;
}

void let_go_of_line(const text *name) {
    const LOCKTAG tag = name_tag(LockClass::kQueue, name);
    (void)LockRelease(&tag, kEmptyLineMode, false);
}

void wait_for_first_place(const text *name) {
    const LOCKTAG tag = name_tag(LockClass::kQueue, name);
    (void)LockAcquire(&tag, kFirstPlaceMode, false, false);
}

void leave_first_place(const text *name) {
    release_for_transaction(name_tag(LockClass::kQueue, name), kFirstPlaceMode);
}

bool is_first_place(const LockInstanceData &lock) {
    return pgsem_lock_class(lock.locktag) == LockClass::kQueue &&
           (lock.holdMask & LOCKBIT_ON(kFirstPlaceMode)) != 0;
}

bool waits_for_first_place(const LockInstanceData &lock) {
    return pgsem_lock_class(lock.locktag) == LockClass::kQueue &&
           lock.waitLockMode == kFirstPlaceMode;
}

bool is_slot_holder(const LockInstanceData &lock) {
    return pgsem_lock_class(lock.locktag) == LockClass::kSlotHolder &&
           (lock.holdMask & LOCKBIT_ON(kSlotHolderMode)) != 0;
}

bool is_name_holders(const LockInstanceData &lock) {
    return pgsem_lock_class(lock.locktag) == LockClass::kNameHolders &&
           (lock.holdMask & LOCKBIT_ON(kNameHoldersMode)) != 0;
}

void wake_first_waiter(const text *name) {
    const LOCKTAG tag = name_tag(LockClass::kQueue, name);
    int count = 0;
    // Those in the way of a share hold are first-place holders: the first waiter (claimers that
    // hold the line in share mode do not conflict with it and are not returned).
    VirtualTransactionId *holders = GetLockConflicts(&tag, kEmptyLineMode, &count);
    for (int i = 0; i < count; ++i) wake(holders[i]);
    pfree(holders);
}

void wake_every_first_waiter() {
    const LockData *locks = GetLockStatusData();
    for (int i = 0; i < locks->nelements; ++i) {
        const LockInstanceData &lock = locks->locks[i];
        if (!is_first_place(lock)) continue;
        PGPROC *proc = BackendIdGetProc(lock.backend);
        if (proc != nullptr) SetLatch(&proc->procLatch);
    }
}

}  // namespace pgsem
