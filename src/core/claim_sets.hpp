// Claims on several semaphores at once (sem_claim_all and friends): the limits of a set, and the
// one order in which every claimer of a set takes its semaphores' locks.
//
// Pure C++ (no Postgres header). Taking the lines, request keys and slots of a set's semaphores in
// one canonical order -- names compared bytewise -- is what keeps two set claimers that name
// overlapping semaphores in any order from waiting for each other.
#pragma once

#include "core/cpp_only.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pgsem::core {

// A set names at most this many semaphores: each is a line to join and a look to make while the
// set is taken, all at once.
inline constexpr std::size_t kMaxSetNames = 64;

enum class SetProblem : std::uint8_t {
    kNone,
    kEmpty,         // no name
    kTooMany,       // more than kMaxSetNames names
    kLengths,       // the arrays differ in length
    kRepeated,      // a name twice (`first` and `second` say where)
    kTooManySlots,  // the permits of all names add up to more than kMaxPermits
    kPersLength,    // sem_claim_all's pers (given) is not one element per name
};

struct SetCheck {
    SetProblem problem;
    std::size_t first;   // kRepeated: the earlier position
    std::size_t second;  // kRepeated: the later one
};

// Sorts positions 0..count-1 of `names` into the canonical order (bytewise, a prefix first) and
// reports a repeated name; `order` has room for `count` positions.
SetCheck canonical_order(const std::string_view *names, std::size_t count,
                         std::size_t *order) noexcept;

// The shape of a set: `names` names, `ns` and `permits` array lengths (`has_permits` false: no
// permits array, one each), and the sum of the permits (each already checked on its own);
// `pers`, the length of sem_claim_all's windows of rate members, when `has_pers`.
SetCheck check_set_shape(std::size_t names, std::size_t ns, bool has_permits, std::size_t permits,
                         std::int64_t permit_sum, bool has_pers = false,
                         std::size_t pers = 0) noexcept;

}  // namespace pgsem::core
