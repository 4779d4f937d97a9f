"""pgsem from Python: counting semaphores held in PostgreSQL, with the server doing the waiting.

One file, no dependencies: copy it into your project. It works with a psycopg2 or psycopg 3
connection (and with Django's ``django.db.connection``), which must reach a database where
``CREATE EXTENSION pgsem`` ran.

    from pgsem import semaphore, NoSlot

    with semaphore(conn, 'payments-api', 4, lease='30 seconds', wait='5 seconds') as claim:
        call_payments_api()          # at most 4 of these run at once, across all hosts

A lease (``semaphore``) is taken and released in statements of their own, so the connection must
be in autocommit mode: a claim that only committed with your transaction would vanish with its
rollback. Inside a transaction, ``transaction_semaphore`` takes a slot that the end of the
transaction frees. ``session_semaphore`` holds a slot for the life of the connection's session at
most. Waiting happens in the server, first come first served; ``NoSlot`` says that the wait ran
out. Intervals are PostgreSQL interval strings ('5 seconds', '250 ms') or ``datetime.timedelta``.

Needs pgsem 1.2 (``ALTER EXTENSION pgsem UPDATE``): ``semaphore`` claims with ``permits`` and a
request key, which makes its own retries safe: given ``reconnect``, a claim whose connection
dropped before the answer came is asked again on a new connection with the same key, and gets the
claim the first attempt made, if it made one, instead of a second slot.
"""

import contextlib
import threading
import uuid

__all__ = ['semaphore', 'transaction_semaphore', 'session_semaphore', 'Claim', 'NoSlot',
           'LeaseLost', 'PgsemError']

# The aborted-transaction status, the same number in psycopg2
# (extensions.TRANSACTION_STATUS_INERROR) and psycopg 3 (pq.TransactionStatus.INERROR).
_INERROR = 3


class PgsemError(Exception):
    """Base class of this module's errors."""


class NoSlot(PgsemError):
    """No slot of the semaphore came free within the wait."""

    def __init__(self, name, n, wait):
        super().__init__(f'no slot of semaphore {name!r} (n = {n}) came free within {wait}')
        self.name, self.n, self.wait = name, n, wait


class LeaseLost(PgsemError):
    """The lease ran out before the block ended: for a while, someone else may have held the slot
    too. Raised when the block ends (unless it ends with an exception of its own)."""

    def __init__(self, claim):
        super().__init__(f'the lease of claim {claim.id} of semaphore {claim.name!r} ran out '
                         'before it was released')
        self.claim = claim


def _one(conn, sql, params):
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        row = cur.fetchone()
        return row[0] if row else None
    finally:
        cur.close()


def _connection_lost(conn, error):
    """Whether ``error`` means the connection is gone (so the claim's answer may have been lost),
    as opposed to an error the server reported on a live connection."""
    if type(error).__name__ not in ('OperationalError', 'InterfaceError'):
        return False
    closed = getattr(conn, 'closed', None)
    if closed is None:  # Django's wrapper
        closed = getattr(getattr(conn, 'connection', None), 'closed', True)
    return bool(closed)


def _autocommit(conn):
    if hasattr(conn, 'get_autocommit'):  # Django's connection
        return conn.get_autocommit() and not getattr(conn, 'in_atomic_block', False)
    return bool(getattr(conn, 'autocommit', False))


def _transaction_status(conn):
    info = getattr(conn, 'info', None)
    if info is not None and hasattr(info, 'transaction_status'):  # psycopg 3
        return int(info.transaction_status)
    if hasattr(conn, 'get_transaction_status'):  # psycopg2
        return conn.get_transaction_status()
    return None  # unknown (Django): assume nothing is in the way


class Claim:
    """A lease held by ``semaphore``: its id (a fencing token), and whether it was lost."""

    def __init__(self, conn, name, n, claim_id, lease):
        self.conn, self.name, self.n, self.id, self.lease = conn, name, n, claim_id, lease
        self.lost = False
        self._lock = threading.Lock()  # renewals from the background and the release

    def renew(self, lease=None):
        """Extends the lease to ``lease`` (its own length if None) from now; False, and ``lost``
        set, if it had already run out."""
        with self._lock:
            if self.lost:
                return False
            renewed = _one(self.conn, 'SELECT sem_renew(%s, %s::interval)',
                           (self.id, lease if lease is not None else self.lease))
            self.lost = not renewed
            return bool(renewed)

    def held(self):
        """Whether the lease holds its slot right now (asks the server)."""
        return bool(_one(self.conn, 'SELECT sem_held(%s)', (self.id,)))

    def _release(self):
        with self._lock:
            released = _one(self.conn, 'SELECT sem_release(%s)', (self.id,))
            if not released:
                self.lost = True
            return bool(released)


class _Renewer(threading.Thread):
    def __init__(self, claim, every):
        super().__init__(name=f'pgsem renewer of claim {claim.id}', daemon=True)
        self.claim, self.every = claim, every
        self.stopped = threading.Event()
        self.error = None

    def run(self):
        while not self.stopped.wait(self.every):
            try:
                if not self.claim.renew():
                    return
            except Exception as error:  # noqa: BLE001 -- reported when the block ends
                self.error = error
                return


