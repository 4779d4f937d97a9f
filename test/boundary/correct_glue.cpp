// Must compile: core headers first, then the glue's, and core calls that cannot throw. The control
// for the two files beside it, which must fail.
#include "core/fnv1a.hpp"
#include "pg/base/boundary.hpp"

long long checked(const unsigned char *bytes, std::size_t length) {
    return PGSEM_NOTHROW(pgsem::core::as_bigint(pgsem::core::fnv1a_64(bytes, length)));
}
