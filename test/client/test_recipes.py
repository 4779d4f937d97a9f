#!/usr/bin/env python3
"""The README's recipes, run as they are written (read from README.md) against a running server:
the throttle (fail fast, never more than 4 in flight), reserve() (one reservation out of many
concurrent ones), "process each record once" as a psql script, "at most 2 per tenant and 20 in
total" (a set claim), and the fencing-token UPDATE.

Connects with the PG* environment variables to a database with the extension. Prints one line per
case and ends with
    client-recipes: P passed, F failed
"""

import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme  # noqa: E402
from tally import Tally  # noqa: E402

# The README blocks this file runs, pinned (test/lib/readme_blocks.py): change a pin only after
# checking that the cases below still test what each block says.
# throttle: readme-pin 23992e82edc024a1      reserve(): readme-pin 109f9e1d9374baed
# process once: readme-pin 6ee7618a61188304  fencing token: readme-pin 4e7da50740c8258f
# tenant limits: readme-pin dd1a2a08c8cc356f

tally = Tally('client-recipes')
check = tally.check


def connect():
    conn = psycopg2.connect('')
    conn.autocommit = True
    return conn


def value(conn, sql, params=()):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        row = cur.fetchone() if cur.description else None
        return row[0] if row else None


def throttle():
    """8 callers at once through the throttle block; the service takes 0.3 s."""
    block = readme.block(__file__, 'python', "SELECT sem_claim('payments-api', 4")

    class HttpResponse:
        def __init__(self, body, status=200):
            self.body, self.status = body, status

    lock = threading.Lock()
    state = {'in_flight': 0, 'most': 0}

    def call_payments_api(timeout):
        with lock:
            state['in_flight'] += 1
            state['most'] = max(state['most'], state['in_flight'])
        time.sleep(0.3)
        with lock:
            state['in_flight'] -= 1

    namespace = {'HttpResponse': HttpResponse, 'call_payments_api': call_payments_api}
    body = ''.join('    ' + line + '\n' for line in block.splitlines())
    exec(compile('def handler(cur):\n' + body + '    return HttpResponse("ok")\n',
                 'README.md (throttle)', 'exec'), namespace)
    statuses = []

    def caller():
        conn = connect()
        try:
            with conn.cursor() as cur:
                response = namespace['handler'](cur)
            with lock:
                statuses.append(response.status)
        finally:
            conn.close()

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(state['most'] <= 4, f'throttle: never more than 4 calls in flight (saw {state["most"]})')
    check(statuses.count(200) >= 1 and statuses.count(503) >= 1 and len(statuses) == 8,
          f'throttle: 8 callers at once, some served and the rest told 503 at once ({statuses})')
    observer = connect()
    check(value(observer, "SELECT count(*) FROM sem_holders WHERE name = 'payments-api'") == 0,
          'throttle: every served call released its claim')
    observer.close()


