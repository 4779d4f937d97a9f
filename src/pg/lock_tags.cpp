#include "pg/lock_tags.hpp"

#include "core/fnv1a.hpp"
#include "pg/boundary.hpp"

namespace pgsem {

namespace {
const unsigned char *bytes_of(const text *t) {
    return reinterpret_cast<const unsigned char *>(VARDATA_ANY(t));
}
}  // namespace

void bigint_key_locktag(LOCKTAG *tag, int64 key) {
    SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, static_cast<uint32>(static_cast<uint64>(key) >> 32),
                         static_cast<uint32>(key), 1);
}

int64 text_key(const text *key) {
    const unsigned char *bytes = bytes_of(key);
    const std::size_t length = VARSIZE_ANY_EXHDR(key);
    return cpp_call([&] { return core::as_bigint(core::fnv1a_64(bytes, length)); });
}

void slot_locktag(LOCKTAG *tag, const text *name, int32 slot) {
    const unsigned char *bytes = bytes_of(name);
    const std::size_t length = VARSIZE_ANY_EXHDR(name);
    const uint64 hash = cpp_call([&] {
        const std::uint64_t h = core::fnv1a_64(bytes, length);
        const auto slot_bytes = static_cast<std::uint32_t>(slot);
        unsigned char le[4] = {static_cast<unsigned char>(slot_bytes),
                               static_cast<unsigned char>(slot_bytes >> 8U),
                               static_cast<unsigned char>(slot_bytes >> 16U),
                               static_cast<unsigned char>(slot_bytes >> 24U)};
        return core::fnv1a_64_update(h, le, sizeof(le));
    });
    SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, static_cast<uint32>(hash >> 32),
                         static_cast<uint32>(hash), kSlotLockClass);
}

}  // namespace pgsem
