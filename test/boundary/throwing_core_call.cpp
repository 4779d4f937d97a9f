// Must NOT compile: PGSEM_NOTHROW around a call that may throw (boundary rule 2).
#include <stdexcept>

#include "pg/base/boundary.hpp"

namespace {
int may_throw(int x) {
    if (x < 0) throw std::invalid_argument("negative");
    return x;
}
}  // namespace

int checked(int x) {
    return PGSEM_NOTHROW(may_throw(x));
}
