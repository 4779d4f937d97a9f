#include "pg/base/boundary.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/release_epochs.hpp"

namespace pgsem {

namespace {

// 8 kB: fewer names share a bucket (and each other's second looks), and more than the lock
// manager's tables take of the spare shared memory at a time, so that once they have taken it
// the epochs surely find none (TAP 011 counts on that to reach the no-room path).
constexpr int kBuckets = 1024;
constexpr const char *kStructName = "pgsem release epochs";

struct Bucket {
    pg_atomic_uint32 active;
    pg_atomic_uint32 epoch;
};

shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;
Bucket *buckets = nullptr;  // this backend's pointer into shared memory
bool unavailable = false;   // the shared memory could not be had

// What this backend began and has not ended, per bucket.
int begun[kBuckets];
int begun_total = 0;

constexpr Size kSize = sizeof(Bucket) * kBuckets;

void request_shmem() {
    if (previous_shmem_request != nullptr) previous_shmem_request();
    RequestAddinShmemSpace(MAXALIGN(kSize));
}

// Caller holds AddinShmemInitLock. Not preloaded, the few kilobytes come from the server's spare
// shared memory, as the registry's control struct does.
Bucket *find_buckets() {
    bool found = false;
    auto *shared = static_cast<Bucket *>(ShmemInitStruct(kStructName, kSize, &found));
    if (!found) {
        for (int i = 0; i < kBuckets; ++i) {
            pg_atomic_init_u32(&shared[i].active, 0);
            pg_atomic_init_u32(&shared[i].epoch, 0);
        }
    }
    return shared;
}

void create_buckets() {
    if (previous_shmem_startup != nullptr) previous_shmem_startup();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    find_buckets();
    LWLockRelease(AddinShmemInitLock);
}

// Attached or not, without trying: the end of a transaction, where an error must not happen,
// uses the counters only if an earlier call attached them.
bool attached() {
    return buckets != nullptr;
}

int bucket_of(const text *name) {
    return static_cast<int>(name_key(name) % kBuckets);
}

void begin_bucket(int b) {
    // A full barrier: the count is up before anything of the release can be seen.
    pg_atomic_fetch_add_u32(&buckets[b].active, 1);
    ++begun[b];
    ++begun_total;
}

// The epoch moves before `active` comes down, so a look that finds nothing active finds the epoch
// moved.
void end_bucket(int b, bool was_begun) {
    Bucket &bucket = buckets[b];
    pg_atomic_fetch_add_u32(&bucket.epoch, 1);
    if (!was_begun) return;
    pg_atomic_fetch_sub_u32(&bucket.active, 1);
    --begun[b];
    --begun_total;
}

}  // namespace

void install_release_epochs_shmem_hooks() {
    if (!process_shared_preload_libraries_in_progress) return;
    previous_shmem_request = shmem_request_hook;
    shmem_request_hook = request_shmem;
    previous_shmem_startup = shmem_startup_hook;
    shmem_startup_hook = create_buckets;
}

bool release_epochs_attach() {
    if (buckets != nullptr) return true;
    if (unavailable) return false;
    const MemoryContext caller = CurrentMemoryContext;
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    // With the lock's hold in it: the ERROR zeroes the count (errfinish), and the release below
    // would take it to 2^32 - 1, a session deaf to cancels, timeouts and terminate.
    const uint32 holdoff = InterruptHoldoffCount;
    PG_TRY();
    { buckets = find_buckets(); }
    PG_CATCH();
    {
        // Not preloaded, and the server's spare shared memory is gone (a lock table that grew
        // into it): claims go on, each refusal paying a second look.
        InterruptHoldoffCount = holdoff;
        MemoryContextSwitchTo(caller);
        FlushErrorState();
        unavailable = true;
    }
    PG_END_TRY();
    LWLockRelease(AddinShmemInitLock);
    return buckets != nullptr;
}

EpochMark release_epochs_mark(const text *name) {
    if (!release_epochs_attach()) return EpochMark{0, false};
    const uint32 epoch = pg_atomic_read_u32(&buckets[bucket_of(name)].epoch);
    // The reads of the look that follows come after this one.
    pg_read_barrier();
    return EpochMark{epoch, true};
}

bool release_epochs_moved(const text *name, EpochMark mark) {
    if (!mark.valid) return true;
    Bucket &bucket = buckets[bucket_of(name)];
    // After every read of the look: a slot it saw held was seen held before this.
    pg_memory_barrier();
    if (pg_atomic_read_u32(&bucket.active) != 0) return true;
    pg_read_barrier();
    return pg_atomic_read_u32(&bucket.epoch) != mark.epoch;
}

void release_epochs_begin(const text *name) {
    if (attached()) begin_bucket(bucket_of(name));
}

void release_epochs_end(const text *name, bool began) {
    if (!attached()) return;
    const int b = bucket_of(name);
    end_bucket(b, began && begun[b] > 0);
}

void release_epochs_begin_all() {
    if (!attached()) return;
    for (int b = 0; b < kBuckets; ++b) begin_bucket(b);
}

void release_epochs_end_all() {
    if (!attached()) return;
    for (int b = 0; b < kBuckets; ++b) end_bucket(b, begun[b] > 0);
}

void release_epochs_end_begun() {
    for (int b = 0; b < kBuckets && begun_total > 0; ++b)
        while (begun[b] > 0) end_bucket(b, true);
}

}  // namespace pgsem
