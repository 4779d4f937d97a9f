// 64-bit FNV-1a, the hash that turns a text key into an advisory-lock number.
//
// Pure C++: no Postgres header, unit-tested by test/unit/fnv1a_test.cpp.
#pragma once

#include "core/cpp_only.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace pgsem::core {

inline constexpr std::uint64_t kFnv64OffsetBasis = 14695981039346656037ULL;
inline constexpr std::uint64_t kFnv64Prime = 1099511628211ULL;

// Continues a hash over more bytes, so that a key can be hashed in pieces (a name, then a slot).
constexpr std::uint64_t fnv1a_64_update(std::uint64_t hash, const unsigned char *bytes,
                                        std::size_t length) noexcept {
    for (std::size_t i = 0; i < length; ++i) {
        hash ^= bytes[i];
        hash *= kFnv64Prime;  // unsigned: wraps modulo 2^64, as the algorithm requires
    }
    return hash;
}

constexpr std::uint64_t fnv1a_64(const unsigned char *bytes, std::size_t length) noexcept {
    return fnv1a_64_update(kFnv64OffsetBasis, bytes, length);
}

// The 4 bytes of a 32-bit value, least significant first: how a slot number is appended to a
// semaphore name before hashing, the same on every platform.
constexpr std::array<unsigned char, 4> le32_bytes(std::int32_t value) noexcept {
    const auto bits = static_cast<std::uint32_t>(value);
    return {static_cast<unsigned char>(bits), static_cast<unsigned char>(bits >> 8U),
            static_cast<unsigned char>(bits >> 16U), static_cast<unsigned char>(bits >> 24U)};
}

// Postgres has no unsigned 64-bit type: the SQL functions return the same 64 bits as a
// two's-complement bigint, which is what a client must pass to pg_advisory_xact_lock(bigint).
// Hashes of 2^63 and above come out negative; a client that sends them as unsigned overflows.
constexpr std::int64_t as_bigint(std::uint64_t hash) noexcept {
    return hash <= static_cast<std::uint64_t>(INT64_MAX)
               ? static_cast<std::int64_t>(hash)
               : -static_cast<std::int64_t>(~hash) - 1;  // avoids implementation-defined casts
}

}  // namespace pgsem::core
