#include "core/fnv1a.hpp"
#include "pg/boundary.hpp"
#include "pg/lock_tags.hpp"

namespace pgsem {

namespace {

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

}  // namespace

int64 varlena_key(const varlena *value) {
    const unsigned char *bytes = bytes_of(value);
    const std::size_t length = VARSIZE_ANY_EXHDR(value);
    return PGSEM_NOTHROW(core::as_bigint(core::fnv1a_64(bytes, length)));
}

void bigint_key_locktag(LOCKTAG *tag, int64 key) {
    set_advisory_tag(tag, static_cast<uint64>(key), 1);  // the class pg_advisory_lock(bigint) uses
}

void slot_locktag(LOCKTAG *tag, LockClass lock_class, const text *name, int32 slot) {
    const uint64 name_part = name_hash(name);
    const std::array<unsigned char, 4> slot_bytes = PGSEM_NOTHROW(core::le32_bytes(slot));
    const uint64 hash =
        PGSEM_NOTHROW(core::fnv1a_64_update(name_part, slot_bytes.data(), slot_bytes.size()));
    set_advisory_tag(tag, hash, static_cast<uint16>(lock_class));
}

void name_locktag(LOCKTAG *tag, LockClass lock_class, const text *name) {
    set_advisory_tag(tag, name_hash(name), static_cast<uint16>(lock_class));
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
            return static_cast<LockClass>(tag.locktag_field4);
        default:
            return LockClass::kOther;
    }
}

uint64 locktag_key(const LOCKTAG &tag) {
    return (static_cast<uint64>(tag.locktag_field2) << 32) | tag.locktag_field3;
}

}  // namespace pgsem
