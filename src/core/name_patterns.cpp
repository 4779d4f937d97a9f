#include "core/name_patterns.hpp"

#include <algorithm>

namespace pgsem::core {

bool is_prefix_pattern(std::string_view pattern) noexcept {
    return !pattern.empty() && pattern.back() == kPrefixMark;
}

std::string_view pattern_stem(std::string_view pattern) noexcept {
    return is_prefix_pattern(pattern) ? pattern.substr(0, pattern.size() - 1) : pattern;
}

void sort_patterns(PatternEntry *entries, std::size_t count) noexcept {
    std::sort(entries, entries + count,
              [](const PatternEntry &a, const PatternEntry &b) { return a.stem < b.stem; });
}

namespace {

// The last entry whose stem is <= key, or nullptr.
const PatternEntry *last_not_above(const PatternEntry *entries, std::size_t count,
                                   std::string_view key) noexcept {
    const PatternEntry *end = entries + count;
    const PatternEntry *after = std::upper_bound(
        entries, end, key, [](std::string_view k, const PatternEntry &e) { return k < e.stem; });
    return after == entries ? nullptr : after - 1;
}

std::size_t common_prefix(std::string_view a, std::string_view b) noexcept {
    const std::size_t limit = std::min(a.size(), b.size());
    std::size_t i = 0;
    while (i < limit && a[i] == b[i]) ++i;
    return i;
}

}  // namespace

std::int32_t lookup(const PatternEntry *exact, std::size_t exact_count,
                    const PatternEntry *prefixes, std::size_t prefix_count,
                    std::string_view name) noexcept {
    const PatternEntry *same = last_not_above(exact, exact_count, name);
    if (same != nullptr && same->stem == name) return same->index;
    // The greatest stem p <= key: if p is a prefix of key, no longer prefix of key exists (it
    // would sort between p and key). If it is not, every prefix of key that is a stem is also a
    // prefix of common_prefix(p, key), which is shorter than key: look again below that.
    std::string_view key = name;
    for (;;) {
        const PatternEntry *p = last_not_above(prefixes, prefix_count, key);
        if (p == nullptr) return -1;
        if (key.substr(0, p->stem.size()) == p->stem) return p->index;
        key = key.substr(0, common_prefix(p->stem, key));
    }
}

}  // namespace pgsem::core
