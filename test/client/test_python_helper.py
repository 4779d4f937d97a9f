#!/usr/bin/env python3
"""clients/python/pgsem.py against a running server, with psycopg2 and (when installed) psycopg 3:
threads that wait their turn, an exception inside the block, a lease that runs out, background
renewal, transaction and session semaphores, and the errors for a connection in the wrong mode.

Connects with the PG* environment variables (test/suites/client.sh sets PGDATABASE to a database
with the extension). Prints one line per case and ends with
    client-python-helper: P passed, F failed
"""

import os
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'clients', 'python'))
import pgsem  # noqa: E402
from lossy_proxy import LossyProxy  # noqa: E402
from tally import Tally  # noqa: E402

DRIVERS = {}
try:
    import psycopg2
    DRIVERS['psycopg2'] = lambda autocommit, dsn='': _psycopg2(autocommit, dsn)
except ImportError:
    pass
try:
    import psycopg
    DRIVERS['psycopg3'] = lambda autocommit, dsn='': psycopg.connect(dsn, autocommit=autocommit)
except ImportError:
    pass


def _psycopg2(autocommit, dsn):
    conn = psycopg2.connect(dsn)
    conn.autocommit = autocommit
    return conn


tally = Tally('client-python-helper')
check = tally.check


def value(conn, sql, params=()):
    cur = conn.cursor()
    cur.execute(sql, params)
    row = cur.fetchone()
    cur.close()
    return row[0] if row else None


def holders(observer, name):
    return value(observer, 'SELECT count(*) FROM sem_holders WHERE name = %s', (name,))


