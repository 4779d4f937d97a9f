#include "pg/boundary.hpp"

namespace pgsem {

void copy_message(char *buffer, std::size_t size, const char *what) noexcept {
    std::size_t i = 0;
    for (; what != nullptr && what[i] != '\0' && i + 1 < size; ++i) buffer[i] = what[i];
    buffer[i] = '\0';
}

void raise_cpp_failure(CppFailure kind, const char *what) noexcept {
    ereport(ERROR, (errcode(kind == CppFailure::kOutOfMemory ? ERRCODE_OUT_OF_MEMORY
                                                             : ERRCODE_INTERNAL_ERROR),
                    errmsg("pgsem: C++ failure: %s", what)));
    pg_unreachable();
}

}  // namespace pgsem
