#!/usr/bin/env python3
"""pgsem soak: many clients claim, wait, renew and release for minutes while a chaos thread
cancels and terminates their backends; afterwards nothing may be left behind and the backends
that lived through it all may not have grown.

    soak.py --dbname DB [--seconds 180] [--clients 150] [--steady 10] [--seed N]
            [--server-log PATH --log-offset BYTES]

Connects with the PG* environment variables as a superuser, who creates the role the clients
run as (soak_worker) and the table the holders log into. The database needs CREATE EXTENSION
pgsem, preferably with pgsem in shared_preload_libraries (sem_stats' counters). The soak must
run on the server's machine: steady clients read their backends' /proc/<pid>/smaps_rollup.

Prints one line per check, numbers for each, and last "soak: P passed, F failed"; exits 0 only
when nothing failed.
"""

import argparse
import os
import sys
import threading
import time

import psycopg2
import psycopg2.extensions

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'client'))
import chaos  # noqa: E402
import clients  # noqa: E402
import invariants  # noqa: E402
import leftovers  # noqa: E402
import memory_verdict  # noqa: E402
import record  # noqa: E402
import server_log  # noqa: E402
import workload  # noqa: E402
from tally import Tally  # noqa: E402

WORKER = 'soak_worker'

SETUP = f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{WORKER}') THEN
        CREATE ROLE {WORKER} LOGIN;
    END IF;
END $$;
DROP TABLE IF EXISTS soak_log;
CREATE UNLOGGED TABLE soak_log (id bigserial PRIMARY KEY, name text NOT NULL,
    permits integer NOT NULL, kind text NOT NULL, started timestamptz NOT NULL,
    ended timestamptz);
