#include "core/arguments.hpp"
#include "pg/claim/admission.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/claim/pausing.hpp"
#include "pg/store/pauses.hpp"

namespace pgsem {

namespace {

// Pauses in force a database keeps: every claim looks its name up in a copy of them all, and
// any role that may claim a name may pause it.
constexpr int kMaxPauses = 10000;

}  // namespace

TimestampTz pause_name(const char *function, const text *name, bool clear, TimestampTz until) {
    require_primary(function, true);
    // A pause holds back every caller of the name, as holding all of its slots would: the right
    // to claim it is the right to pause it (and under pgsem.require_declared, only declared
    // names may be paused).
    require_right_to_claim(function, name);
    const TimestampTz now = GetCurrentTimestamp();
    if (!clear && until > now + core::kMicrosPerDay)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: a pause must end within 1 day", function),
                        errdetail("It would end at %s.", timestamptz_to_str(until))));
    if (!clear && until <= now) return pause_until(name, now);
    if (!clear && pause_until(name, now) == 0 && pauses_in_force(now) >= kMaxPauses)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                 errmsg("%s: a database keeps at most %d pauses in force", function, kMaxPauses)));
    return pauses_set(name, until, clear);
}

}  // namespace pgsem
