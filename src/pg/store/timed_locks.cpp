#include "pg/base/boundary.hpp"
#include "pg/store/timed_locks.hpp"

namespace pgsem {

namespace {
TimestampTz clock_started_at = 0;
instr_time clock_started;

// The deadline of a lock wait. ProcSleep ends only with the grant or with an error raised at its
// interrupt check. lock_timeout raises one, but timeout.c compares its end with the wall clock in
// its SIGALRM handler: a step back stretches the wait by the step, a step forward ends it at the
// next alarm. So the deadline is a POSIX timer on CLOCK_MONOTONIC, which timeout.c never sees, on
// a real-time signal Postgres does not use; its handler raises a query cancel, as lock_timeout's
// does, and notes it as its own only when no cancel was pending: one that was (a user's,
// statement_timeout's, the caller's lock_timeout's) keeps its error. A cancel that comes after
// the timer's and before the backend takes it cannot be told apart: it ends the wait as the
// deadline, and is lost.
timer_t deadline_timer;
int deadline_signal = 0;
bool deadline_timer_made = false;
volatile sig_atomic_t deadline_armed = 0;      // a signal outside a wait is ignored
volatile sig_atomic_t deadline_cancelled = 0;  // the timer raised a cancel
// Whether statement_timeout was set when the wait began, and whether it had fired already when
// the timer did: then the cancel error in flight is the statement timeout's, and the timer's
// cancel, raised after it, is a leftover.
volatile sig_atomic_t statement_timed = 0;
volatile sig_atomic_t deadline_after_statement_timeout = 0;

void on_deadline(int) {
    if (deadline_armed == 0 || proc_exit_inprogress || QueryCancelPending) return;
    const int saved_errno = errno;
    deadline_cancelled = 1;
    deadline_after_statement_timeout =
        statement_timed != 0 && !get_timeout_active(STATEMENT_TIMEOUT) ? 1 : 0;
    QueryCancelPending = true;
    InterruptPending = true;
    SetLatch(MyLatch);
    errno = saved_errno;
}

void make_deadline_timer() {
    if (deadline_timer_made) return;
    // The first real-time signal nobody else in this process handles.
    int signo = SIGRTMIN;
    struct sigaction action {};
    for (; signo <= SIGRTMAX; ++signo)
        if (sigaction(signo, nullptr, &action) == 0 &&
            (action.sa_handler == SIG_DFL || action.sa_handler == on_deadline))
            break;
    if (signo > SIGRTMAX)
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
                        errmsg("pgsem: no free real-time signal for a wait's deadline timer"),
                        errdetail("Every real-time signal of this backend has a handler.")));
    action = {};
    action.sa_handler = on_deadline;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    struct sigevent event {};
    event.sigev_notify = SIGEV_SIGNAL;
    event.sigev_signo = signo;
    if (sigaction(signo, &action, nullptr) != 0 ||
        timer_create(CLOCK_MONOTONIC, &event, &deadline_timer) != 0)
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
                        errmsg("pgsem: could not create a wait's deadline timer: %m"),
                        errhint("Each backend that waits needs one POSIX timer, counted against "
                                "the server's user's RLIMIT_SIGPENDING (ulimit -i).")));
    deadline_signal = signo;
    deadline_timer_made = true;
}

// Other code loaded into the backend since (a procedural language's signal handling) may have
// taken the signal over: a timer whose signal nobody handles as pgsem's would never end the wait,
// or, with the default action, end the backend and with it every session of the server.
void require_deadline_signal() {
    struct sigaction action {};
    if (sigaction(deadline_signal, nullptr, &action) != 0 || action.sa_handler != on_deadline)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("pgsem: real-time signal %d of this backend, its wait deadline "
                               "timer's, has been given another handler",
                               deadline_signal),
                        errhint("Claim with waits from a session that does not install its own "
                                "handlers for real-time signals.")));
}

void arm_deadline_timer(int64 micros) {
    struct itimerspec when {};
    when.it_value.tv_sec = static_cast<time_t>(micros / USECS_PER_SEC);
    when.it_value.tv_nsec = static_cast<long>(micros % USECS_PER_SEC) * 1000;
    deadline_cancelled = 0;
    deadline_after_statement_timeout = 0;
    statement_timed = get_timeout_active(STATEMENT_TIMEOUT) ? 1 : 0;
    deadline_armed = 1;
    if (timer_settime(deadline_timer, 0, &when, nullptr) != 0)
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
                        errmsg("pgsem: could not set a wait's deadline timer: %m")));
}

// Disarming an armed timer of this process cannot fail; a signal it already sent is delivered
// by the time the call returns, and one that comes later, while nothing is armed, is ignored.
void disarm_deadline_timer() {
    const struct itimerspec off {};
    (void)timer_settime(deadline_timer, 0, &off, nullptr);
    deadline_armed = 0;
}
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
    make_deadline_timer();
    // The caller's lock_timeout stays Postgres' own, counted from the start of the call.
    const int guc_level = NewGUCNestLevel();
    if (lock_deadline != 0) {
        char setting[32];
        snprintf(setting, sizeof(setting), "%lld",
                 static_cast<long long>(Min(Max(millis_until(lock_deadline, now), 1), INT_MAX)));
        (void)set_config_option("lock_timeout", setting, PGC_USERSET, PGC_S_SESSION,
                                GUC_ACTION_SAVE, true, 0, false);
    }
    require_deadline_signal();

    const MemoryContext context = CurrentMemoryContext;
    const ResourceOwner owner = CurrentResourceOwner;
    volatile bool held = false;
    BeginInternalSubTransaction(nullptr);
    MemoryContextSwitchTo(context);
    PG_TRY();
    {
        arm_deadline_timer(Max(deadline - wait_clock_now(), 1));
        wait(name);
        disarm_deadline_timer();
        // The timer may have fired as the lock was granted: its cancel is taken here, where it is
        // caught as the deadline passing, not at the next interrupt check, where it would reach
        // the caller as an error.
        CHECK_FOR_INTERRUPTS();
        ReleaseCurrentSubTransaction();  // the lock passes to the caller's transaction
        MemoryContextSwitchTo(context);
        CurrentResourceOwner = owner;
        held = true;
    }
    PG_CATCH();
    {
        disarm_deadline_timer();  // whatever error ends the wait
        MemoryContextSwitchTo(context);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        // The error is the timer's when it is a cancel the timer raised before statement_timeout
        // fired.
        const bool ours = deadline_cancelled != 0 && error->sqlerrcode == ERRCODE_QUERY_CANCELED &&
                          deadline_after_statement_timeout == 0;
        // Another error came first (the caller's lock_timeout, the deadlock detector, a statement
        // timeout) and the timer fired before it was disarmed: its cancel must not cancel what
        // the caller does after catching that error.
        if (deadline_cancelled != 0 && !ours) QueryCancelPending = false;
        RollbackAndReleaseCurrentSubTransaction();  // leaves the lock's queue (LockErrorCleanup)
        MemoryContextSwitchTo(context);
        CurrentResourceOwner = owner;
        if (!ours)
            ReThrowError(error);  // a cancel, statement_timeout, the caller's lock_timeout...
        FreeErrorData(error);
    }
    PG_END_TRY();
    AtEOXact_GUC(true, guc_level);
    // A cancel that came for this statement after the timer's (a user's, statement_timeout's)
    // ends it here with its own error: left pending, it would cancel the session's next one.
    if (!held && QueryCancelPending) CHECK_FOR_INTERRUPTS();
    return held;
}

}  // namespace pgsem
