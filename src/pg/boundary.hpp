// THE C++/POSTGRES BOUNDARY RULE. Every file under src/ follows it; this is the one place it is
// written down.
//
// 1. ereport(ERROR) is a siglongjmp: it unwinds no C++ frame and skips every destructor between
//    the ereport and the PG_TRY (or the backend's top-level handler) that catches it. So code that
//    calls into Postgres -- any function that may ereport, which is nearly all of them -- owns no
//    object with a non-trivial destructor in any frame live during that call. The glue under
//    src/pg is written that way: plain structs, palloc'd memory, no std::string, std::vector or
//    smart pointer. Postgres memory contexts free what an error leaves behind.
// 2. A C++ exception that reaches a C frame calls std::terminate: the backend aborts and the
//    postmaster restarts every session. So C++ that may throw -- the core under src/core and any
//    use of the standard library that allocates -- is entered only through pgsem::cpp_call(),
//    which catches everything and raises it with ereport after the catch block has ended and the
//    exception object is gone.
// 3. The core under src/core includes no Postgres header and never calls back into Postgres, so it
//    may own whatever objects it likes.
// 4. Every SQL-callable function is declared with PGSEM_SQL_FUNCTION (extern "C" plus
//    PG_FUNCTION_INFO_V1) and is a thin shim: it converts arguments, calls code that knows nothing
//    of fcinfo, and converts the result.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <type_traits>

#include "pg/postgres_api.hpp"

#define PGSEM_SQL_FUNCTION(name) \
    extern "C" {                 \
    PG_FUNCTION_INFO_V1(name);   \
    }                            \
    extern "C" Datum name(PG_FUNCTION_ARGS)

namespace pgsem {

enum class CppFailure : unsigned char { kOutOfMemory, kException, kUnknown };

// Raises the ERROR for a caught C++ exception. Called only after the catch block has ended.
[[noreturn]] void raise_cpp_failure(CppFailure kind, const char *what) noexcept;

// Copies an exception message into a fixed buffer, so nothing of the exception outlives the catch.
void copy_message(char *buffer, std::size_t size, const char *what) noexcept;

// Runs C++ that may throw; turns any exception into an ERROR once no C++ object is alive.
template <typename Body>
auto cpp_call(Body &&body) noexcept -> decltype(body()) {
    using Result = decltype(body());
    static_assert(std::is_void_v<Result> || std::is_trivially_destructible_v<Result>,
                  "a result crossing into Postgres code must not need a destructor");
    constexpr std::size_t kMessageSize = 256;
    char message[kMessageSize];
    CppFailure kind = CppFailure::kUnknown;
    try {
        return body();
    } catch (const std::bad_alloc &) {
        kind = CppFailure::kOutOfMemory;
        copy_message(message, kMessageSize, "out of memory");
    } catch (const std::exception &e) {
        kind = CppFailure::kException;
        copy_message(message, kMessageSize, e.what());
    } catch (...) {
        copy_message(message, kMessageSize, "unknown exception");
    }
    raise_cpp_failure(kind, message);
}

}  // namespace pgsem