def _claim(conn, name, n, lease, wait, permits, request_key, retries, reconnect):
    """sem_claim with the request key, asked again on a new connection when the connection drops
    before the answer comes (at most ``retries`` times, and only given ``reconnect``). Returns the
    connection that got the answer, and the answer."""
    while True:
        try:
            return conn, _one(conn, 'SELECT sem_claim(%s, %s, %s::interval, %s::interval, '
                                    'permits => %s, request_key => %s)',
                              (name, n, lease, wait, permits, request_key))
        except Exception as error:  # noqa: BLE001 -- re-raised unless the connection is gone
            if reconnect is None or retries <= 0 or not _connection_lost(conn, error):
                raise
            retries -= 1
            conn = reconnect()
            if not _autocommit(conn):
                raise PgsemError('reconnect() must return a connection in autocommit mode') \
                    from error


@contextlib.contextmanager
def semaphore(conn, name, n, lease='90 seconds', wait='0', renew_every=None, permits=1,
              request_key=None, reconnect=None, retries=2):
    """Holds ``permits`` of the ``n`` slots of semaphore ``name`` for the block (all or none), by
    a lease of ``lease``.

    Waits in line up to ``wait`` for a slot (first come, first served, in the server), and raises
    ``NoSlot`` if none came. Releases the slot when the block ends, also by an exception. With
    ``renew_every`` (seconds), a background thread renews the lease that often, on the same
    connection (psycopg2 and psycopg 3 connections may be shared between threads; a renewal waits
    while the block runs a statement). If the lease ran out anyway, ``claim.lost`` turns true and
    the block's end raises ``LeaseLost``. Yields a ``Claim``; its ``id`` is a fencing token.

    The claim carries a request key (``request_key``, or a random one). With ``reconnect`` (a
    function returning a new connection in autocommit mode), a claim whose connection drops before
    its answer arrives is asked again, up to ``retries`` times, on a new connection with the same
    key: if the lost attempt was granted, the retry gets that claim, not a second one. The claim
    then lives on the new connection (``claim.conn``).
    """
    if not _autocommit(conn):
        raise PgsemError('semaphore() needs a connection in autocommit mode: its lease must '
                         'commit on its own (inside a transaction, use transaction_semaphore())')
    key = request_key if request_key is not None else uuid.uuid4().hex
    conn, claim_id = _claim(conn, name, n, lease, wait, permits, key, retries, reconnect)
    if claim_id is None:
        raise NoSlot(name, n, wait)
    claim = Claim(conn, name, n, claim_id, lease)
    renewer = None
    if renew_every is not None:
        if hasattr(conn, 'inc_thread_sharing'):
            conn.inc_thread_sharing()  # Django's connections belong to their thread otherwise
        renewer = _Renewer(claim, float(renew_every))
        renewer.start()
    failed = False
    try:
        yield claim
    except BaseException:
        failed = True
        raise
    finally:
        if renewer is not None:
            renewer.stopped.set()
            renewer.join()
            if hasattr(conn, 'dec_thread_sharing'):
                conn.dec_thread_sharing()
        try:
            released = claim._release()
        except Exception:
            if not failed:
                raise
            released = True  # the block's own exception is the one to see; the lease runs out
        if not released and not failed:
            raise LeaseLost(claim)
        if renewer is not None and renewer.error is not None and not failed:
            raise PgsemError(f'renewing claim {claim.id} failed: {renewer.error}') \
                from renewer.error


def transaction_semaphore(conn, name, n, wait='0'):
    """Takes one of the ``n`` slots of ``name`` until the current transaction ends (commit or
    rollback frees it; nothing to release). Returns the slot number; raises ``NoSlot`` when none
    came within ``wait``. The connection must not be in autocommit mode: the slot would be freed
    as soon as this statement ended."""
    if _autocommit(conn):
        raise PgsemError('transaction_semaphore() in autocommit mode would end with its own '
                         'statement: open a transaction first')
    slot = _one(conn, 'SELECT sem_claim_xact(%s, %s, %s::interval)', (name, n, wait))
    if slot is None:
        raise NoSlot(name, n, wait)
    return slot


@contextlib.contextmanager
def session_semaphore(conn, name, n, wait='0'):
    """Holds one of the ``n`` slots of ``name`` for the block, as a session claim: no lease; the
    end of the block releases it, and so does the end of the connection's session, however it
    ends. The claim is taken with the connection's current transaction: outside autocommit, a
    rollback before the next commit gives it back. Not behind a transaction- or
    statement-pooling PgBouncer. Yields the slot number."""
    slot = _one(conn, 'SELECT sem_claim_session(%s, %s, %s::interval)', (name, n, wait))
    if slot is None:
        raise NoSlot(name, n, wait)
    try:
        yield slot
    finally:
        if _transaction_status(conn) == _INERROR:
            conn.rollback()  # an aborted transaction runs nothing; the session claim survives it
        _one(conn, 'SELECT sem_release_session(%s, %s)', (name, slot))
