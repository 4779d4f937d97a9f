"""The soak's operations: every way of claiming that pgsem offers, each a function of a client
(clients.py) that claims, holds for a moment and gives back.

Transaction and session claims leave no history, so each holder writes its hold into soak_log
(name, permits, started, ended on the server's clock): started after the grant returned, ended
before the release was sent, so the logged interval lies inside the real one. A row of a
transaction claim commits with the claim's transaction (a rolled-back hold leaves none); a
session claim's row is left without `ended` when anything interrupts it, and the check skips it.
Leases are judged from the server's own history (invariants.py).
"""

import names

CLAIM = 'SELECT sem_claim(%s, %s, %s::interval, %s::interval, %s)'
KEYED = ('SELECT c, clock_timestamp() FROM sem_claim(%s, %s, %s::interval, %s::interval, %s, %s) c')
LOG_START = ('INSERT INTO soak_log (name, permits, kind, started) '
             'VALUES (%s, %s, %s, clock_timestamp()) RETURNING id')
LOG_END = 'UPDATE soak_log SET ended = clock_timestamp() WHERE id = %s'


def pick(c):
    name = c.rng.choice(sorted(names.SEMAPHORES))
    return name, names.SEMAPHORES[name]


def permits_for(c, n):
    return c.rng.randint(2, n) if c.rng.random() < 0.2 else 1


def lease(c):
    name, n = pick(c)
    permits = permits_for(c, n)
    claim_id = c.value(CLAIM, name, n, names.LEASE, c.wait(), permits)
    c.record.op('lease' if permits == 1 else 'lease permits', claim_id is not None)
    if claim_id is None:
        return
    c.hold()
    if c.rng.random() < 0.3:
        c.record.op('renew', c.value('SELECT sem_renew(%s)', claim_id))
        c.hold()
    # Some leases are left to run out: their slots are reaped by later claims.
    if c.rng.random() < 0.9:
        c.record.op('release', c.value('SELECT sem_release(%s)', claim_id))


def keyed(c):
    """A retry-safe claim, asked again with its key as a client that lost the answer would:
    the retry must answer the first claim's id while that claim lives (judged afterwards from
    the history: invariants.py). A first attempt cut off by a cancel or a terminate is retried
    on the same (or a new) connection, which is what the key is for."""
    name, n = pick(c)
    permits = permits_for(c, n)
    key = c.next_key()
    first = None
    try:
        first = c.row(KEYED, name, n, names.LEASE, c.wait(), permits, key)[0]
    except c.errors as error:
        c.note_error(error)
        c.reconnect_if_lost()
    again, at = c.row(KEYED, name, n, names.LEASE, '0', permits, key)
    c.record.op('keyed', first is not None or again is not None)
    if first is not None:
        c.record.keyed_retry(first, again, at)
    if again is not None:
        c.hold()
        c.value('SELECT sem_release(%s)', again)


def transaction(c):
    name, n = pick(c)
    permits = permits_for(c, n)
    c.execute('BEGIN')
    slot = c.value('SELECT sem_claim_xact(%s, %s, %s::interval, %s)', name, n, c.wait(), permits)
    c.record.op('transaction' if permits == 1 else 'transaction permits', slot is not None)
    if slot is not None:
        log_id = c.value(LOG_START, name, permits, 'transaction')
        c.hold()
        c.execute(LOG_END, log_id)
    c.execute('COMMIT' if c.rng.random() < 0.7 else 'ROLLBACK')


def transaction_two(c):
    """Two transaction claims taken one after the other, in either order: transactions that take
    them in opposite orders deadlock, and one of them gets 40P01."""
    pair = c.rng.sample(sorted(names.SEMAPHORES), 2)
    c.execute('BEGIN')
    logged = []
    for name in pair:
        n = names.SEMAPHORES[name]
        slot = c.value('SELECT sem_claim_xact(%s, %s, %s::interval)', name, n, c.wait())
        if slot is None:
            break
        logged.append(c.value(LOG_START, name, 1, 'transaction'))
    c.record.op('transaction two', len(logged) == 2)
    c.hold()
    for log_id in logged:
        c.execute(LOG_END, log_id)
    c.execute('COMMIT')


