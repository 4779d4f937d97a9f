#include "pg/base/argument_checks.hpp"
#include "pg/claim/declaring.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/timed_locks.hpp"

namespace pgsem {

namespace {

const char *role_name(Oid role) {
    const char *name = GetUserNameFromId(role, true);
    return name != nullptr ? name : "(dropped)";
}

void require_owner(const char *function, const Declaration &d) {
    if (has_privs_of_role(GetUserId(), d.owner)) return;
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: must be owner of semaphore declaration \"%s\"", function, d.pattern),
             errdetail("It is owned by role \"%s\".", role_name(d.owner))));
}

// Declarations a database keeps: each backend that claims keeps a copy of them all
// (store/declarations.hpp), and a prefix declares any number of names in one row.
constexpr int kMaxDeclarations = 10000;

// A new declaration takes its names from everyone: from the roles that claim them undeclared, and
// from the owner of the prefix they fall under now, whose n, maxima and grants would no longer
// govern them. The first is the database owner's right; the second only that owner's.
void require_may_declare(const char *function, const text *pattern) {
    if (!has_privs_of_role(GetUserId(), ROLE_PG_DATABASE_OWNER))
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("%s: permission denied to declare \"%s\"", function,
                               text_to_cstring(pattern)),
                        errdetail("A declaration takes a name from every other role: only the "
                                  "database's owner (pg_database_owner) and superusers make "
                                  "them.")));
    const Declaration *covering = find_covering_prefix(pattern);
    if (covering != nullptr && !has_privs_of_role(GetUserId(), covering->owner))
        ereport(
            ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: permission denied to declare \"%s\"", function, text_to_cstring(pattern)),
             errdetail("Its names fall under declaration \"%s\" of role \"%s\", which a new "
                       "declaration would take them from.",
                       covering->pattern, role_name(covering->owner)),
             errhint("That role (or a superuser) declares it.")));
    if (declarations_count() >= kMaxDeclarations)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                 errmsg("%s: a database keeps at most %d declarations", function, kMaxDeclarations),
                 errhint("Declare a prefix (\"tenant:*\") for names that share limits.")));
}

// How long a rate declaration tries for the lock the rate grants in flight hold (store/locks.hpp),
// and how: in the lock's queue for a short turn at a time, out of it as long again. While it is
// in the queue every new rate grant of the database queues behind it, so a turn is short: a grant
// in flight commits in far less, while a grant's statement that goes on after its grant
// (SELECT sem_rate(...), pg_sleep(600)) holds the lock until it ends -- and would otherwise stall
// every grant, fail-fast ones too, for as long as the declaration waited.
constexpr int64 kRateGrantsPatience = 2 * USECS_PER_SEC;
constexpr int64 kRateGrantsTurn = 50 * core::kMicrosPerMilli;

void take_rate_declarations(const text * /*pattern*/) {
    lock_rate_declarations();
}

// Whether it got the lock within kRateGrantsPatience.
bool hold_rate_declarations(const text *pattern) {
    const TimestampTz start = wait_clock_start();
    const TimestampTz lock_deadline = lock_timeout_deadline(start);
    for (;;) {
        const TimestampTz now = wait_clock_now();
        if (now >= start + kRateGrantsPatience) return false;
        if (wait_for_lock_until(take_rate_declarations, pattern,
                                Min(now + kRateGrantsTurn, start + kRateGrantsPatience),
                                lock_deadline))
            return true;
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                        kRateGrantsTurn / 1000, PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
    }
}

// A name granted as a sliding window and then as a token bucket (or the other way) would be
// granted up to twice its limit: neither kind counts the other's grants. So a declaration that
// makes names a rate limit of one kind waits until the state of the other has passed: 55006.
void require_no_other_rate_in_force(const char *function, const text *pattern, DeclaredKind kind) {
    if (kind == DeclaredKind::kSemaphore) return;  // a semaphore counts every holder of a slot
    // No rate grant is in flight from here until this transaction ends, and the look below reads
    // the latest committed state (store/locks.hpp, store/declarations.hpp).
    if (!hold_rate_declarations(pattern))
        ereport(ERROR,
                (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
                 errmsg("%s: rate grants in flight held \"%s\" back for %s", function,
                        text_to_cstring(pattern), interval_text(kRateGrantsPatience)),
                 errdetail("A rate grant's statement holds the database's rate lock until it "
                           "ends; one that goes on after its grant holds it that long."),
                 errhint("Call it again.")));
    char *name = nullptr;
    TimestampTz until = 0;
    if (!declarations_other_rate_in_force(pattern, kind, &name, &until)) return;
    const bool bucket = kind == DeclaredKind::kBucket;
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_IN_USE),
             errmsg("%s: \"%s\" has %s in force", function, name,
                    bucket ? "grants of a sliding window" : "a token bucket's grants"),
             errdetail("A %s counts nothing of them: its names would be granted up to twice "
                       "their limit. They have all passed at %s.",
                       bucket ? "token bucket" : "sliding window", timestamptz_to_str(until)),
             errhint("Declare it again then, or use another name.")));
}

}  // namespace

void declare(const char *function, const text *pattern, const DeclaredLimits &limits) {
    // Twice at most: the second time, the row a concurrent declaration committed is there (or
    // the snapshot of a repeatable-read transaction cannot see it, and the insert raised 40001).
    for (int attempt = 0;; ++attempt) {
        Declaration found{};
        if (declarations_lock(pattern, &found)) {
            require_owner(function, found);
            require_no_other_rate_in_force(function, pattern, limits.kind);
            declarations_update(pattern, limits);
            return;
        }
        require_may_declare(function, pattern);
        require_no_other_rate_in_force(function, pattern, limits.kind);
        if (declarations_insert(pattern, limits, GetUserId())) return;
        // A concurrent call declared it first, and has committed: change it, as its owner.
        if (attempt > 0)
            ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                            errmsg("%s: \"%s\" was declared concurrently", function,
                                   text_to_cstring(pattern)),
                            errhint("Call it again.")));
    }
}

bool undeclare(const text *pattern) {
    Declaration found{};
    if (!declarations_lock(pattern, &found)) return false;
    require_owner("sem_undeclare()", found);
    // The covering prefix's pattern and kind are copied: the checks below read tables, and a
    // change committed meanwhile drops the copy they live in.
    const Declaration *covering = find_covering_prefix(pattern);
    const char *covering_pattern = covering != nullptr ? pstrdup(covering->pattern) : nullptr;
    const DeclaredKind covering_kind = covering != nullptr ? covering->kind : found.kind;
    // Its names fall under the covering prefix, and become what it declares.
    if (covering_kind != found.kind)
        require_no_other_rate_in_force("sem_undeclare()", pattern, covering_kind);
    return declarations_delete(pattern, covering_pattern);
}

void set_claim_right(const char *function, const text *pattern, Oid grantee, bool granted) {
    Declaration found{};
    if (!declarations_lock(pattern, &found))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("%s: semaphore declaration \"%s\" does not exist", function,
                               text_to_cstring(pattern)),
                        errhint("Declare it first: sem_declare(name, n).")));
    require_owner(function, found);
    declarations_set_grant(pattern, grantee, granted);
}

}  // namespace pgsem
