#include "core/arguments.hpp"
#include "pg/claim/admission.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/pausing.hpp"
#include "pg/store/declarations.hpp"
#include "pg/store/pauses.hpp"
#include "pg/store/quotas.hpp"
#include "pg/xact/pending_stats.hpp"

namespace pgsem {

namespace {

// Pauses in force a database keeps: every claim looks its name up in a copy of them all, and
// any role that may claim a name may pause it.
constexpr int kMaxPauses = 10000;
// Pauses in force one role may have set: so that no role takes the database's whole room.
constexpr int kMaxPausesPerRole = 100;

// A pause holds back every caller of a name, as holding all of its slots would. A role under a
// claims quota may hold no more than its quota: it may pause only a declared name whose n is
// within it (an undeclared name's n is whatever callers pass).
void require_quota_allows_pause(const char *function, const text *name) {
    RoleQuota quota{};
    if (!find_role_quota(GetUserId(), &quota) || quota.max_claims < 0) return;
    const Declaration *d = find_declaration(name);
    if (d != nullptr && d->n <= quota.max_claims) return;
    ereport(ERROR,
            (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
             errmsg("%s: role \"%s\" may not pause \"%s\" (max_claims = %d)", function,
                    GetUserNameFromId(GetUserId(), false), text_to_cstring(name), quota.max_claims),
             d != nullptr ? errdetail("A pause holds back all %d slots of the name, more than the "
                                      "role's claims quota lets it hold.",
                                      d->n)
                          : errdetail("A pause holds back every slot of the name, which is not "
                                      "declared: a role under a claims quota pauses only "
                                      "declared names within it.")));
}

// A new pause, past the room one role or the database has for pauses in force: 54000.
void require_room_for_pause(const char *function, TimestampTz now) {
    if (pauses_in_force_by(GetUserId(), now) >= kMaxPausesPerRole)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("%s: a role may have set at most %d pauses in force", function,
                               kMaxPausesPerRole)));
    if (pauses_in_force(now) >= kMaxPauses)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                 errmsg("%s: a database keeps at most %d pauses in force", function, kMaxPauses)));
}

}  // namespace

TimestampTz pause_name(const char *function, const text *name, bool clear, TimestampTz until) {
    require_primary(function, true);
    // A pause holds back every caller of the name, as holding all of its slots would: the right
    // to claim it is the right to pause it (and under pgsem.require_declared, only declared
    // names may be paused).
    require_right_to_claim(function, name);
    if (clear) {
        const TimestampTz none = pauses_set(name, 0, true);
        count_pause(name, none);
        return none;
    }
    const TimestampTz now = GetCurrentTimestamp();
    if (until > now + core::kMicrosPerDay)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: a pause must end within 1 day", function),
                        errdetail("It would end at %s.", timestamptz_to_str(until))));
    if (until <= now) return pause_until(name);  // changes nothing
    require_quota_allows_pause(function, name);
    if (pause_until(name) == 0) require_room_for_pause(function, now);
    const TimestampTz in_force = pauses_set(name, until, false);
    count_pause(name, in_force);
    return in_force;
}

}  // namespace pgsem