def session(c):
    name, n = pick(c)
    permits = permits_for(c, n)
    slot = c.value('SELECT sem_claim_session(%s, %s, %s::interval, %s)', name, n, c.wait(),
                   permits)
    c.record.op('session' if permits == 1 else 'session permits', slot is not None)
    if slot is None:
        return
    c.sessions.append((name, slot))
    log_id = c.value(LOG_START, name, permits, 'session')
    c.hold()
    c.execute(LOG_END, log_id)
    c.release_session(name, slot)


def set_lease(c):
    pair = sorted(c.rng.sample(sorted(names.SEMAPHORES), 2))
    ids = c.value('SELECT sem_claim_all(%s, %s, %s::interval, %s::interval)', pair,
                  [names.SEMAPHORES[p] for p in pair], names.LEASE, c.wait())
    c.record.op('set lease', ids is not None)
    if ids is not None:
        c.hold()
        c.value('SELECT sem_release(%s)', ids[0])


def set_transaction(c):
    pair = c.rng.sample(sorted(names.SEMAPHORES), 2)
    c.execute('BEGIN')
    slots = c.value('SELECT sem_claim_xact_all(%s, %s, %s::interval)', pair,
                    [names.SEMAPHORES[p] for p in pair], c.wait())
    c.record.op('set transaction', slots is not None)
    if slots is not None:
        logged = [c.value(LOG_START, name, 1, 'transaction') for name in pair]
        c.hold()
        for log_id in logged:
            c.execute(LOG_END, log_id)
    c.execute('COMMIT' if c.rng.random() < 0.7 else 'ROLLBACK')


def set_session(c):
    pair = c.rng.sample(sorted(names.SEMAPHORES), 2)
    slots = c.value('SELECT sem_claim_session_all(%s, %s, %s::interval)', pair,
                    [names.SEMAPHORES[p] for p in pair], c.wait())
    c.record.op('set session', slots is not None)
    if slots is None:
        return
    c.sessions.extend(zip(pair, slots))
    logged = [c.value(LOG_START, name, 1, 'session') for name in pair]
    c.hold()
    for log_id in logged:
        c.execute(LOG_END, log_id)
    for name, slot in zip(pair, slots):
        c.release_session(name, slot)


def set_with_window(c):
    """A lease on a semaphore and a permit of the sliding window, all or nothing."""
    name, n = pick(c)
    ids = c.value('SELECT sem_claim_all(%s, %s, %s::interval, %s::interval, '
                  'pers => %s::interval[])', [name, names.WINDOW], [n, names.WINDOW_N],
                  names.LEASE, c.wait(), [None, names.WINDOW_PER])
    c.record.op('set with window', ids is not None)
    if ids is not None:
        c.hold()
        c.value('SELECT sem_release(%s)', ids[0])


def rate(c):
    granted = c.value('SELECT sem_rate(%s, %s, %s::interval, %s, %s::interval)', names.WINDOW,
                      names.WINDOW_N, names.WINDOW_PER, c.rng.randint(1, 2), c.wait())
    c.record.op('rate', granted)


def bucket(c):
    granted = c.value('SELECT sem_bucket(%s, %s, %s::interval, %s, %s::interval, %s)',
                      names.BUCKET, names.BUCKET_N, names.BUCKET_PER, c.rng.randint(1, 2),
                      c.wait(), names.BUCKET_BURST)
    c.record.op('bucket', granted)


# Operation -> weight: leases and the three kinds of claim most, the rest often enough to be
# cut off by the chaos thread hundreds of times in a run of minutes.
OPERATIONS = {
    lease: 20, keyed: 8, transaction: 16, transaction_two: 4, session: 14,
    set_lease: 6, set_transaction: 5, set_session: 4, set_with_window: 4, rate: 6, bucket: 5,
}
