#include "core/arguments.hpp"
#include "core/claim_sets.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace {

using namespace pgsem::core;

TEST(CanonicalOrder, BytewiseWithPrefixFirst) {
    const std::vector<std::string_view> names{"tenant:b", "provider",          "tenant:a",
                                              "tenant",   "\xc3\xa9t\xc3\xa9", "Z"};
    std::vector<std::size_t> order(names.size());
    const SetCheck check = canonical_order(names.data(), names.size(), order.data());
    EXPECT_EQ(check.problem, SetProblem::kNone);
    // Bytes, not a locale: "Z" (0x5a) before lowercase, UTF-8 0xc3 last.
    EXPECT_EQ(order, (std::vector<std::size_t>{5, 1, 3, 2, 0, 4}));
}

TEST(CanonicalOrder, TheSameWhateverTheCallersOrder) {
    const std::vector<std::string_view> one{"a", "b", "c"};
    const std::vector<std::string_view> other{"c", "a", "b"};
    std::vector<std::size_t> first(3);
    std::vector<std::size_t> second(3);
    canonical_order(one.data(), 3, first.data());
    canonical_order(other.data(), 3, second.data());
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(one[first[i]], other[second[i]]);
}

TEST(CanonicalOrder, RepeatedNameFoundWithItsPositions) {
    const std::vector<std::string_view> names{"x", "y", "z", "y"};
    std::vector<std::size_t> order(names.size());
    const SetCheck check = canonical_order(names.data(), names.size(), order.data());
    EXPECT_EQ(check.problem, SetProblem::kRepeated);
    EXPECT_EQ(check.first, 1U);
    EXPECT_EQ(check.second, 3U);
}

TEST(CanonicalOrder, EmbeddedBytesCount) {
    const std::vector<std::string_view> names{std::string_view("a\0b", 3),
                                              std::string_view("a\0c", 3)};
    std::vector<std::size_t> order(2);
    EXPECT_EQ(canonical_order(names.data(), 2, order.data()).problem, SetProblem::kNone);
}

TEST(SetShape, LengthsLimitsAndSlots) {
    EXPECT_EQ(check_set_shape(0, 0, false, 0, 0).problem, SetProblem::kEmpty);
    EXPECT_EQ(check_set_shape(2, 3, false, 0, 2).problem, SetProblem::kLengths);
    EXPECT_EQ(check_set_shape(2, 2, true, 1, 2).problem, SetProblem::kLengths);
    EXPECT_EQ(check_set_shape(2, 2, true, 0, 2).problem, SetProblem::kLengths);  // '{}'
    EXPECT_EQ(check_set_shape(2, 2, false, 0, 2).problem, SetProblem::kNone);
    EXPECT_EQ(check_set_shape(2, 2, true, 2, 5).problem, SetProblem::kNone);
    EXPECT_EQ(check_set_shape(kMaxSetNames, kMaxSetNames, false, 0, 64).problem, SetProblem::kNone);
    EXPECT_EQ(check_set_shape(kMaxSetNames + 1, kMaxSetNames + 1, false, 0, 65).problem,
              SetProblem::kTooMany);
    EXPECT_EQ(check_set_shape(2, 2, true, 2, kMaxPermits).problem, SetProblem::kNone);
    EXPECT_EQ(check_set_shape(2, 2, true, 2, kMaxPermits + 1).problem, SetProblem::kTooManySlots);
}

TEST(SetShape, PersOnePerNameWhenGiven) {
    EXPECT_EQ(check_set_shape(2, 2, false, 0, 2, true, 2).problem, SetProblem::kNone);
    EXPECT_EQ(check_set_shape(2, 2, false, 0, 2, true, 1).problem, SetProblem::kPersLength);
    EXPECT_EQ(check_set_shape(2, 2, false, 0, 2, true, 0).problem,
              SetProblem::kPersLength);  // '{}'
    EXPECT_EQ(check_set_shape(2, 2, false, 0, 2, false, 0).problem, SetProblem::kNone);
    // The arrays of every claim come first: their message names them.
    EXPECT_EQ(check_set_shape(2, 3, false, 0, 2, true, 1).problem, SetProblem::kLengths);
}

}  // namespace
