#include "core/name_patterns.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace pgsem::core {
namespace {

struct Declared {
    std::vector<std::string> patterns;
    std::vector<PatternEntry> exact;
    std::vector<PatternEntry> prefixes;

    explicit Declared(std::vector<std::string> p) : patterns(std::move(p)) {
        for (std::size_t i = 0; i < patterns.size(); ++i) {
            const PatternEntry e{pattern_stem(patterns[i]), static_cast<std::int32_t>(i)};
            (is_prefix_pattern(patterns[i]) ? prefixes : exact).push_back(e);
        }
        sort_patterns(exact.data(), exact.size());
        sort_patterns(prefixes.data(), prefixes.size());
    }
    // The pattern `name` falls under, or "" for none.
    std::string find(std::string_view name) const {
        const std::int32_t i =
            lookup(exact.data(), exact.size(), prefixes.data(), prefixes.size(), name);
        return i < 0 ? std::string() : patterns[static_cast<std::size_t>(i)];
    }
};

TEST(NamePatterns, Stems) {
    EXPECT_TRUE(is_prefix_pattern("tenant:*"));
    EXPECT_TRUE(is_prefix_pattern("*"));
    EXPECT_FALSE(is_prefix_pattern("tenant"));
    EXPECT_FALSE(is_prefix_pattern(""));
    EXPECT_EQ(pattern_stem("tenant:*"), "tenant:");
    EXPECT_EQ(pattern_stem("*"), "");
    EXPECT_EQ(pattern_stem("payments"), "payments");
}

TEST(NamePatterns, ExactBeatsPrefix) {
    const Declared d({"tenant:*", "tenant:42", "tenant:4*"});
    EXPECT_EQ(d.find("tenant:42"), "tenant:42");
    EXPECT_EQ(d.find("tenant:43"), "tenant:4*");
    EXPECT_EQ(d.find("tenant:420"), "tenant:4*");
    EXPECT_EQ(d.find("tenant:5"), "tenant:*");
    EXPECT_EQ(d.find("tenant:"), "tenant:*");
    EXPECT_EQ(d.find("tenant"), "");
    EXPECT_EQ(d.find("other"), "");
}

TEST(NamePatterns, LongestPrefixPastSiblings) {
    // For "abe" the greatest stem below it is "abd", no prefix of it: the answer lies below their
    // common prefix "ab".
    const Declared d({"a*", "abc*", "abd*", "b*"});
    EXPECT_EQ(d.find("abb"), "a*");
    EXPECT_EQ(d.find("abcz"), "abc*");
    EXPECT_EQ(d.find("abe"), "a*");
    EXPECT_EQ(d.find("az"), "a*");
    EXPECT_EQ(d.find("ba"), "b*");
    EXPECT_EQ(d.find("c"), "");
}

TEST(NamePatterns, EmptyPrefixCatchesAll) {
    const Declared d({"*", "x*"});
    EXPECT_EQ(d.find("anything"), "*");
    EXPECT_EQ(d.find("xy"), "x*");
}

TEST(NamePatterns, BytesNotCharacters) {
    // Bytes compare unsigned: "\xc3\xa9" (é) sorts above ASCII.
    const Declared d({"caf\xc3\xa9*", "cafe*"});
    EXPECT_EQ(d.find("caf\xc3\xa9-1"), "caf\xc3\xa9*");
    EXPECT_EQ(d.find("cafe-1"), "cafe*");
    EXPECT_EQ(d.find("caf\xc3"), "");
}

TEST(NamePatterns, NothingDeclared) {
    const Declared d({});
    EXPECT_EQ(d.find("a"), "");
}

// Against the definition, on random patterns over a small alphabet (so that prefixes collide).
TEST(NamePatterns, MatchesBruteForce) {
    std::mt19937 rng(20261125);
    auto word = [&rng](std::size_t max) {
        std::string s(std::uniform_int_distribution<std::size_t>(0, max)(rng), 'a');
        for (char &c : s)
            c = static_cast<char>('a' + std::uniform_int_distribution<int>(0, 2)(rng));
        return s;
    };
    for (int round = 0; round < 300; ++round) {
        std::vector<std::string> patterns;
        const int count = std::uniform_int_distribution<int>(0, 12)(rng);
        for (int i = 0; i < count; ++i) {
            std::string p = word(5);
            if (std::uniform_int_distribution<int>(0, 1)(rng) == 1 || p.empty()) p += '*';
            bool dup = false;
            for (const std::string &q : patterns) dup = dup || q == p;
            if (!dup) patterns.push_back(p);
        }
        const Declared d(patterns);
        for (int probe = 0; probe < 40; ++probe) {
            const std::string name = word(7);
            if (name.empty()) continue;
            std::string expected;
            std::size_t best = 0;
            bool found_prefix = false;
            for (const std::string &p : patterns) {
                if (!is_prefix_pattern(p) && p == name) expected = p;
            }
            if (expected.empty()) {
                for (const std::string &p : patterns) {
                    if (!is_prefix_pattern(p)) continue;
                    const std::string_view stem = pattern_stem(p);
                    if (name.compare(0, stem.size(), stem) == 0 &&
                        (!found_prefix || stem.size() >= best)) {
                        best = stem.size();
                        found_prefix = true;
                        expected = p;
                    }
                }
            }
            EXPECT_EQ(d.find(name), expected) << "name " << name;
        }
    }
}

}  // namespace
}  // namespace pgsem::core
