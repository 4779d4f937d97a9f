#include "pg/base/boundary.hpp"
#include "pg/store/timed_locks.hpp"

namespace pgsem {

namespace {
TimestampTz clock_started_at = 0;
instr_time clock_started;
}  // namespace

TimestampTz wait_clock_start() {
    INSTR_TIME_SET_CURRENT(clock_started);
    clock_started_at = GetCurrentTimestamp();
    return clock_started_at;
}

TimestampTz wait_clock_now() {
    instr_time now;
    INSTR_TIME_SET_CURRENT(now);
    INSTR_TIME_SUBTRACT(now, clock_started);
    return clock_started_at + static_cast<int64>(INSTR_TIME_GET_MICROSEC(now));
}

int64 millis_until(TimestampTz when, TimestampTz now) {
    const int64 micros = when - now;
    return micros <= 0 ? 0 : (micros + 999) / 1000;
}

TimestampTz lock_timeout_deadline(TimestampTz start) {
    return LockTimeout > 0 ? start + static_cast<int64>(LockTimeout) * 1000 : 0;
}

bool wait_for_lock_until(void (*wait)(const text *name), const text *name, TimestampTz deadline,
                         TimestampTz lock_deadline) {
    const TimestampTz now = wait_clock_now();
    if (now >= deadline) return false;
    int64 timeout_ms = Max(millis_until(deadline, now), 1);
    bool timeout_is_ours = true;
    if (lock_deadline != 0 && millis_until(lock_deadline, now) < timeout_ms) {
        timeout_ms = Max(millis_until(lock_deadline, now), 1);
        timeout_is_ours = false;
    }
    char setting[32];
    snprintf(setting, sizeof(setting), "%lld", static_cast<long long>(Min(timeout_ms, INT_MAX)));
    const int guc_level = NewGUCNestLevel();
    (void)set_config_option("lock_timeout", setting, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
                            true, 0, false);

    const MemoryContext context = CurrentMemoryContext;
    const ResourceOwner owner = CurrentResourceOwner;
    volatile bool held = false;
    BeginInternalSubTransaction(nullptr);
    MemoryContextSwitchTo(context);
    PG_TRY();
    {
        wait(name);
        // A lock_timeout that fired as the lock was granted leaves its cancel pending (ProcSleep
        // keeps the indicator): take it here, where it is caught as the wait's own deadline,
        // not at the next interrupt check, where it would reach the caller as an error.
        CHECK_FOR_INTERRUPTS();
        ReleaseCurrentSubTransaction();  // the lock passes to the caller's transaction
        MemoryContextSwitchTo(context);
        CurrentResourceOwner = owner;
        held = true;
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(context);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        RollbackAndReleaseCurrentSubTransaction();  // leaves the lock's queue (LockErrorCleanup)
        MemoryContextSwitchTo(context);
        CurrentResourceOwner = owner;
        if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE || !timeout_is_ours)
            ReThrowError(error);  // cancel, statement_timeout, the caller's lock_timeout...
        FreeErrorData(error);
    }
    PG_END_TRY();
    AtEOXact_GUC(true, guc_level);
    return held;
}

}  // namespace pgsem
