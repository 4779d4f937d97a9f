#include "core/arguments.hpp"
#include "core/claim_sets.hpp"

#include <algorithm>

namespace pgsem::core {

SetCheck canonical_order(const std::string_view *names, std::size_t count,
                         std::size_t *order) noexcept {
    for (std::size_t i = 0; i < count; ++i) order[i] = i;
    // Stable: of two equal names, the earlier position stays first, for the error message.
    std::stable_sort(order, order + count,
                     [names](std::size_t a, std::size_t b) { return names[a] < names[b]; });
    for (std::size_t i = 1; i < count; ++i)
        if (names[order[i]] == names[order[i - 1]])
            return {SetProblem::kRepeated, order[i - 1], order[i]};
    return {SetProblem::kNone, 0, 0};
}

SetCheck check_set_shape(std::size_t names, std::size_t ns, bool has_permits, std::size_t permits,
                         std::int64_t permit_sum, bool has_pers, std::size_t pers) noexcept {
    if (names == 0) return {SetProblem::kEmpty, 0, 0};
    if (ns != names || (has_permits && permits != names)) return {SetProblem::kLengths, 0, 0};
    if (has_pers && pers != names) return {SetProblem::kPersLength, 0, 0};
    if (names > kMaxSetNames) return {SetProblem::kTooMany, 0, 0};
    if (permit_sum > kMaxPermits) return {SetProblem::kTooManySlots, 0, 0};
    return {SetProblem::kNone, 0, 0};
}

}  // namespace pgsem::core
