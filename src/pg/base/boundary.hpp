// THE C++/POSTGRES BOUNDARY RULE. Every file under src/ follows it; this is the one place it is
// written down. Parts of it are checked by the compiler, as each point says.
//
// 1. ereport(ERROR) is a siglongjmp: it unwinds no C++ frame and skips every destructor between
//    the ereport and the PG_TRY (or the backend's top-level handler) that catches it. So code
//    that calls into Postgres -- any function that may ereport, which is nearly all of them --
//    owns no object with a non-trivial destructor in any frame live during that call. The glue
//    under src/pg is written that way: plain structs, palloc'd memory, no std::string,
//    std::vector or smart pointer; Postgres memory contexts free what an error leaves behind.
//    Checked: objects of the core that glue frames keep (a slot finder, a probe sequence) are
//    static_assert'ed trivially destructible where they are used, and so is every result that
//    crosses back through cpp_call.
// 2. A C++ exception that reaches a C frame calls std::terminate: the backend aborts and the
//    postmaster restarts every session. So:
//    - the core (src/core) declares every function the glue calls noexcept, and the glue calls
//      them through PGSEM_NOTHROW(...), which fails the build if the call is not noexcept;
//    - C++ that really can throw (standard containers that allocate) is entered only through
//      PGSEM_CPP_CALL(body), which catches everything and raises an ERROR, naming the function
//      it was called from, after the catch block has ended and the exception object is gone.
// 3. The core includes no Postgres header and never calls back into Postgres, so it may own
//    whatever objects it likes. Checked: every core header includes core/cpp_only.hpp, which
//    fails the build when a Postgres header came first (Postgres' macros -- printf, Min, Assert
//    -- would change the meaning of standard headers after it). Glue files therefore include
//    core headers before any pg/ header.
// 4. The glue includes Postgres only through pg/base/postgres_api.hpp.
// 5. Every SQL-callable function is declared with PGSEM_SQL_FUNCTION (extern "C" plus
//    PG_FUNCTION_INFO_V1) in a src/pg/sql/*_functions.cpp file and is a thin shim: it converts
//    arguments, calls glue that knows nothing of fcinfo, and converts the result.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <type_traits>

#include "pg/base/postgres_api.hpp"

#define PGSEM_SQL_FUNCTION(name) \
    extern "C" {                 \
    PG_FUNCTION_INFO_V1(name);   \
    }                            \
    extern "C" Datum name(PG_FUNCTION_ARGS)

// A call from the glue into the core, which the compiler checks cannot throw (rule 2).
#define PGSEM_NOTHROW(call)                                                                \
    ([&]() noexcept -> decltype(auto) {                                                    \
        static_assert(noexcept(call),                                                      \
                      "the glue calls the core only where it cannot throw: make the core " \
                      "function noexcept, or enter it through pgsem::cpp_call");           \
        return call;                                                                       \
    }())

// Runs C++ that may throw (rule 2), from the function it is written in, which the ERROR names.
#define PGSEM_CPP_CALL(...) ::pgsem::cpp_call(__func__, __VA_ARGS__)

namespace pgsem {

// Raises the ERROR for a C++ exception caught in a call from `where`. Called only after the catch
// block has ended.
[[noreturn]] void raise_cpp_failure(const char *where, bool out_of_memory,
                                    const char *what) noexcept;

// Runs C++ that may throw; turns any exception into an ERROR once no C++ object is alive. Called
// through PGSEM_CPP_CALL.
template <typename Body>
auto cpp_call(const char *where, Body &&body) noexcept -> decltype(body()) {
    using Result = decltype(body());
    static_assert(std::is_void_v<Result> || std::is_trivially_destructible_v<Result>,
                  "a result crossing into Postgres code must not need a destructor");
    constexpr std::size_t kMessageSize = 256;
    char message[kMessageSize] = "unknown exception";
    bool out_of_memory = false;
    try {
        return body();
    } catch (const std::bad_alloc &) {
        out_of_memory = true;
    } catch (const std::exception &e) {
        strlcpy(message, e.what(), kMessageSize);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the message says "unknown exception"
    }
    raise_cpp_failure(where, out_of_memory, message);
}

}  // namespace pgsem
