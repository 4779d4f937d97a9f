#!/usr/bin/python3
"""Runs the benchmark cells with pgbench, interleaved round by round, and reports medians and
ratios. Connection settings come from the PG* environment (bench/run.sh sets them up)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))

# label, script, clients, pgbench variables, how to count successful claim+release pairs
LOCK_CELLS = [
    ("SELECT 1", "select1", 1, {}, None),
    ("pg_advisory_xact_lock(bigint)", "bigint_xact_lock", 1, {}, None),
    ("advisory_lock_text(text)", "text_xact_lock", 1, {}, None),
    ("SELECT 1", "select1", 8, {}, None),
    ("pg_advisory_xact_lock(bigint)", "bigint_xact_lock", 8, {}, None),
    ("advisory_lock_text(text)", "text_xact_lock", 8, {}, None),
]

SEM_CELLS = []
for clients, names, group in ((1, 1, 1), (8, 1, 2), (32, 1, 3), (32, 1000, 4)):
    where = "1 name" if names == 1 else f"{names} names"
    v = {"n": 4, "names": names, "group": group, "backoff": 0}
    SEM_CELLS += [
        (f"pgsem, n=4, {where}", "pgsem_pair", clients, v, "pgsem"),
        (f"seed SQL, n=4, {where}", "seed_pair", clients, v, "seed"),
        (f"floor (INSERT+UPDATE), {where}", "floor_pair", clients, v, "floor"),
    ]
# Claim cost against n: a fresh n=4 semaphore vs n=10000 with 9000 slots held (setup below).
# At most 4 clients, so that the n=4 semaphore is never full and both cells measure claims that
# succeed.
for clients in (1, 4):
    SEM_CELLS += [
        ("pgsem, n=4, nothing held", "pgsem_pair", clients,
         {"n": 4, "names": 1, "group": 8, "backoff": 0}, "pgsem"),
        ("pgsem, n=10000, 9000 held", "pgsem_pair", clients,
         {"n": 10000, "names": 1, "group": 9, "backoff": 0}, "pgsem"),
    ]
# Not a target cell: the same 32 clients on one name, but refused callers back off 1 ms before
# trying again instead of spinning, as callers answering "overloaded" do.
SEM_CELLS += [
    ("pgsem, n=4, 1 name, 1 ms back-off", "pgsem_pair", 32,
     {"n": 4, "names": 1, "group": 5, "backoff": 1000}, "pgsem"),
    ("seed SQL, n=4, 1 name, 1 ms back-off", "seed_pair", 32,
     {"n": 4, "names": 1, "group": 5, "backoff": 1000}, "seed"),
]
# The limiter (1.2), at 8 clients: a claim of 3 permits on n = 12 (4 such claims fit, as 4
# claims of one fit n = 4 in the 8-client cell above), and two limits taken at once by one set
# claim against the same two taken by single claims one after the other.
SEM_CELLS += [
    ("pgsem, n=12, 3 permits, 1 name", "pgsem_permits_pair", 8,
     {"n": 12, "permits": 3, "group": 11}, "pgsem_claims"),
    ("pgsem set of 2 (n=4 each)", "pgsem_set_pair", 8, {"n": 4, "group": 12}, "pgsem_second"),
    ("pgsem 2 single claims (n=4 each)", "pgsem_two_pair", 8, {"n": 4, "group": 13},
     "pgsem_second"),
]
# Declared semaphores (1.2): the same claim as an application role (not a superuser, whose
# privilege check is short), on an undeclared name with n, and on a declared name with n left out
# and the right to claim granted to a group role the caller is a member of (bench/sql/setup.sql).
SEM_CELLS += [
    ("pgsem as a role, n=4, undeclared", "pgsem_pair", 8,
     {"n": 4, "names": 1, "group": 14, "backoff": 0, "user": "bench_app"}, "pgsem"),
    ("pgsem as a role, declared n=4, via a group", "pgsem_declared_pair", 8,
     {"names": 1, "group": 15, "backoff": 0, "user": "bench_app"}, "pgsem"),
]
SEM_CELLS += [("pg_advisory_xact_lock(bigint)", "bigint_xact_lock", 32, {}, None),
              ("SELECT 1", "select1", 32, {}, None)]

# Rate limits (1.2). A sliding-window grant against the lease claim it is made of (a lease of the
# window's length, never released), at 1 and 8 clients, on windows no client fills, in the two
# states a window's slots can be in:
# - n = 1,000,000 per second: slots no grant (or lease) has used yet, so each call only inserts;
# - n = 30,000 per second, every slot used before the rounds (setup_rates): each call reuses the
#   slot of a grant (or lease) that has passed, recording it as ended first. A busy window of any
#   n ends up here once it has used all its slots, and so does a busy semaphore of leases.
# And the cost of a call on a full window of n = 100 against one of n = 100,000 (both per minute,
# filled beforehand: setup_rates), which must not grow with n. Redis' sliding window is in
# DRIVER_CELLS' rate list below.
REUSED_N = 30000
RATE_CELLS = []
for clients in (1, 8):
    v = {"n": 1000000, "per_ms": 1000, "group": 20 + clients}
    reused = {"n": REUSED_N, "per_ms": 1000, "group": 50 + clients}
    RATE_CELLS += [
        ("pgsem sem_rate grant, 1000000 per s", "pgsem_rate_grant", clients, v, "ids"),
        ("pgsem lease of 1 s, never released", "pgsem_lease_only", clients, v, "ids"),
        ("pgsem sem_bucket grant, 1000000 per s", "pgsem_bucket_grant", clients, v,
         "bucket_writes"),
        (f"pgsem sem_rate grant, {REUSED_N} per s, slots used", "pgsem_rate_grant", clients,
         reused, "ids"),
        (f"pgsem lease of 1 s, n={REUSED_N}, slots used", "pgsem_lease_only", clients, reused,
         "ids"),
    ]
RATE_CELLS += [
    ("pgsem sem_rate, full window of 100 per min", "pgsem_rate_grant", 8,
     {"n": 100, "per_ms": 60000, "group": 30}, "ids"),
    ("pgsem sem_rate, full window of 100000 per min", "pgsem_rate_grant", 8,
     {"n": 100000, "per_ms": 60000, "group": 31}, "ids"),
]
RATE_DRIVER_CELLS = [(f"Redis {kind} (Lua), 1000000 per s", target, c)
                     for c in (1, 8)
                     for kind, target in (("sliding window", "redis-rate"),
                                          ("GCRA token bucket", "redis-bucket"))]

# sem_stats' counters (1.2): the same claim+release pairs with counting on and off
# (pgsem.track_stats, per session), interleaved, on a cluster with pgsem preloaded (the counters
# need it: PGSEM_BENCH_SETTINGS="shared_preload_libraries=pgsem"): what counting costs a claim.
STATS_CELLS = []
for clients in (1, 8, 32):
    for on in ("on", "off"):
        STATS_CELLS.append((f"pgsem, n=4, 1 name, counters {on}", "pgsem_pair", clients,
                            {"n": 4, "names": 1, "group": 60 + clients, "backoff": 0,
                             "pgoptions": f"-c pgsem.track_stats={on}"}, "pgsem"))
for on in ("on", "off"):
    STATS_CELLS.append((f"pgsem, n=4, 1 name, wait 10 s, counters {on}", "pgsem_wait_pair", 32,
                        {"n": 4, "names": 1, "group": 70, "backoff": 0,
                         "pgoptions": f"-c pgsem.track_stats={on}"}, "pgsem"))

# Claims that wait in line (1.1). The lease cell is pgbench's; it is judged against the
# no-wait cell and the write floor at 32 clients, so --only waits runs those two as well.
WAIT_CELLS = [
    ("pgsem, n=4, 1 name, wait 10 s", "pgsem_wait_pair", 32,
     {"n": 4, "names": 1, "group": 6, "backoff": 0}, "pgsem"),
    # The limit: the same hand-off from bare Postgres parts (bench/sql/setup.sql, limit_claim).
    ("limit: 4 advisory-lock queues, INSERT/UPDATE", "limit_wait_pair", 32, {"n": 4}, "floor"),
    # The price of the one line: the same 4 slots as 4 semaphores of 1, a line each.
    ("pgsem, 4 names of n=1, wait 10 s", "pgsem_wait_pair", 32,
     {"n": 1, "names": 4, "group": 10, "backoff": 0}, "pgsem"),
    ("pgsem, n=4, 1 name", "pgsem_pair", 32, {"n": 4, "names": 1, "group": 3, "backoff": 0},
     "pgsem"),
    ("floor (INSERT+UPDATE), 1 name", "floor_pair", 32,
     {"n": 4, "names": 1, "group": 3, "backoff": 0}, "floor"),
]
# Transaction claims against the Redis fair semaphore, by bench/driver (pgbench cannot count
# transaction claims: they leave no row). Label, driver target, clients.
DRIVER_CELLS = []
# The waiting lease cell from the driver too: what pgbench itself costs in that cell.
DRIVER_CELLS.append(("pgsem, n=4, 1 name, wait 10 s (driver)", "pgsem-lease-wait", 32))
for clients in (8, 32):
    DRIVER_CELLS += [
        ("sem_claim_xact, n=4", "pgsem-xact", clients),
        ("sem_claim_xact, n=4, wait 10 s", "pgsem-xact-wait", clients),
        ("Redis fair semaphore, n=4", "redis-fair", clients),
        ("limit: first free of 4 advisory xact locks", "pg-xact-limit", clients),
        ("floor: BEGIN; SELECT 1 / COMMIT", "pg-floor", clients),
        ("floor: Redis PING / PING", "redis-floor", clients),
    ]

COUNTERS = {
    # Claims and grants made: ids are drawn only for them.
    "ids": ("SELECT last_value FROM pgsem.claim_id",
            "SELECT (SELECT last_value FROM pgsem.claim_id) - %s"),
    "pgsem": ("SELECT last_value FROM pgsem.claim_id",
              "SELECT count(*) FROM pgsem.claims WHERE id > %s AND outcome = 'released'"),
    # Claims of several rows (permits) count once.
    "pgsem_claims": ("SELECT last_value FROM pgsem.claim_id",
                     "SELECT count(DISTINCT id) FROM pgsem.claims "
                     "WHERE id > %s AND outcome = 'released'"),
    # Both limits held: the second semaphore's released rows (a set has one there; two single
    # claims take it only once the first is held).
    "pgsem_second": ("SELECT last_value FROM pgsem.claim_id",
                     "SELECT count(*) FROM pgsem.claims WHERE id > %s AND outcome = 'released' "
                     "AND name LIKE 'bench-b-%%'"),
    # Token bucket grants: each writes its bucket's row once (the statistics of pgsem.buckets,
    # flushed by the cell's backends as they exit).
    "bucket_writes": ("SELECT n_tup_ins + n_tup_upd FROM pg_stat_all_tables"
                      " WHERE relid = 'pgsem.buckets'::regclass",
                      "SELECT (SELECT n_tup_ins + n_tup_upd FROM pg_stat_all_tables"
                      " WHERE relid = 'pgsem.buckets'::regclass) - %s FROM pg_sleep(0.5)"),
    "seed": ("SELECT coalesce(max(id), 0) FROM seed_requests",
             "SELECT count(*) FROM seed_requests WHERE id > %s AND completed_at IS NOT NULL"),
    "floor": ("SELECT coalesce(max(id), 0) FROM floor_claims",
              "SELECT count(*) FROM floor_claims WHERE id > %s AND released_at IS NOT NULL"),
}


def query(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()[0]


def run_driver_cell(args, cell, seconds):
    label, target, clients = cell
    cmd = [args.driver, "pairs", "--target", target, "--clients", str(clients),
           "--seconds", str(seconds)]
    if target in ("redis-rate", "redis-bucket"):
        cmd += ["--n", "1000000", "--window-ms", "1000"]
    if target.startswith("redis"):
        cmd += ["--redis-port", str(args.redis_port), "--scripts", os.path.join(HERE, "redis")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"the driver failed for {label}:\n{out.stdout}\n{out.stderr}")
    values = dict(item.split("=") for item in out.stdout.split())
    return float(values["attempts"]) / float(values["seconds"]), float(values["pairs_per_s"])


def run_cell(conn, pgbench, cell, seconds):
    label, script, clients, variables, counter = cell
    before = query(conn, COUNTERS[counter][0]) if counter else 0
    # Not -M prepared: pgbench prepares synchronously, so a client preparing behind the seed
    # SQL's LOCK TABLE blocks its thread, and with it the lock holder on that thread: a deadlock.
    cmd = [pgbench, "-n", "-M", "extended", "-T", str(seconds), "-c", str(clients),
           "-j", str(min(clients, 2)), "-f", os.path.join(HERE, "sql", script + ".sql")]
    env = dict(os.environ)
    for k, v in variables.items():
        if k == "user":
            cmd += ["-U", v]  # the role the cell's clients connect as
        elif k == "pgoptions":
            env["PGOPTIONS"] = v  # settings of the cell's sessions
        else:
            cmd += ["-D", f"{k}={v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"pgbench failed for {label}:\n{out.stdout}\n{out.stderr}")
    tps = float(re.search(r"tps = ([0-9.]+) \(without initial connection time\)",
                          out.stdout).group(1))
    pairs = None
    if counter:
        pairs = query(conn, COUNTERS[counter][1], (before,)) / seconds
    return tps, pairs


def lock_call_costs(conn, rounds):
    """Server time per lock+unlock pair, without client round trips: 200,000 session locks taken
    and released in one statement, bigint keys against the same keys as text, interleaved."""
    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE lock_keys AS"
                    " SELECT g::bigint AS b, g::text AS t FROM generate_series(1, 200000) g")
    queries = {
        "pg_try_advisory_lock + pg_advisory_unlock (bigint)":
            "SELECT count(*) FROM lock_keys WHERE pg_try_advisory_lock(b) AND pg_advisory_unlock(b)",
        "advisory_session_try_lock_text + advisory_session_unlock_text":
            "SELECT count(*) FROM lock_keys"
            " WHERE advisory_session_try_lock_text(t) AND advisory_session_unlock_text(t)",
    }
    times = {k: [] for k in queries}
    for r in range(rounds):
        for label, sql in (queries.items() if r % 2 == 0 else reversed(queries.items())):
            started = time.perf_counter()
            assert query(conn, sql) == 200000
            times[label].append((time.perf_counter() - started) / 200000 * 1e6)
    return {k: statistics.median(v) for k, v in times.items()}


def setup_held(conn):
    """9000 of 10000 slots of one semaphore held for a day, chosen as sem_claim chooses them."""
    held = query(conn, "SELECT count(sem_claim('bench-9000001', 10000, '1 day'))"
                       " FROM generate_series(1, 9000)")
    assert held == 9000, held


def setup_rates(conn):
    """The "slots used" cells' windows and semaphores, every slot taken once for a second (group
    51 and 58); then the full windows of the rate cells, n grants each, a minute long (group 30 and
    31), last, so that their minute runs during the rounds. Names: bench/sql/pgsem_rate_grant.sql,
    pgsem_lease_only.sql."""
    for group in (51, 58):
        granted = query(conn, "SELECT count(*) FILTER (WHERE sem_rate(%s, %s, '1 second'))"
                              " FROM generate_series(1, %s)", (f"bench-rate-{group}", REUSED_N,
                                                             REUSED_N))
        leased = query(conn, "SELECT count(sem_claim(%s, %s, '1 second'))"
                             " FROM generate_series(1, %s)", (f"bench-lease-{group}", REUSED_N,
                                                            REUSED_N))
        assert granted == REUSED_N and leased == REUSED_N, (group, granted, leased)
    for group, n in ((30, 100), (31, 100000)):
        granted = query(conn, "SELECT count(*) FILTER (WHERE sem_rate(%s, %s, '1 minute'))"
                              " FROM generate_series(1, %s)", (f"bench-rate-{group}", n, n))
        assert granted == n, (group, granted)


def rate_saturation(args, conn):
    """32 clients that wait up to 2 s on a limit of 200 per second, for 10 s: the grants made (of
    the 2,000 the window allows) and the most in any second-long window, from sem_history."""
    name = "bench-rate-40"
    cmd = [args.pgbench, "-n", "-M", "extended", "-T", "10", "-c", "32", "-j", "2",
           "-D", "n=200", "-D", "per_ms=1000", "-D", "group=40",
           "-f", os.path.join(HERE, "sql", "pgsem_rate_wait.sql")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"pgbench failed for the saturation run:\n{out.stdout}\n{out.stderr}")
    with conn.cursor() as cur:
        cur.execute(
            "WITH g AS (SELECT claimed_at FROM sem_history WHERE name = %s),"
            " f AS (SELECT min(claimed_at) AS t0 FROM g)"
            " SELECT (SELECT count(*) FROM g, f WHERE claimed_at < t0 + interval '10 seconds'),"
            "        (SELECT max(c) FROM (SELECT count(*) OVER (ORDER BY claimed_at RANGE BETWEEN"
            "          CURRENT ROW AND interval '999999 microseconds' FOLLOWING) AS c FROM g) w),"
            "        (SELECT count(*) FROM g)", (name,))
        in_ten, most, total = cur.fetchone()
    print("\nrate limit of 200 per second, 32 clients waiting up to 2 s each, 10 s of pgbench\n")
    print("| measure | value |")
    print("|---|---:|")
    print(f"| grants in the 10 s from the first (of 2,000 the limit allows) | {in_ten} "
          f"({100.0 * in_ten / 2000:.1f} %) |")
    print(f"| most grants in any window of 1 s | {most} |")
    print(f"| grants in all (the run's last waits end after its 10 s) | {total} |")
    with conn.cursor() as cur:
        cur.execute("SELECT extract(epoch FROM claimed_at - min(claimed_at) OVER ())::float8"
                    " FROM sem_history WHERE name = %s", (name,))
        return [row[0] for row in cur.fetchall()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pgbench", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--only",
                    choices=["locks", "semaphores", "waits", "declarations", "rates", "stats"])
    ap.add_argument("--driver", required=True)
    ap.add_argument("--redis-port", type=int, required=True)
    ap.add_argument("--samples", type=int, default=500)
    args = ap.parse_args()

    conn = psycopg2.connect("")
    conn.autocommit = True
    cells = []
    if args.only in (None, "locks"):
        cells += LOCK_CELLS
    if args.only in (None, "semaphores"):
        cells += SEM_CELLS
        setup_held(conn)
    if args.only == "waits":
        cells += WAIT_CELLS
    elif args.only is None:
        cells += WAIT_CELLS[:3]  # the other two are among SEM_CELLS already
    if args.only in (None, "waits"):
        cells += DRIVER_CELLS
    if args.only == "declarations":  # the two cells of issue 20, interleaved (among SEM_CELLS)
        cells += [c for c in SEM_CELLS if c[0].startswith("pgsem as a role")]
    if args.only in (None, "rates"):
        cells += RATE_CELLS + RATE_DRIVER_CELLS
        setup_rates(conn)
    if args.only == "stats":  # only on request: it needs the preload
        if "pgsem" not in query(conn, "SHOW shared_preload_libraries"):
            sys.exit("--only stats needs pgsem preloaded: "
                     "PGSEM_BENCH_SETTINGS=\"shared_preload_libraries=pgsem\" bash bench/run.sh ...")
        cells += STATS_CELLS

    results = {i: [] for i in range(len(cells))}
    started = time.time()
    for r in range(args.rounds):
        # Odd rounds run the cells in reverse, so drift over the run favours no cell.
        order = list(enumerate(cells))
        if r % 2 == 1:
            order.reverse()
        for i, cell in order:
            if len(cell) == 3:
                tps, pairs = run_driver_cell(args, cell, args.seconds)
            else:
                tps, pairs = run_cell(conn, args.pgbench, cell, args.seconds)
            results[i].append((tps, pairs))
            shown = f"{pairs:9.0f} pairs/s" if pairs is not None else ""
            print(f"round {r + 1} {cell[0]:34} c={cell[2]:<3} {tps:9.0f} tps {shown}",
                  flush=True)

    med = {}
    print(f"\nmedians of {args.rounds} rounds of {args.seconds} s "
          f"({time.time() - started:.0f} s in all)\n")
    print("| workload | clients | tps | successful pairs/s |")
    print("|---|---:|---:|---:|")
    for i, cell in enumerate(cells):
        tps = statistics.median(x[0] for x in results[i])
        counted = len(cell) == 3 or cell[4]
        pairs = statistics.median(x[1] for x in results[i]) if counted else None
        med[(cell[0], cell[2])] = (tps, pairs)
        print(f"| {cell[0]} | {cell[2]} | {tps:.0f} | "
              f"{'' if pairs is None else f'{pairs:.0f}'} |")

    def ratio(a, b, idx):
        if a in med and b in med and med[b][idx]:
            return med[a][idx] / med[b][idx]
        return None

    if args.only in (None, "locks"):
        costs = lock_call_costs(conn, 5)
        print("\nserver time per lock+unlock pair (200,000 keys, median of 5 interleaved runs)\n")
        print("| pair | µs |")
        print("|---|---:|")
        for label, micros in costs.items():
            print(f"| {label} | {micros:.3f} |")
        a, b = costs.values()
        print(f"| text / bigint | {b / a:.3f} |")

    print("\n| ratio | value |")
    print("|---|---:|")
    for c in (1, 8):
        r = ratio(("advisory_lock_text(text)", c), ("pg_advisory_xact_lock(bigint)", c), 0)
        if r:
            print(f"| text lock / bigint lock tps, {c} clients | {r:.3f} |")
    for c, where in ((1, "1 name"), (8, "1 name"), (32, "1 name"), (32, "1000 names")):
        r = ratio((f"pgsem, n=4, {where}", c), (f"seed SQL, n=4, {where}", c), 1)
        f = ratio((f"pgsem, n=4, {where}", c), (f"floor (INSERT+UPDATE), {where}", c), 1)
        if r:
            print(f"| pgsem / seed SQL pairs, {c} clients, {where} | {r:.2f} |")
        if f:
            print(f"| pgsem / floor pairs, {c} clients, {where} | {f:.2f} |")
    r = ratio(("pgsem, n=4, 1 name, 1 ms back-off", 32), ("seed SQL, n=4, 1 name, 1 ms back-off", 32), 1)
    f = ratio(("pgsem, n=4, 1 name, 1 ms back-off", 32), ("floor (INSERT+UPDATE), 1 name", 32), 1)
    if r:
        print(f"| with 1 ms back-off: pgsem / seed SQL pairs, 32 clients, 1 name | {r:.2f} |")
    if f:
        print(f"| with 1 ms back-off: pgsem / floor pairs, 32 clients, 1 name | {f:.2f} |")
    for c in (1, 4):
        r = ratio(("pgsem, n=4, nothing held", c), ("pgsem, n=10000, 9000 held", c), 1)
        if r:
            print(f"| claim cost n=10000 (9000 held) / n=4, {c} clients | {r:.2f} |")
    r = ratio(("pgsem, n=12, 3 permits, 1 name", 8), ("pgsem, n=4, 1 name", 8), 1)
    if r:
        print(f"| claims of 3 permits on n=12 / claims of 1 on n=4, 8 clients | {r:.2f} |")
    r = ratio(("pgsem set of 2 (n=4 each)", 8), ("pgsem 2 single claims (n=4 each)", 8), 1)
    if r:
        print(f"| set of 2 / 2 single claims one after the other, both held, 8 clients | {r:.2f} |")
    r = ratio(("pgsem as a role, declared n=4, via a group", 8),
              ("pgsem as a role, n=4, undeclared", 8), 1)
    if r:
        print(f"| declared name, right to claim via a group / undeclared, 8 clients | {r:.2f} |")
    wait = ("pgsem, n=4, 1 name, wait 10 s", 32)
    for label, other in (("write floor", ("floor (INSERT+UPDATE), 1 name", 32)),
                         ("no-wait pgsem", ("pgsem, n=4, 1 name", 32)),
                         ("limit", ("limit: 4 advisory-lock queues, INSERT/UPDATE", 32)),
                         ("4 lines of 1 slot", ("pgsem, 4 names of n=1, wait 10 s", 32))):
        r = ratio(wait, other, 1)
        if r:
            print(f"| waiting pgsem / {label} pairs, 32 clients, 1 name | {r:.2f} |")
    for c in (8, 32):
        for label in ("sem_claim_xact, n=4", "sem_claim_xact, n=4, wait 10 s",
                      "limit: first free of 4 advisory xact locks",
                      "floor: BEGIN; SELECT 1 / COMMIT"):
            r = ratio((label, c), ("Redis fair semaphore, n=4", c), 1)
            if r:
                print(f"| {label} / Redis fair semaphore pairs, {c} clients | {r:.2f} |")
        r = ratio(("sem_claim_xact, n=4", c),
                  ("limit: first free of 4 advisory xact locks", c), 1)
        if r:
            print(f"| sem_claim_xact / advisory-lock limit pairs, {c} clients | {r:.2f} |")
        r = ratio(("Redis fair semaphore, n=4", c), ("floor: Redis PING / PING", c), 1)
        if r:
            print(f"| Redis fair semaphore / Redis PING floor pairs, {c} clients | {r:.2f} |")

    for c in (1, 8):
        grant = ("pgsem sem_rate grant, 1000000 per s", c)
        for label, other in (("lease claim of 1 s", ("pgsem lease of 1 s, never released", c)),
                             ("Redis sliding window",
                              ("Redis sliding window (Lua), 1000000 per s", c))):
            r = ratio(grant, other, 1)
            if r:
                print(f"| sem_rate grants / {label}, {c} clients | {r:.2f} |")
        r = ratio((f"pgsem sem_rate grant, {REUSED_N} per s, slots used", c),
                  (f"pgsem lease of 1 s, n={REUSED_N}, slots used", c), 1)
        if r:
            print(f"| sem_rate grants / lease claim of 1 s, slots used, {c} clients | {r:.2f} |")
        bucket = ("pgsem sem_bucket grant, 1000000 per s", c)
        for label, other in (("lease claim of 1 s", ("pgsem lease of 1 s, never released", c)),
                             ("Redis GCRA token bucket",
                              ("Redis GCRA token bucket (Lua), 1000000 per s", c))):
            r = ratio(bucket, other, 1)
            if r:
                print(f"| sem_bucket grants / {label}, {c} clients | {r:.2f} |")
    for c, what in ((1, ""), (8, ""), (32, ""), (32, ", wait 10 s")):
        r = ratio((f"pgsem, n=4, 1 name{what}, counters on", c),
                  (f"pgsem, n=4, 1 name{what}, counters off", c), 1)
        if r:
            print(f"| counters on / off pairs{what}, {c} clients | {r:.3f} |")
    r = ratio(("pgsem sem_rate, full window of 100000 per min", 8),
              ("pgsem sem_rate, full window of 100 per min", 8), 0)
    if r:
        print(f"| calls/s on a full window: n=100000 / n=100, 8 clients | {r:.2f} |")

    grants = rate_saturation(args, conn) if args.only in (None, "rates") else []
    samples = wait_latencies(args) if args.only in (None, "waits") else {}
    draw_plots(med if args.only is None else {}, samples, grants)


def draw_plots(med, samples, grants):
    """bench/plots.py's plots of what this run measured, into bench/ beside RESULTS.md: the
    throughput plot from a full run only (a run with --only has some of its cells)."""
    try:
        import plots
    except ImportError as e:  # matplotlib missing: the numbers above stand
        print(f"\nno plots: {e}")
        return
    drawn = [plots.throughput(med, os.path.join(HERE, "throughput.png")),
             plots.handoff(samples, os.path.join(HERE, "handoff.png")),
             plots.rate_grants(grants, 200, os.path.join(HERE, "rate_grants.png"))]
    drawn = [os.path.relpath(p, os.path.dirname(HERE)) for p in drawn if p]
    if drawn:
        print("\nplots: " + ", ".join(drawn))


def driver(args, *words):
    out = subprocess.run([args.driver, *map(str, words)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"the driver failed ({' '.join(map(str, words))}):\n{out.stderr}")
    return dict(item.split("=") for item in out.stdout.split())


def wait_latencies(args):
    """Hand-off latency per kind of claim, lease-expiry hand-off and the CPU of idle waiters:
    measurements of single events, not throughput, so they run after the rounds."""
    print(f"\nhand-off: one holder frees the only slot while one client waits in line; from just"
          f" before the release is sent to the waiter's claim returning ({args.samples} samples)\n")
    print("| freed by | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|")
    handoffs = {}
    for kind, how in (("lease", "sem_release of a lease"),
                      ("transaction", "COMMIT of a transaction claim"),
                      ("session", "sem_release_session")):
        with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
            v = driver(args, "handoff", "--kind", kind, "--samples", args.samples,
                       "--samples-out", out.name)
            handoffs[how] = [float(line) for line in out if line.strip()]
        print(f"| {how} | {float(v['p50_ms']):.3f} | {float(v['p99_ms']):.3f} |"
              f" {float(v['max_ms']):.3f} |")
    samples = max(args.samples // 5, 20)
    v = driver(args, "expiry", "--samples", samples, "--lease-ms", 100)
    print(f"\nlease expiry: a 100 ms lease runs out with no release while one client waits;"
          f" grant time minus expiry, server clock ({samples} samples)\n")
    print("| p50 ms | p99 ms | min ms | max ms |")
    print("|---:|---:|---:|---:|")
    print(f"| {float(v['p50_ms']):.3f} | {float(v['p99_ms']):.3f} | {float(v['min_ms']):.3f} |"
          f" {float(v['max_ms']):.3f} |")
    v = driver(args, "idle", "--waiters", 100, "--seconds", 10)
    print(f"\nidle waiters: {v['waiters']} clients wait in line for {float(v['seconds']):.1f} s"
          f" while nothing is released: their backends used {float(v['cpu_seconds']):.4f} CPU s,"
          f" {float(v['percent_of_core']):.3f} % of one core ({v['clock']})")
    return handoffs


if __name__ == "__main__":
    main()
