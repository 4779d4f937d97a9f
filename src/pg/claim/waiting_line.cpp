#include "core/arguments.hpp"
#include "pg/base/boundary.hpp"
#include "pg/claim/deadlock_check.hpp"
#include "pg/claim/role_quotas.hpp"
#include "pg/claim/waiting_line.hpp"
#include "pg/store/locks.hpp"
#include "pg/store/registry.hpp"
#include "pg/store/timed_locks.hpp"

namespace pgsem {

namespace {

// After the first check (at deadlock_timeout), a first waiter looks for a deadlock again this many
// times deadlock_timeout later: a cycle can close after the check, when a claim holder starts to
// wait in line behind somebody.
constexpr int kDeadlockRecheckFactor = 4;

// ---- waiting in line ------------------------------------------------------------------------

// Joins the line: asks for the line's lock exclusively and waits in the lock manager, behind
// those who asked first. True once this backend holds it (it is the first waiter); false when
// `deadline` passed first (store/timed_locks.hpp).
bool join_line(const text *name, TimestampTz deadline, TimestampTz lock_deadline) {
    return wait_for_lock_until(wait_for_first_place, name, deadline, lock_deadline);
}

// The client went away while this backend waits: end the session as Postgres does when it finds
// out (ProcessInterrupts' "connection to client lost").
void note_client_gone() {
    ClientConnectionLost = true;
    InterruptPending = true;
}

// Sleeps until the latch is set, `timeout_ms` passes or, when `watch_client`, the client goes away.
// With a client it sleeps in the connection's own wait set, set to report the socket closed (as
// pq_check_connection leaves it; every site that waits on that set sets its own socket event
// first): a wait set made per sleep would cost five more system calls for every grant, paid by
// each waiter that moves up to first place.
void sleep_first_in_line(long timeout_ms, bool watch_client) {
    if (!watch_client) {
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms,
                        PG_WAIT_EXTENSION);
        return;
    }
    ModifyWaitEvent(FeBeWaitSet, FeBeWaitSetSocketPos, WL_SOCKET_CLOSED, nullptr);
    WaitEvent events[FeBeWaitSetNEvents];
    const int count =
        WaitEventSetWait(FeBeWaitSet, timeout_ms, events, lengthof(events), PG_WAIT_EXTENSION);
    for (int i = 0; i < count; ++i) {
        if ((events[i].events & WL_POSTMASTER_DEATH) != 0)
            ereport(FATAL, (errcode(ERRCODE_ADMIN_SHUTDOWN),
                            errmsg("terminating connection due to unexpected postmaster exit")));
        if ((events[i].events & WL_SOCKET_CLOSED) != 0) note_client_gone();
    }
}

}  // namespace

bool line_join(LineWait *wait, const SlotRequest &request, TimestampTz start, TimestampTz deadline,
               bool timed) {
    wait->request = &request;
    wait->deadline = deadline;
    wait->lock_deadline = lock_timeout_deadline(start);
    wait->deadlock_interval = static_cast<int64>(Max(DeadlockTimeout, 1)) * 1000;
    wait->deadlock_suspected = false;
    wait->watch_client =
        MyProcPort != nullptr && FeBeWaitSet != nullptr && WaitEventSetCanReportClosed();
    wait->caller = CurrentMemoryContext;
    wait->look_context = nullptr;
    wait->since = start;
    wait->noted_n = request.n;
    wait->timed = timed;
    registry_note_wait(request.kind, request.name, request.n, request.permits, start, timed);
    require_waiters_quota();  // an error forgets the wait (xact_events.cpp)
    if (!join_line(request.name, deadline, wait->lock_deadline)) {
        registry_forget_wait();
        return false;
    }
    wait->next_deadlock_check = wait_clock_now() + wait->deadlock_interval;
    // Waiting behind, in the lock manager, this backend did not watch its client. Now first, it
    // looks before it takes anything: a slot taken for a client that is gone would be lost to
    // everyone until its lease ran out.
    if (wait->watch_client && !pq_check_connection()) note_client_gone();
    wait->look_context =
        AllocSetContextCreate(wait->caller, "pgsem first waiter's look", ALLOCSET_DEFAULT_SIZES);
    return true;
}

void line_begin_look(LineWait *wait) {
    ResetLatch(MyLatch);  // before looking: a release after the look sets it again
    CHECK_FOR_INTERRUPTS();
    MemoryContextReset(wait->look_context);
    MemoryContextSwitchTo(wait->look_context);
}

void line_end_look(LineWait *wait) {
    MemoryContextSwitchTo(wait->caller);
}

bool line_sleep(LineWait *wait, TimestampTz next_expiry, int32 lacking) {
    const SlotRequest &request = *wait->request;
    // The views, and other first waiters' deadlock checks, read this wait's n from the registry.
    if (request.n != wait->noted_n) {
        registry_note_wait(request.kind, request.name, request.n, request.permits, wait->since,
                           wait->timed);
        wait->noted_n = request.n;
    }
    const TimestampTz now = wait_clock_now();
    if (now >= wait->deadline) return false;
    if (wait->lock_deadline != 0 && now >= wait->lock_deadline)
        ereport(ERROR, (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
                        errmsg("canceling statement due to lock timeout"),
                        errdetail("It waited for a slot of semaphore \"%s\".",
                                  text_to_cstring(request.name))));
    if (!wait->timed && now >= wait->next_deadlock_check) {
        // Two looks a deadlock_timeout apart, so that a waiter woken but not yet at its slot is
        // never taken for a stuck one. The check allocates in this line's look context, emptied
        // first: nothing of the last look is used after it, and a set checks in the context of
        // whichever member it lacks, which no look of its own empties (claim_sequence.cpp).
        MemoryContextReset(wait->look_context);
        MemoryContextSwitchTo(wait->look_context);
        const bool stuck = first_waiter_deadlocked(request.name, request.n, lacking);
        MemoryContextSwitchTo(wait->caller);
        if (stuck && wait->deadlock_suspected) raise_semaphore_deadlock(request.name);
        wait->deadlock_suspected = stuck;
        wait->next_deadlock_check =
            now + wait->deadlock_interval * (stuck ? 1 : kDeadlockRecheckFactor);
        // The check read the table, and may have waited for its lock (behind a VACUUM FULL):
        // the lock manager's sleep resets the latch, so a release meanwhile woke nobody. Look
        // again instead of sleeping.
        return true;
    }
    TimestampTz wake_at =
        wait->timed ? wait->deadline : Min(wait->deadline, wait->next_deadlock_check);
    if (first_waiter_recheck_ms > 0)
        wake_at = Min(wake_at, now + static_cast<int64>(first_waiter_recheck_ms) * 1000);
    if (wait->lock_deadline != 0) wake_at = Min(wake_at, wait->lock_deadline);
    int64 sleep_ms = millis_until(wake_at, now);
    // A lease's expiry, a window's edge and a pause's end are times on the wall clock: a step
    // moves them, by design, where it moves no deadline of the wait.
    if (next_expiry != 0)
        sleep_ms = Min(sleep_ms, millis_until(next_expiry, GetCurrentTimestamp()));
    sleep_first_in_line(static_cast<long>(Max(sleep_ms, 1)), wait->watch_client);
    return true;
}

void line_leave(LineWait *wait) {
    MemoryContextDelete(wait->look_context);
    leave_first_place(wait->request->name);  // the next in line is first now
    registry_forget_wait();
}

}  // namespace pgsem
