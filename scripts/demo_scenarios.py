#!/usr/bin/python3
"""The seed articles' scenarios against a live server (connection from the PG* environment).

1. Double booking (advisory-lock seed): 10 concurrent requests reserve server 345 in datacenter
   223. Each checks for an overlapping reservation and inserts if it finds none. Without a lock
   several rows land; with advisory_lock_text('223 345') exactly one does.
2. Throttle (semaphore seed): 10 concurrent callers of a fragile service with at most 4 calls in
   flight: 4 get a claim id, 6 get NULL at once and could answer "overloaded".
"""
import sys
import threading

import psycopg2

REQUESTS = 10


def connect():
    conn = psycopg2.connect("")  # PGHOST, PGPORT, PGUSER, PGDATABASE from the environment
    conn.autocommit = False
    return conn


def reserve(barrier, use_lock, user_id):
    """The seed article's request handler: check for overlap, then insert."""
    conn = connect()
    with conn, conn.cursor() as cur:
        barrier.wait()
        if use_lock:
            cur.execute("SELECT advisory_lock_text(%s)", ("223 345",))
        cur.execute(
            "SELECT true FROM reserved_servers WHERE server_id = 345 AND datacenter_id = 223"
            " AND start_date <= '2021-01-04 14:45' AND end_date >= '2021-01-01 14:45' LIMIT 1")
        if cur.fetchone() is None:
            # The application's own work between its check and its insert (rendering,
            # validation, a payment call...): the window in which the race happens.
            cur.execute("SELECT pg_sleep(0.05)")
            cur.execute(
                "INSERT INTO reserved_servers VALUES (223, 345, %s, '2021-01-01 14:45',"
                " '2021-01-04 14:45')", (user_id,))
    conn.close()


def run_at_once(target, *args):
    """Runs target(barrier, *args, i) for i in 0..REQUESTS-1 in threads released together."""
    barrier = threading.Barrier(REQUESTS)
    threads = [threading.Thread(target=target, args=(barrier, *args, i))
               for i in range(REQUESTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_reservations(use_lock):
    admin = connect()
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("TRUNCATE reserved_servers")
    run_at_once(reserve, use_lock)
    with admin.cursor() as cur:
        cur.execute("SELECT count(*) FROM reserved_servers")
        (rows,) = cur.fetchone()
    admin.close()
    return rows


def call_service(barrier, results, i):
    conn = connect()
    conn.autocommit = True
    with conn.cursor() as cur:
        barrier.wait()
        cur.execute("SELECT sem_claim('fragile-service', 4)")
        results[i] = cur.fetchone()[0]
    conn.close()


def run_throttle():
    results = [None] * REQUESTS
    run_at_once(call_service, results)
    granted = [r for r in results if r is not None]
    conn = connect()
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT name, slot, id, pid FROM sem_holders ORDER BY slot")
        holders = cur.fetchall()
        released = 0
        for claim in granted:
            cur.execute("SELECT sem_release(%s)", (claim,))
            released += cur.fetchone()[0]
    conn.close()
    return granted, REQUESTS - len(granted), holders, released


def main():
    admin = connect()
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS reserved_servers (datacenter_id integer,"
                    " server_id integer, user_id integer, start_date timestamp,"
                    " end_date timestamp)")
    admin.close()

    without = run_reservations(use_lock=False)
    with_lock = run_reservations(use_lock=True)
    print(f"double booking, {REQUESTS} concurrent reservations of server 223/345:")
    print(f"  without a lock:                      {without} rows")
    print(f"  with advisory_lock_text('223 345'):  {with_lock} row(s)")

    granted, refused, holders, released = run_throttle()
    print(f"throttle, {REQUESTS} concurrent callers of sem_claim('fragile-service', 4):")
    print(f"  granted {len(granted)} claims, {refused} got NULL (fail fast: 'overloaded')")
    for name, slot, claim, pid in holders:
        print(f"    {name} slot {slot}: claim {claim}, backend {pid}")
    print(f"  released {released} of {len(granted)}")
    ok = with_lock == 1 and without > 1 and len(granted) == 4 and released == 4
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