def run_cases(driver, connect):
    tag = f'[{driver}]'
    observer = connect(True)
    name = f'helper-{driver}'

    # The lease is held in the block and released at its end.
    conn = connect(True)
    with pgsem.semaphore(conn, name + '-basic', 2, lease='1 minute') as claim:
        check(holders(observer, name + '-basic') == 1 and claim.held(),
              f'{tag} semaphore(): the lease holds a slot inside the block')
        check(isinstance(claim.id, int) and claim.id > 0, f'{tag} the claim has an id')
    check(holders(observer, name + '-basic') == 0, f'{tag} and the block\'s end releases it')

    # Threads, each with its connection, wait their turn: never more than n inside at once,
    # and everybody gets in.
    inside = 0
    most = 0
    seen_by_server = 0
    lock = threading.Lock()
    errors = []

    def worker():
        nonlocal inside, most, seen_by_server
        c = connect(True)
        try:
            with pgsem.semaphore(c, name + '-threads', 3, lease='1 minute', wait='30 seconds'):
                with lock:
                    inside += 1
                    most = max(most, inside)
                seen_by_server = max(seen_by_server, holders(observer_for_threads, name + '-threads'))
                time.sleep(0.05)
                with lock:
                    inside -= 1
        except Exception as error:  # noqa: BLE001
            errors.append(error)
        finally:
            c.close()

    observer_for_threads = connect(True)
    threads = [threading.Thread(target=worker) for _ in range(12)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    check(not errors, f'{tag} 12 threads, n = 3, wait 30 s: every thread got in ({errors[:1]})')
    check(most == 3 and seen_by_server <= 3,
          f'{tag} never more than 3 inside at once (client saw {most}, server {seen_by_server})')
    check(elapsed >= 0.05 * 12 / 3 * 0.9,
          f'{tag} they took turns: {elapsed:.2f} s for 4 rounds of 50 ms')
    observer_for_threads.close()

    # No slot within the wait: NoSlot, after the wait.
    blocker = connect(True)
    blocking = value(blocker, "SELECT sem_claim(%s, 1, '1 minute')", (name + '-full',))
    started = time.monotonic()
    try:
        with pgsem.semaphore(conn, name + '-full', 1, wait='300 ms'):
            check(False, f'{tag} a full semaphore raises NoSlot')
    except pgsem.NoSlot as error:
        waited = time.monotonic() - started
        check(error.name == name + '-full' and waited >= 0.25,
              f'{tag} a full semaphore raises NoSlot after the wait ({waited:.2f} s): {error}')
    value(blocker, 'SELECT sem_release(%s)', (blocking,))

    # An exception inside the block propagates, and the slot is released.
    try:
        with pgsem.semaphore(conn, name + '-raise', 1):
            raise ValueError('inside the block')
    except ValueError as error:
        check(str(error) == 'inside the block', f'{tag} the block\'s exception propagates')
    check(holders(observer, name + '-raise') == 0, f'{tag} and the slot is released anyway')

    # A lease that runs out inside the block: another client takes the slot, and the block's
    # end says so.
    try:
        with pgsem.semaphore(conn, name + '-lost', 1, lease='200 ms') as claim:
            time.sleep(0.4)
            other = value(blocker, "SELECT sem_claim(%s, 1, '1 minute')", (name + '-lost',))
            check(other is not None, f'{tag} once the lease ran out, another client took the slot')
        check(False, f'{tag} a lost lease raises LeaseLost')
    except pgsem.LeaseLost as error:
        check(error.claim.lost and error.claim.id == claim.id,
              f'{tag} a lost lease raises LeaseLost at the block\'s end: {error}')
    value(blocker, 'SELECT sem_release(%s)', (other,))

    # Background renewal keeps a short lease alive through a long block.
    with pgsem.semaphore(conn, name + '-renewed', 1, lease='300 ms', renew_every=0.1) as claim:
        stolen = False
        for _ in range(8):
            time.sleep(0.1)
            stolen = stolen or value(blocker, "SELECT sem_claim(%s, 1, '1 minute')",
                                     (name + '-renewed',)) is not None
        check(not stolen and not claim.lost,
              f'{tag} renew_every=0.1 keeps a 300 ms lease for 0.8 s: nobody else got the slot')
    check(holders(observer, name + '-renewed') == 0, f'{tag} and the renewed lease is released')

    # A lease needs autocommit.
    plain = connect(False)
    try:
        with pgsem.semaphore(plain, name + '-mode', 1):
            pass
        check(False, f'{tag} semaphore() refuses a connection outside autocommit')
    except pgsem.PgsemError as error:
        check('autocommit' in str(error),
              f'{tag} semaphore() refuses a connection outside autocommit: {error}')
    plain.rollback()

    # transaction_semaphore: the transaction's end frees the slot.
    slot = pgsem.transaction_semaphore(plain, name + '-xact', 2)
    check(slot == 0 and holders(observer, name + '-xact') == 1,
          f'{tag} transaction_semaphore() holds slot 0 in the open transaction')
    plain.commit()
    check(holders(observer, name + '-xact') == 0, f'{tag} and COMMIT frees it')
    xact_blocker = connect(False)
    pgsem.transaction_semaphore(xact_blocker, name + '-xact', 1)
    try:
        pgsem.transaction_semaphore(plain, name + '-xact', 1, wait='100 ms')
        check(False, f'{tag} transaction_semaphore() raises NoSlot when full')
    except pgsem.NoSlot:
        check(True, f'{tag} transaction_semaphore() raises NoSlot when full')
    plain.rollback()
    xact_blocker.rollback()
    xact_blocker.close()
    try:
        pgsem.transaction_semaphore(conn, name + '-xact', 1)
        check(False, f'{tag} transaction_semaphore() refuses autocommit')
    except pgsem.PgsemError as error:
        check('autocommit' in str(error), f'{tag} transaction_semaphore() refuses autocommit')

    # session_semaphore: across transactions, and released even after a failed statement
    # aborted the connection's transaction.
    with pgsem.session_semaphore(plain, name + '-session', 1) as slot:
        plain.commit()
        check(slot == 0 and holders(observer, name + '-session') == 1,
              f'{tag} session_semaphore() holds its slot across a COMMIT')
        try:
            value(plain, 'SELECT 1 / 0')
        except Exception:  # noqa: BLE001 -- the transaction is aborted now
            pass
    check(holders(observer, name + '-session') == 0,
          f'{tag} session_semaphore() releases its slot after a failed statement')
    plain.rollback()

    # A claim whose answer is lost with its connection (a proxy drops it once the claim has
    # committed): with reconnect, the helper asks again with the same request key and gets the
    # claim the lost attempt made; one slot is held, and the block's end releases it.
    proxy = LossyProxy('sem_claim')
    lossy = connect(True, proxy.dsn())
    fresh = []

    def reconnect():
        fresh.append(connect(True))
        return fresh[-1]

    with pgsem.semaphore(lossy, name + '-retry', 2, lease='1 minute', reconnect=reconnect) \
            as claim:
        check(proxy.lost == 1 and len(fresh) == 1 and claim.conn is fresh[0],
              f'{tag} a lost answer: the helper asked again on a new connection')
        check(holders(observer, name + '-retry') == 1 and claim.held(),
              f'{tag} and got the lost attempt\'s claim: one slot held, not two')
        check(value(observer, 'SELECT count(DISTINCT id) FROM sem_history WHERE name = %s',
                    (name + '-retry',)) == 1,
              f'{tag} one claim was ever made')
    check(holders(observer, name + '-retry') == 0, f'{tag} the block\'s end released it')
    # Without reconnect the lost answer is the caller's error, as before.
    proxy2 = LossyProxy('sem_claim')
    try:
        with pgsem.semaphore(connect(True, proxy2.dsn()), name + '-noretry', 2, lease='1 minute'):
            check(False, f'{tag} without reconnect a lost answer raises')
    except pgsem.PgsemError:
        check(False, f'{tag} without reconnect the driver\'s error comes through')
    except Exception as error:  # noqa: BLE001
        check(type(error).__name__ in ('OperationalError', 'InterfaceError'),
              f'{tag} without reconnect the driver\'s error comes through ({type(error).__name__})')
    value(observer, 'SELECT sem_release(id) FROM sem_holders WHERE name = %s', (name + '-noretry',))
    for c in fresh:
        c.close()

    for c in (conn, blocker, plain, observer):
        c.close()


def main():
    if 'psycopg2' not in DRIVERS:
        check(False, 'psycopg2 is installed (python3-psycopg2)')
        return tally.finish()
    for driver, connect in DRIVERS.items():
        try:
            run_cases(driver, connect)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            check(False, f'[{driver}] the cases ran to the end')
    print(f'drivers: {", ".join(DRIVERS)}')
    return tally.finish()


if __name__ == '__main__':
    sys.exit(main())
