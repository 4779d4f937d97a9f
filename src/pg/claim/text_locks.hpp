// Text-keyed advisory locks: each takes, tries or releases exactly the lock that the matching
// pg_advisory_*(bigint) function takes on fnv1a_64(key).
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

enum class LockScope : unsigned char { kTransaction, kSession };
enum class LockWait : unsigned char { kBlock, kTry };

struct TextLock {
    const char *sql_name;  // for messages, e.g. "advisory_lock_text()"
    LockScope scope;
    LOCKMODE mode;  // ExclusiveLock or ShareLock, as Postgres' advisory functions use
    LockWait wait;
};

// Takes `lock` on the key's hash; returns whether it was taken (always true when waiting:
// failures are errors). Refused on a hot standby, where it would exclude nobody on the primary;
// a transaction-scoped lock outside a transaction block warns that it protects nothing.
bool text_lock_acquire(const TextLock &lock, const text *key);

// Like pg_advisory_unlock: false, with Postgres' own WARNING, when the lock was not held.
bool text_lock_release(const text *key, LOCKMODE mode);

}  // namespace pgsem
