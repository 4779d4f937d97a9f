#include "core/fnv1a.hpp"
#include "pg/boundary.hpp"
#include "pg/lock_tags.hpp"

namespace pgsem {

namespace {

// pg_locks.objsubid of slot locks. Postgres uses 1 (bigint keys) and 2 (int4 pairs) in this
// field, so slot locks can never collide with any application's advisory lock.
constexpr uint16 kSlotLockClass = 0x5053;  // "PS"

const unsigned char *bytes_of(const varlena *value) {
    return reinterpret_cast<const unsigned char *>(VARDATA_ANY(value));
}

void set_advisory_tag(LOCKTAG *tag, uint64 key, uint16 lock_class) {
    SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, static_cast<uint32>(key >> 32),
                         static_cast<uint32>(key), lock_class);
}

}  // namespace

int64 varlena_key(const varlena *value) {
    const unsigned char *bytes = bytes_of(value);
    const std::size_t length = VARSIZE_ANY_EXHDR(value);
    return PGSEM_NOTHROW(core::as_bigint(core::fnv1a_64(bytes, length)));
}

void bigint_key_locktag(LOCKTAG *tag, int64 key) {
    set_advisory_tag(tag, static_cast<uint64>(key), 1);  // the class pg_advisory_lock(bigint) uses
}

void slot_locktag(LOCKTAG *tag, const text *name, int32 slot) {
    const unsigned char *bytes = bytes_of(name);
    const std::size_t length = VARSIZE_ANY_EXHDR(name);
    const std::array<unsigned char, 4> slot_bytes = PGSEM_NOTHROW(core::le32_bytes(slot));
    const uint64 hash = PGSEM_NOTHROW(
        core::fnv1a_64_update(core::fnv1a_64(bytes, length), slot_bytes.data(), slot_bytes.size()));
    set_advisory_tag(tag, hash, kSlotLockClass);
}

}  // namespace pgsem
