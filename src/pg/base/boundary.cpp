#include "pg/base/boundary.hpp"

namespace pgsem {

void raise_cpp_failure(const char *where, bool out_of_memory, const char *what) noexcept {
    ereport(ERROR, (errcode(out_of_memory ? ERRCODE_OUT_OF_MEMORY : ERRCODE_INTERNAL_ERROR),
                    errmsg("pgsem: C++ failure in %s: %s", where,
                           out_of_memory ? "out of memory" : what)));
    pg_unreachable();
}

}  // namespace pgsem
