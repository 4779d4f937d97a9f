#!/usr/bin/python3
"""The seed articles' scenarios against a live server (connection from the PG* environment).

1. Double booking (advisory-lock seed): 10 concurrent requests reserve server 345 in datacenter
   223. Each checks for an overlapping reservation and inserts if it finds none. Without a lock
   several rows land; with advisory_lock_text('223 345') exactly one does.
2. Throttle (semaphore seed): 10 concurrent callers of a fragile service with at most 4 calls in
   flight: 4 get a claim id, 6 get NULL at once and could answer "overloaded".
3. Bounded pool ("Yes, I coded a semaphore"): 6 workers arrive one after another at a pool of 2
   and wait in line; they are served first come, first served.
4. Each record once (double-checked locking seed): 3 workers race for each of 4 orders; the one
   that claims an order sends its e-mail in a transaction fenced by its claim id.
5. Fair across hosts (Redis in Action 6.3.2): hosts whose clocks disagree by seconds claim in
   turn; pgsem uses the server's clock, so claim ids come in the order the claims were granted.
"""
import sys
import threading
import time

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


def wait_in_pool(barrier, arrivals, served, i):
    """Arrives i * 50 ms after the others, waits in line for one of 2 slots, holds it 150 ms."""
    conn = connect()
    with conn.cursor() as cur:
        barrier.wait()
        time.sleep(0.05 * i)
        arrivals.append(i)
        cur.execute("SELECT sem_claim_xact('pool', 2, wait => '10 seconds')")
        served.append(i)
        cur.execute("SELECT pg_sleep(0.15)")
    conn.commit()  # gives the slot back
    conn.close()


def run_pool():
    arrivals, served = [], []
    barrier = threading.Barrier(6)
    threads = [threading.Thread(target=wait_in_pool, args=(barrier, arrivals, served, i))
               for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return arrivals, served


def process_orders(barrier, sent, worker):
    """Competes for every order; the winner marks it sent under a fence of its claim."""
    conn = connect()
    conn.autocommit = True
    with conn.cursor() as cur:
        barrier.wait()
        for order in range(1, 5):
            cur.execute("SELECT sem_claim(%s, 1, '1 minute')", ("order-%d" % order,))
            (claim,) = cur.fetchone()
            if claim is None:
                continue  # another worker is on it
            cur.execute("BEGIN")
            cur.execute("SELECT sem_fence(%s)", (claim,))  # an error if the lease ran out
            cur.execute("UPDATE orders SET email_sent_by = %s, fencing_id = %s"
                        " WHERE id = %s AND email_sent_by IS NULL", (worker, claim, order))
            if cur.rowcount == 1:
                sent.append((order, worker, claim))
            cur.execute("COMMIT")
            cur.execute("SELECT sem_release(%s)", (claim,))
    conn.close()


def run_orders():
    admin = connect()
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS orders")
        cur.execute("CREATE TABLE orders (id integer PRIMARY KEY, email_sent_by integer,"
                    " fencing_id bigint)")
        cur.execute("INSERT INTO orders SELECT generate_series(1, 4)")
    sent = []
    barrier = threading.Barrier(3)
    threads = [threading.Thread(target=process_orders, args=(barrier, sent, w)) for w in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with admin.cursor() as cur:
        cur.execute("SELECT id, email_sent_by, fencing_id FROM orders ORDER BY id")
        rows = cur.fetchall()
    admin.close()
    return sent, rows


def run_hosts():
    """Hosts with skewed clocks take turns; their own clocks would order them wrongly."""
    skews = [("host-a", 0.0), ("host-b", -3.0), ("host-c", +2.5), ("host-d", -1.0)]
    conn = connect()
    conn.autocommit = True
    rows = []
    with conn.cursor() as cur:
        for host, skew in skews:
            cur.execute("SELECT sem_claim('fair', 2, '10 seconds', wait => '10 seconds')")
            (claim,) = cur.fetchone()
            cur.execute("SELECT claimed_at FROM sem_holders WHERE id = %s", (claim,))
            (claimed_at,) = cur.fetchone()
            rows.append((host, time.time() + skew, claim, claimed_at))
            cur.execute("SELECT sem_release(%s)", (claim,))
            time.sleep(0.02)
    conn.close()
    return rows


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

    arrivals, served = run_pool()
    print("bounded pool of 2, 6 workers arriving 50 ms apart, each waiting in line:")
    print(f"  arrived in the order {' '.join(map(str, arrivals))}")
    print(f"  served in the order  {' '.join(map(str, served))}  (first come, first served)")

    sent, orders = run_orders()
    print("each order once, 3 workers racing for 4 orders:")
    for order, by, fencing_id in orders:
        print(f"  order {order}: e-mail sent once, by worker {by}, fenced by claim {fencing_id}")

    hosts = run_hosts()
    print("fair across hosts whose clocks disagree:")
    for host, host_clock, claim, claimed_at in hosts:
        print(f"  {host}: its clock {time.strftime('%H:%M:%S', time.gmtime(host_clock))},"
              f" claim {claim} granted at {claimed_at:%H:%M:%S.%f} (server clock)")
    print("  claim ids grow in the order the server granted them, whatever the hosts' clocks")

    ids = [claim for _, _, claim, _ in hosts]
    ok = (with_lock == 1 and without > 1 and len(granted) == 4 and released == 4
          and served == arrivals and len(sent) == 4 and all(by is not None for _, by, _ in orders)
          and ids == sorted(ids))
    print("where to look: SELECT * FROM sem_holders; SELECT * FROM sem_waiters;"
          " SELECT * FROM sem_summary; SELECT * FROM sem_history ORDER BY id DESC LIMIT 20;")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