GRANT SELECT, INSERT, UPDATE ON soak_log TO {WORKER};
GRANT USAGE ON SEQUENCE soak_log_id_seq TO {WORKER};
-- Steady clients read their own memory contexts (superusers only, by default, in 15).
GRANT SELECT ON pg_backend_memory_contexts TO {WORKER};
GRANT EXECUTE ON FUNCTION pg_get_backend_memory_contexts() TO {WORKER};
"""


class Soak:
    """What every thread shares: settings, the record, the stop and release signals."""

    def __init__(self, args):
        self.dbname = args.dbname
        self.seconds = args.seconds
        self.seed = args.seed
        self.superuser = os.environ.get('PGUSER', 'postgres')
        self.worker = WORKER
        self.record = record.Record()
        self.stop = threading.Event()       # clients: stop claiming, clean up
        self.release = threading.Event()    # clients: disconnect
        # Warm-up: long enough for every statement and cache of the steady clients, a fair
        # share of a short run. Samples every 30 s (or 6 per run).
        self.warmup = min(30.0, args.seconds / 4)
        self.sample_every = min(30.0, args.seconds / 6)
        self.started = None

    def dsn(self, user, application_name):
        return psycopg2.extensions.make_dsn(dbname=self.dbname, user=user,
                                            application_name=application_name)


def connect(soak, application_name, autocommit=True, user=None):
    conn = psycopg2.connect(soak.dsn(user or soak.superuser, application_name))
    conn.autocommit = autocommit
    return conn


def wait_for(conn, sql, params=(), seconds=30):
    """Polls a count until it is 0, for at most `seconds` (a deadline, not a verdict: the check
    that follows judges what is there). Returns the last count."""
    deadline = time.monotonic() + seconds
    while True:
        count = leftovers.value(conn, sql, *params)
        if count == 0 or time.monotonic() > deadline:
            return count
        time.sleep(0.2)


def progress(soak, conn, all_clients):
    r = soak.record
    waiting = leftovers.value(conn, 'SELECT count(*) FROM sem_waiters')
    holding = leftovers.value(conn, 'SELECT count(*) FROM sem_holders')
    print(f'   {time.monotonic() - soak.started:5.0f} s: {sum(r.ops.values())} calls, '
          f'{sum(r.strikes.values())} strikes, {r.reconnects} reconnects, {holding} slots held, '
          f'{waiting} waiting, {sum(1 for c in all_clients if c.idle.is_set())} clients stopped',
          flush=True)


def run_workload(soak, conn, all_clients):
    soak.started = time.monotonic()
    for client in all_clients:
        client.start()
    striker = chaos.Chaos(soak, all_clients)
    striker.start()
    end = soak.started + soak.seconds
    while time.monotonic() < end:
        time.sleep(min(15.0, max(0.0, end - time.monotonic())))
        progress(soak, conn, all_clients)
    striker.stop.set()
    striker.join()
    soak.stop.set()
    for client in all_clients:
        client.idle.wait(120)
    return striker


def check_leftovers(tally, soak, conn, phase):
    within = wait_for(conn, 'SELECT count(*) FROM pgsem.claims WHERE ended_at IS NULL '
                            'AND expires_at > clock_timestamp()')
    print(f'   {phase}: unended claims within their lease after waiting: {within}')
    for name, check in (('no live claim', leftovers.claims), ('no waiter', leftovers.waiters),
                        ('no lock of pgsem', leftovers.locks)):
        ok, seen = check(conn)
        tally.check(ok, f'{phase}: {name} ({seen})')
    probe = connect(soak, 'soak probe', autocommit=False, user=soak.worker)
    holder = connect(soak, 'soak probe holder', autocommit=False)
    try:
        ok, seen = leftovers.registry(conn, probe, holder, soak.worker)
    finally:
        probe.close()
        holder.close()
    tally.check(ok, f'{phase}: the shared registry lists no claim or wait ({seen})')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dbname', required=True)
    parser.add_argument('--seconds', type=float, default=180)
    parser.add_argument('--clients', type=int, default=150)
    parser.add_argument('--steady', type=int, default=10)
    parser.add_argument('--seed', type=int, default=int(time.time()))
    parser.add_argument('--server-log')
    parser.add_argument('--log-offset', type=int, default=0)
    args = parser.parse_args()
    tally = Tally('soak')
    soak = Soak(args)
    print(f'soak: {args.clients} clients ({args.steady} steady) for {args.seconds:.0f} s, '
          f'seed {args.seed}', flush=True)
    try:
        conn = connect(soak, 'soak checker')
        leftovers.rows(conn, SETUP)
        all_clients = [clients.Client(soak, i, i < args.steady) for i in range(args.clients)]
        striker = run_workload(soak, conn, all_clients)

        r = soak.record
        failures = [c.failure for c in all_clients if c.failure] + [striker.failure] * bool(
            striker.failure)
        print(f'   calls: {dict(sorted(r.ops.items()))}')
        print(f'   granted: {dict(sorted(r.granted.items()))}')
        print(f'   errors by SQLSTATE: {dict(sorted(r.errors.items()))}')
        print(f'   strikes: {dict(r.strikes)}, reconnects: {r.reconnects}')
        # sem_stats counts only with pgsem preloaded: the soak must have gone through its paths.
        counted = leftovers.value(conn, 'SELECT coalesce(sum(granted + granted_after_wait), 0) '
                                        'FROM sem_stats')
        print(f'   grants counted by sem_stats: {counted}')
        every_kind = all(r.granted[op.__name__.replace('_', ' ')] > 0
                         for op in workload.OPERATIONS if op is not workload.keyed) and \
            r.granted['keyed'] > 0
        tally.check(not failures and every_kind and len(r.strikes) == 3 and r.reconnects > 0
                    and counted > 0,
                    'the workload ran: every kind of call granted, every kind of strike landed, '
                    f'terminated clients reconnected, sem_stats counted {failures[:3]}')
        tally.check(r.unexpected == 0,
                    f'no error or notice but those provoked ({r.unexpected}: {r.examples[:10]})')

        # Every client connected and idle, every lease run out.
        stale = wait_for(conn, "SELECT count(*) FROM pg_stat_activity WHERE application_name "
                               "LIKE 'soak %%' AND pid <> pg_backend_pid() AND NOT pid = ANY(%s)",
                         ([c.pid for c in all_clients if not c.lost()],))
        print(f'   terminated backends still exiting: {stale}')
        check_leftovers(tally, soak, conn, 'clients connected')

        soak.release.set()
        for client in all_clients:
            client.join(60)
        gone = wait_for(conn, "SELECT count(*) FROM pg_stat_activity "
                              "WHERE application_name LIKE 'soak %%' AND pid <> pg_backend_pid()")
        print(f'   client backends left: {gone}')
        check_leftovers(tally, soak, conn, 'clients gone')
        ok, seen = leftovers.all_free(conn)
        tally.check(ok, f'clients gone: every semaphore whole again ({seen})')

        for name, check in (('never more than n holders of a semaphore',
                             invariants.never_more_than_n),
                            ('never more than n permits in a window',
                             invariants.window_within_n)):
            ok, seen = check(conn)
            tally.check(ok, f'{name} ({seen})')
        ok, seen = invariants.keyed_retries(conn, r.keyed_retries)
        tally.check(ok, f'a keyed retry answers the live first claim ({seen})')

        for ok, what in memory_verdict.judge([c for c in all_clients if c.steady]):
            tally.check(ok, what)
        if args.server_log:
            ok, seen = server_log.check(args.server_log, args.log_offset)
            tally.check(ok, f'the server log: no crash, no leak, no WARNING ({seen})')
        conn.close()
    except Exception as error:  # the soak itself failed: one failure, and the count line
        tally.check(False, f'the soak ran to its end ({type(error).__name__}: {error})')
    return tally.finish()


if __name__ == '__main__':
    sys.exit(main())