def reserve():
    """The reserve() function, then 10 concurrent reservations of one server: exactly one."""
    conn = connect()
    with conn.cursor() as cur:
        cur.execute('DROP TABLE IF EXISTS reserved_servers CASCADE')
        cur.execute('CREATE TABLE reserved_servers (datacenter_id int, server_id int, who int, '
                    'start_date timestamptz, end_date timestamptz)')
        cur.execute('DROP FUNCTION IF EXISTS reserve(int, int, int, timestamptz, timestamptz)')
        cur.execute(readme.block(__file__, 'sql', 'CREATE FUNCTION reserve('))
    results = []
    barrier = threading.Barrier(10)

    def reserver(who):
        c = connect()
        try:
            barrier.wait()
            results.append(value(c, "SELECT reserve(223, 345, %s, '2021-01-01 14:45', "
                                    "'2021-01-04 14:45')", (who,)))
        finally:
            c.close()

    threads = [threading.Thread(target=reserver, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = value(conn, 'SELECT count(*) FROM reserved_servers')
    check(rows == 1 and results.count(True) == 1,
          f'reserve(): 10 concurrent reservations of 223/345, one row ({rows}), one true')
    check(value(conn, "SELECT reserve(223, 346, 1, '2021-01-01', '2021-01-02')") is True,
          'reserve(): another server is free')
    conn.close()


def psql_script(sql, variables):
    with tempfile.NamedTemporaryFile('w', suffix='.sql', delete=False) as f:
        f.write(sql)
        path = f.name
    try:
        args = ['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-f', path]
        for name, v in variables.items():
            args += ['-v', f'{name}={v}']
        return subprocess.run(args, capture_output=True, text=True)
    finally:
        os.unlink(path)


def process_once():
    block = readme.block(__file__, 'sql', "sem_claim('order-email:'")
    conn = connect()
    with conn.cursor() as cur:
        cur.execute('DROP TABLE IF EXISTS orders')
        cur.execute('CREATE TABLE orders (id int PRIMARY KEY, shipped_email_sent boolean NOT NULL '
                    'DEFAULT false)')
        cur.execute('INSERT INTO orders VALUES (1234), (1235)')
    other = value(conn, "SELECT sem_claim('order-email:1235', 1, '1 minute')")
    done = psql_script(block, {'order': 1234})
    check(done.returncode == 0 and
          value(conn, 'SELECT shipped_email_sent FROM orders WHERE id = 1234') is True,
          f'process once: the psql script marks order 1234 ({done.stderr.strip()})')
    check(value(conn, "SELECT count(*) FROM sem_holders WHERE name = 'order-email:1234'") == 0,
          'process once: and releases its claim')
    busy = psql_script(block, {'order': 1235})
    check(busy.returncode == 0 and 'another worker has order 1235' in busy.stdout and
          value(conn, 'SELECT shipped_email_sent FROM orders WHERE id = 1235') is False,
          f'process once: while another worker holds order 1235 it does nothing ({busy.stdout.strip()})')
    value(conn, 'SELECT sem_release(%s)', (other,))
    conn.close()


def tenant_limits():
    """The set recipe: at most 2 per tenant and 20 in total, taken together or not at all."""
    block = readme.block(__file__, 'sql', "sem_claim_all(ARRAY['provider:acme-mail'")
    statement = '\n'.join(line for line in block.splitlines() if not line.startswith('--'))
    conn = connect()
    with conn.cursor() as cur:
        cur.execute('PREPARE tenant_claim(text) AS ' + statement.rstrip().rstrip(';'))

    def claim(tenant):
        return value(conn, 'EXECUTE tenant_claim(%s)', (tenant,))

    def held(name):
        return value(conn, 'SELECT count(*) FROM sem_holders WHERE name = %s', (name,))

    first = [claim('t0'), claim('t0')]
    started = time.monotonic()
    third = claim('t0')
    waited = time.monotonic() - started
    check(all(first) and third is None and waited >= 1.9,
          f'tenant limits: a tenant gets 2, its third waits 2 s and gets NULL ({waited:.1f} s)')
    check(held('provider:acme-mail') == 2,
          'tenant limits: the refused call holds no provider slot either')
    others = [claim(f't{i}') for i in range(1, 10) for _ in range(2)]
    check(all(others) and held('provider:acme-mail') == 20,
          'tenant limits: ten tenants of 2 fill the provider\'s 20')
    started = time.monotonic()
    check(claim('t10') is None and held('tenant:t10') == 0,
          'tenant limits: an eleventh tenant gets NULL once the provider is full, and holds no '
          'tenant slot')
    check(all(value(conn, 'SELECT sem_release(%s)', (c,)) for c in first + others) and
          held('provider:acme-mail') == 0 and held('tenant:t0') == 0,
          'tenant limits: each release gives both slots back')
    conn.close()


def fencing_token():
    block = readme.block(__file__, 'sql', 'UPDATE resource SET data')
    statement = '\n'.join(line for line in block.splitlines() if not line.startswith('--'))
    conn = connect()
    with conn.cursor() as cur:
        cur.execute('DROP TABLE IF EXISTS resource')
        cur.execute('CREATE TABLE resource (id int PRIMARY KEY, data text, last_token bigint '
                    'NOT NULL DEFAULT 0)')
        cur.execute("INSERT INTO resource VALUES (1, 'initial')")
        cur.execute('PREPARE fenced(bigint, text, int) AS ' + statement.rstrip().rstrip(';'))
    old = value(conn, "SELECT sem_claim('fenced-resource', 1, '100 milliseconds')")
    time.sleep(0.2)  # the old holder stalls; its lease runs out
    new = value(conn, "SELECT sem_claim('fenced-resource', 1, '1 minute')")

    def write(token, data):
        with conn.cursor() as cur:
            cur.execute('EXECUTE fenced(%s, %s, 1)', (token, data))
            return cur.rowcount

    check(new > old and write(new, 'from the new holder') == 1,
          'fencing token: the new holder (a larger id) writes')
    check(write(old, 'from the stalled holder') == 0 and
          value(conn, 'SELECT data FROM resource WHERE id = 1') == 'from the new holder',
          'fencing token: the stalled holder\'s late write (a smaller id) is refused')
    value(conn, 'SELECT sem_release(%s)', (new,))
    conn.close()


def main():
    for case in (throttle, reserve, process_once, tenant_limits, fencing_token):
        try:
            case()
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            check(False, f'{case.__name__} ran to the end')


if __name__ == '__main__':
    main()
    sys.exit(tally.finish())
