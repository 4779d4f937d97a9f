// Declarations (sem_declare) name one semaphore, "payments-api", or every semaphore whose name
// begins with a prefix, written with a '*' at the end: "tenant:*". A name falls under its own
// declaration if there is one, else under the longest declared prefix it begins with.
//
// Pure C++ (no Postgres header): what a pattern is, and the lookup a claim makes in the
// declarations a backend has cached (src/pg/store/declarations.hpp), over sorted arrays it owns.
#pragma once

#include "core/cpp_only.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pgsem::core {

// '*' ends a prefix pattern; "*" alone is the empty prefix, which every name begins with. A name
// that itself ends in '*' cannot be declared on its own: the pattern would be a prefix.
inline constexpr char kPrefixMark = '*';

// A pattern is checked as a name is (core/arguments.hpp: 1 to kMaxNameBytes bytes, the '*'
// included).
bool is_prefix_pattern(std::string_view pattern) noexcept;
// What a pattern matches: the name itself, or the prefix without its '*'.
std::string_view pattern_stem(std::string_view pattern) noexcept;

// One declared pattern, by its stem, with the caller's index of the declaration.
struct PatternEntry {
    std::string_view stem;
    std::int32_t index;
};

// Sorts entries bytewise by stem (a prefix of a stem sorts first), as lookup() needs them.
void sort_patterns(PatternEntry *entries, std::size_t count) noexcept;

// The index of the declaration `name` falls under, or -1: the exact entry equal to it, else the
// longest prefix entry it begins with. `exact` and `prefixes` are sorted by sort_patterns.
std::int32_t lookup(const PatternEntry *exact, std::size_t exact_count,
                    const PatternEntry *prefixes, std::size_t prefix_count,
                    std::string_view name) noexcept;

}  // namespace pgsem::core
