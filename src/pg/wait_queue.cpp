#include "core/arguments.hpp"
#include "pg/boundary.hpp"
#include "pg/claims_table.hpp"
#include "pg/deadlock_check.hpp"
#include "pg/slot_search.hpp"
#include "pg/lock_tags.hpp"
#include "pg/registry.hpp"
#include "pg/wait_queue.hpp"

namespace pgsem {

namespace {

// After the first check (at deadlock_timeout), a first waiter looks for a deadlock again this many
// times deadlock_timeout later: a cycle can close after the check, when a claim holder starts to
// wait in line behind somebody.
constexpr int kDeadlockRecheckFactor = 4;

// ---- waking the first waiter ----------------------------------------------------------------

// Names of semaphores whose first waiters this transaction wakes once its locks are gone, commit
// or rollback: RESOURCE_RELEASE_AFTER_LOCKS, when a waiter woken can take what was freed (at
// XACT_EVENT_COMMIT the transaction still holds its locks). In TopMemoryContext.
constexpr int kMaxPendingWakes = 32;
text *pending[kMaxPendingWakes];
int pending_count = 0;
bool pending_overflow = false;  // more names than that: wake every first waiter instead

void wake_queue_holder(const LOCKTAG &queue) {
    int count = 0;
    // The exclusive holder of the line is its first waiter; share holders (claimers that do not
    // wait) do not conflict with share mode and are not returned.
    const VirtualTransactionId *holders = GetLockConflicts(&queue, ShareLock, &count);
    for (int i = 0; i < count; ++i) {
        PGPROC *proc = BackendIdGetProc(holders[i].backendId);
        if (proc != nullptr) SetLatch(&proc->procLatch);
    }
}

// Wakes the first waiter of every semaphore of this database.
void wake_every_first_waiter() {
    const LockData *locks = GetLockStatusData();
    for (int i = 0; i < locks->nelements; ++i) {
        const LockInstanceData &lock = locks->locks[i];
        if (pgsem_lock_class(lock.locktag) != LockClass::kQueue) continue;
        if ((lock.holdMask & LOCKBIT_ON(ExclusiveLock)) == 0) continue;
        PGPROC *proc = BackendIdGetProc(lock.backend);
        if (proc != nullptr) SetLatch(&proc->procLatch);
    }
}

void forget_pending() {
    for (int i = 0; i < pending_count; ++i) pfree(pending[i]);
    pending_count = 0;
    pending_overflow = false;
}

void on_resource_release(ResourceReleasePhase phase, bool is_commit, bool is_top_level,
                         void * /*arg*/) {
    if (phase != RESOURCE_RELEASE_AFTER_LOCKS) return;
    if (pending_count == 0 && !pending_overflow) return;
    if (is_commit && !is_top_level) return;  // a subtransaction's locks pass to its parent
    if (pending_overflow) {
        wake_every_first_waiter();
    } else {
        for (int i = 0; i < pending_count; ++i) wake_first_waiter_now(pending[i]);
    }
    if (is_top_level) forget_pending();
}

// ---- looking for a slot -----------------------------------------------------------------------

// One look for a free slot, with pgsem.claims open for the look alone: unless the look wrote (a
// lease inserted, an expired one recorded as timed out), the table lock goes with it, so that
// nobody sleeps holding it (claims_close_unlocking).
SlotGrant look_for_slot(const SlotRequest &request) {
    ClaimsTable table;
    claims_open(&table, request.kind == ClaimKind::kLease ? RowExclusiveLock : AccessShareLock);
    const SlotGrant grant = take_free_slot(&table, request);
    claims_close_unlocking(&table);
    return grant;
}

// ---- waiting in line ------------------------------------------------------------------------

int64 millis_until(TimestampTz when, TimestampTz now) {
    const int64 micros = when - now;
    return micros <= 0 ? 0 : (micros + 999) / 1000;
}

// Joins the line: asks for the line's lock exclusively and waits in the lock manager, behind
// those who asked first. True once this backend holds it (it is the first waiter); false when
// `deadline` passed first. The wait is a lock wait, with lock_timeout set for it to the time left
// (or to what is left of the caller's own lock_timeout, when that ends first: then its error
// stands); catching that timeout takes a subtransaction.
bool join_line(const LOCKTAG &queue, TimestampTz deadline, TimestampTz lock_deadline) {
    const TimestampTz now = GetCurrentTimestamp();
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
    volatile bool joined = false;
    BeginInternalSubTransaction(nullptr);
    MemoryContextSwitchTo(context);
    PG_TRY();
    {
        (void)LockAcquire(&queue, ExclusiveLock, false, false);
        ReleaseCurrentSubTransaction();  // the lock passes to the caller's transaction
        MemoryContextSwitchTo(context);
        CurrentResourceOwner = owner;
        joined = true;
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(context);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        RollbackAndReleaseCurrentSubTransaction();  // leaves the line (LockErrorCleanup)
        MemoryContextSwitchTo(context);
        CurrentResourceOwner = owner;
        if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE || !timeout_is_ours)
            ReThrowError(error);  // cancel, statement_timeout, the caller's lock_timeout...
        FreeErrorData(error);
    }
    PG_END_TRY();
    AtEOXact_GUC(true, guc_level);
    return joined;
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

// First in line: looks for a slot each time a slot may have freed up, until one is taken or the
// deadline passes. Each look runs in a memory context of its own, emptied after it, so a wait of
// any length takes no more memory than one look.
SlotGrant wait_first_in_line(const SlotRequest &request, TimestampTz deadline,
                             TimestampTz lock_deadline) {
    const bool watch_client =
        MyProcPort != nullptr && FeBeWaitSet != nullptr && WaitEventSetCanReportClosed();
    TimestampTz now = GetCurrentTimestamp();
    const int64 deadlock_interval = static_cast<int64>(Max(DeadlockTimeout, 1)) * 1000;
    TimestampTz next_deadlock_check = now + deadlock_interval;
    bool deadlock_suspected = false;
    // Waiting behind, in the lock manager, this backend did not watch its client. Now first, it
    // looks before it takes anything: a slot taken for a client that is gone would be lost to
    // everyone until its lease ran out.
    if (watch_client && !pq_check_connection()) note_client_gone();
    const MemoryContext caller = CurrentMemoryContext;
    const MemoryContext look_context =
        AllocSetContextCreate(caller, "pgsem first waiter's look", ALLOCSET_DEFAULT_SIZES);
    for (;;) {
        ResetLatch(MyLatch);  // before looking: a release after the look sets it again
        CHECK_FOR_INTERRUPTS();
        MemoryContextReset(look_context);
        MemoryContextSwitchTo(look_context);
        const SlotGrant grant = look_for_slot(request);
        MemoryContextSwitchTo(caller);
        now = GetCurrentTimestamp();
        if (grant.granted || now >= deadline) {
            MemoryContextDelete(look_context);
            return grant;
        }
        if (lock_deadline != 0 && now >= lock_deadline)
            ereport(ERROR, (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
                            errmsg("canceling statement due to lock timeout"),
                            errdetail("It waited for a slot of semaphore \"%s\".",
                                      text_to_cstring(request.name))));
        if (now >= next_deadlock_check) {
            // Two looks a deadlock_timeout apart, so that a waiter woken but not yet at its slot
            // is never taken for a stuck one.
            MemoryContextSwitchTo(look_context);
            const bool stuck = first_waiter_deadlocked(request.name, request.n);
            MemoryContextSwitchTo(caller);
            if (stuck && deadlock_suspected) raise_semaphore_deadlock(request.name);
            deadlock_suspected = stuck;
            next_deadlock_check = now + deadlock_interval * (stuck ? 1 : kDeadlockRecheckFactor);
        }
        TimestampTz wake_at = Min(deadline, next_deadlock_check);
        if (first_waiter_recheck_ms > 0)
            wake_at = Min(wake_at, now + static_cast<int64>(first_waiter_recheck_ms) * 1000);
        if (lock_deadline != 0) wake_at = Min(wake_at, lock_deadline);
        if (grant.next_expiry != 0) wake_at = Min(wake_at, grant.next_expiry);
        sleep_first_in_line(static_cast<long>(Max(millis_until(wake_at, now), 1)), watch_client);
    }
}

SlotGrant wait_in_line(const SlotRequest &request, const LOCKTAG &queue, TimestampTz start,
                       TimestampTz deadline) {
    const TimestampTz lock_deadline =
        LockTimeout > 0 ? start + static_cast<int64>(LockTimeout) * 1000 : 0;
    registry_note_wait(request.kind, request.name, request.n, start);
    SlotGrant grant{false, -1, 0, 0};
    if (join_line(queue, deadline, lock_deadline)) {
        grant = wait_first_in_line(request, deadline, lock_deadline);
        // The next in line is first now. The lock was taken in a subtransaction, whose commit
        // handed it to the transaction's resource owner (not to the statement's portal).
        const ResourceOwner owner = CurrentResourceOwner;
        CurrentResourceOwner = CurTransactionResourceOwner;
        (void)LockRelease(&queue, ExclusiveLock, false);
        CurrentResourceOwner = owner;
    }
    registry_forget_wait();
    return grant;
}

}  // namespace

void install_wait_queue_callbacks() {
    RegisterResourceReleaseCallback(on_resource_release, nullptr);
}

void wake_first_waiter_now(const text *name) {
    LOCKTAG queue;
    name_locktag(&queue, LockClass::kQueue, name);
    wake_queue_holder(queue);
}

void wake_first_waiter_at_end(const text *name) {
    for (int i = 0; i < pending_count; ++i)
        if (VARSIZE_ANY_EXHDR(pending[i]) == VARSIZE_ANY_EXHDR(name) &&
            memcmp(VARDATA_ANY(pending[i]), VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name)) == 0)
            return;
    if (pending_count == kMaxPendingWakes) {
        pending_overflow = true;
        return;
    }
    text *copy = static_cast<text *>(MemoryContextAlloc(TopMemoryContext, VARSIZE_ANY(name)));
    memcpy(copy, name, VARSIZE_ANY(name));
    pending[pending_count++] = copy;
}

SlotGrant claim_slot(const SlotRequest &request, int64 wait) {
    const TimestampTz start = GetCurrentTimestamp();
    LOCKTAG queue;
    name_locktag(&queue, LockClass::kQueue, request.name);
    SlotGrant grant{false, -1, 0, 0};
    // Nobody in line: look for a slot, holding the line in share mode so that nobody who comes
    // to wait can take the first place meanwhile.
    if (LockAcquire(&queue, ShareLock, false, true) != LOCKACQUIRE_NOT_AVAIL) {
        grant = look_for_slot(request);
        (void)LockRelease(&queue, ShareLock, false);
        if (grant.granted || wait == 0) return grant;
    } else if (wait == 0) {
        return grant;  // others wait: no passing them
    }
    return wait_in_line(request, queue, start, start + wait);
}

}  // namespace pgsem
