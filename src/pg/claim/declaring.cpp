#include "pg/claim/declaring.hpp"
#include "pg/store/declarations.hpp"

namespace pgsem {

namespace {

void require_owner(const char *function, const Declaration &d) {
    if (has_privs_of_role(GetUserId(), d.owner)) return;
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: must be owner of semaphore declaration \"%s\"", function, d.pattern),
             errdetail("It is owned by role \"%s\".", GetUserNameFromId(d.owner, true) != nullptr
                                                          ? GetUserNameFromId(d.owner, true)
                                                          : "(dropped)")));
}

}  // namespace

void declare(const text *pattern, int32 n, const Interval *max_lease, const Interval *max_wait) {
    Declaration found{};
    if (declarations_lock(pattern, &found)) {
        require_owner("sem_declare()", found);
        declarations_update(pattern, n, max_lease, max_wait);
        return;
    }
    if (!has_privs_of_role(GetUserId(), ROLE_PG_DATABASE_OWNER))
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("sem_declare(): permission denied to declare \"%s\"",
                               text_to_cstring(pattern)),
                        errdetail("A declaration takes a name from every other role: only the "
                                  "database's owner (pg_database_owner) and superusers make "
                                  "them.")));
    declarations_insert(pattern, n, max_lease, max_wait, GetUserId());
}

bool undeclare(const text *pattern) {
    Declaration found{};
    if (!declarations_lock(pattern, &found)) return false;
    require_owner("sem_undeclare()", found);
    return declarations_delete(pattern);
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
