#include "core/fnv1a.hpp"

#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace {

using pgsem::core::as_bigint;
using pgsem::core::fnv1a_64;
using pgsem::core::fnv1a_64_update;

std::uint64_t hash(const std::string &s) {
    return fnv1a_64(reinterpret_cast<const unsigned char *>(s.data()), s.size());
}

// Published FNV-1a 64-bit test vectors (Fowler/Noll/Vo, "FNV test vectors").
TEST(Fnv1a64, PublishedVectors) {
    EXPECT_EQ(hash(""), 0xcbf29ce484222325ULL);
    EXPECT_EQ(hash("a"), 0xaf63dc4c8601ec8cULL);
    EXPECT_EQ(hash("b"), 0xaf63df4c8601f1a5ULL);
    EXPECT_EQ(hash("c"), 0xaf63de4c8601eff2ULL);
    EXPECT_EQ(hash("foo"), 0xdcb27518fed9d577ULL);
    EXPECT_EQ(hash("foobar"), 0x85944171f73967e8ULL);
    EXPECT_EQ(hash("chongo was here!\n"), 0x46810940eff5f915ULL);
}

// The key and the number from the advisory-lock seed article.
TEST(Fnv1a64, SeedArticleKey) {
    EXPECT_EQ(hash("223 345"), 3755351481708176604ULL);
    EXPECT_EQ(as_bigint(hash("223 345")), 3755351481708176604LL);
}

TEST(Fnv1a64, HashesAtOrAbove2To63AreNegativeBigints) {
    EXPECT_EQ(as_bigint(0x8000000000000000ULL), INT64_MIN);
    EXPECT_EQ(as_bigint(0xffffffffffffffffULL), -1);
    EXPECT_EQ(as_bigint(0x7fffffffffffffffULL), INT64_MAX);
    EXPECT_EQ(as_bigint(0), 0);
    // The empty key's hash is the offset basis, above 2^63.
    EXPECT_EQ(as_bigint(hash("")), -3750763034362895579LL);
}

TEST(Fnv1a64, BigintKeepsAllSixtyFourBits) {
    for (const char *key : {"", "a", "foobar", "223 345", "ключ", "\xff\xfe"}) {
        const std::uint64_t h = hash(key);
        const std::int64_t b = as_bigint(h);
        std::uint64_t back = 0;
        std::memcpy(&back, &b, sizeof back);
        EXPECT_EQ(back, h) << key;
    }
}

TEST(Fnv1a64, HashingInPiecesEqualsHashingTheWhole) {
    const std::string whole = "semaphore-name/slot";
    const auto *bytes = reinterpret_cast<const unsigned char *>(whole.data());
    const std::uint64_t first = fnv1a_64(bytes, 9);
    EXPECT_EQ(fnv1a_64_update(first, bytes + 9, whole.size() - 9), hash(whole));
}

TEST(Fnv1a64, MultiByteKeysHashTheirBytes) {
    // "é" in UTF-8 is two bytes; the hash is over bytes, not characters.
    const unsigned char utf8[] = {0xc3, 0xa9};
    EXPECT_EQ(fnv1a_64(utf8, 2), hash("\xc3\xa9"));
    EXPECT_NE(fnv1a_64(utf8, 1), fnv1a_64(utf8, 2));
}

static_assert(fnv1a_64(nullptr, 0) == 0xcbf29ce484222325ULL, "usable at compile time");

}  // namespace
