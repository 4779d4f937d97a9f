"""What the soak must not leave behind, asked of the server once the clients have stopped and
every lease has run out. Each function returns (ok, what it saw).

"Live" is the README's: a lease holds its slot while it is within its lease, uncommitted, or
fenced or changed by an open transaction; a committed lease past its lease that nobody reaped
yet (sem_summary.expired_unreaped) holds nothing and may stay. Transaction and session claims
and waits are locks, gone when their holders are.
"""

import names

# pgsem's lock classes (pg_locks.objsubid; src/pg/store/locks.hpp): slot mutex, slot holder,
# holders of a name, the line, request key, bucket mutex, rate kinds. The soak takes no advisory
# lock of its own, so any advisory lock at all is pgsem's or a finding.
PGSEM_CLASSES = {20563: 'slot mutex', 20556: 'slot holder', 20558: 'name holders',
                 20561: 'line', 20555: 'request key', 20546: 'bucket mutex', 20562: 'rate kinds'}


def rows(conn, sql, *args):
    """The rows of a statement on `conn` (the checker's connection is in autocommit)."""
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall() if cur.description else []


def value(conn, sql, *args):
    return rows(conn, sql, *args)[0][0]


def claims(conn):
    holders = rows(conn, 'SELECT name, slot, kind, pid FROM sem_holders ORDER BY 1, 2')
    summary = rows(conn, 'SELECT name, live, uncommitted, transaction_claims, session_claims, '
                         'waiting FROM sem_summary WHERE live + uncommitted + transaction_claims '
                         '+ session_claims + waiting > 0 ORDER BY 1')
    within_lease = value(conn, 'SELECT count(*) FROM pgsem.claims WHERE ended_at IS NULL '
                               'AND expires_at > clock_timestamp()')
    stats_now = rows(conn, 'SELECT name, leases, transaction_slots, session_slots, waiters '
                           'FROM sem_stats WHERE leases + transaction_slots + session_slots '
                           '+ waiters > 0')
    unreaped = value(conn, 'SELECT coalesce(sum(expired_unreaped), 0) FROM sem_summary')
    ok = not holders and not summary and within_lease == 0 and not stats_now
    seen = (f'{len(holders)} holders {holders[:5]}, sem_summary {summary[:5]}, {within_lease} '
            f'unended claims within their lease, sem_stats now {stats_now[:5]}; '
            f'{unreaped} expired leases not reaped yet (not live)')
    return ok, seen


def waiters(conn):
    line = rows(conn, 'SELECT name, pid, kind, position FROM sem_waiters ORDER BY 1, 4')
    waiting = rows(conn, "SELECT pid, application_name, wait_event_type, wait_event "
                         "FROM pg_stat_activity WHERE wait_event_type = 'Extension' "
                         "OR (wait_event_type = 'Lock' AND wait_event = 'advisory')")
    return not line and not waiting, f'sem_waiters {line[:5]}, backends waiting {waiting[:5]}'


def locks(conn):
    found = rows(conn, "SELECT objsubid, mode, granted, count(*) FROM pg_locks "
                       "WHERE locktype = 'advisory' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")
    described = [(PGSEM_CLASSES.get(sub, sub), mode, 'held' if granted else 'awaited', count)
                 for sub, mode, granted, count in found]
    return not found, f'advisory locks held or awaited: {described or "none"}'


def registry(conn, probe, holder, role):
    """The shared registry of transaction and session claims and waits, read through a quota:
    a role's quota counts the role's entries in the registry itself (not through the lock
    manager, as the views do), so with a quota of 16 claims and 1 waiter, a fresh session of the
    role takes 16 permits and waits once only if no entry of the role is left anywhere."""
    value(conn, 'SELECT sem_set_quota(%s, 16, 1)', role)
    try:
        problems = []
        probe.rollback()
        try:
            value(probe, "SELECT sem_claim_xact('soak.probe', 16, permits => 16)")
        except Exception as error:  # 53400 names the quota: claims of the role are listed
            problems.append(f'16 permits refused: {str(error).strip()}')
        probe.rollback()
        # The holder (another role) fills soak.probe, so that the probe must wait in line.
        value(holder, "SELECT sem_claim_xact('soak.probe', 1)")
        try:
            got = value(probe, "SELECT sem_claim('soak.probe', 1, '1 second', "
                               "wait => '100 milliseconds')")
            if got is not None:
                problems.append(f'the wait was granted {got} while the slot was held')
        except Exception as error:
            problems.append(f'the wait refused: {str(error).strip()}')
        probe.rollback()
        holder.rollback()
    finally:
        value(conn, 'SELECT sem_set_quota(%s, NULL, NULL)', role)
    return not problems, '; '.join(problems) or 'no claim and no wait of the workers\' role listed'


def all_free(conn):
    """Every semaphore is whole again: n transaction claims of each are granted, the next is
    refused; the window grants all of its n and the bucket its burst at once."""
    problems = []
    for name, n in sorted(names.SEMAPHORES.items()):
        rows(conn, 'BEGIN')
        slots = [value(conn, 'SELECT sem_claim_xact(%s, %s)', name, n) for _ in range(n + 1)]
        rows(conn, 'ROLLBACK')
        if None in slots[:n] or slots[n] is not None:
            problems.append(f'{name}: {slots}')
    if not value(conn, 'SELECT sem_rate(%s, %s, %s::interval, %s)', names.WINDOW,
                 names.WINDOW_N, names.WINDOW_PER, names.WINDOW_N):
        problems.append(f'{names.WINDOW}: not all of its {names.WINDOW_N} permits granted')
    if not value(conn, 'SELECT sem_bucket(%s, %s, %s::interval, %s, burst => %s)',
                 names.BUCKET, names.BUCKET_N, names.BUCKET_PER, names.BUCKET_BURST,
                 names.BUCKET_BURST):
        problems.append(f'{names.BUCKET}: its burst of {names.BUCKET_BURST} not granted')
    return not problems, '; '.join(problems) or 'every slot granted, and no more'
