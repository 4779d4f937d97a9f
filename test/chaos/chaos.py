#!/usr/bin/python3
"""A chaos run of pgsem, in the spirit of Jepsen's lock tests: workers claim, write and release
while faults strike; afterwards checkers read the record and the server's state.

Against a server that is already running (nothing is started or restarted; with --faults none
the server may be failed over under the run from outside):

  /usr/bin/python3 test/chaos/chaos.py --dsn 'host=h1,h2 port=5432,5432 user=postgres
      dbname=postgres target_session_attrs=read-write' --seconds 60 --workers 32 \\
      --faults none --record-dir /tmp/chaos-rec

The database needs CREATE EXTENSION pgsem and a superuser (the checkers read pgsem.claims);
the run creates its tables (chaos_resource, chaos_write, chaos_grant; rows keyed by a run id,
so runs may share a database) and names every semaphore chaos.<run id>.*. Workers reconnect
with backoff after a connection is lost and carry on; when they find a different server (a
restart: another postmaster start time; a failover: another address) the checkers treat it as
a restart: ids after it must exceed every id answered before it, and every acknowledged claim
must be in the history read at the end from the server then reachable.

With --faults all (the runner test/chaos/run.sh passes it, with --pgdata) the injector
(faults.py) also pauses clients and backends, cancels, terminates, SIGKILLs backends and stops
the server with -m immediate; that needs the server's data directory and, as root, the OS user
it runs as (--pg-os-user).

  chaos.py --check-only DIR     the checkers again over a kept record
  chaos.py --self-test          plants each kind of violation in made-up records
  chaos.py ... --unfenced       writers skip sem_fence and the token condition: the run must
                                then find lost updates or stale writes

The summary ends with "chaos: <N> operations, <N> faults, <N> anomalies"; the exit status is 0
when there are no anomalies, 1 when there are, 2 when the run could not run.
"""
import argparse
import json
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg2  # noqa: E402

import checkers  # noqa: E402
import record  # noqa: E402
from faults import Injector  # noqa: E402
import summary  # noqa: E402
from summary import summarize  # noqa: E402
from workload import worker_main  # noqa: E402

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS chaos_resource (run text NOT NULL, k integer NOT NULL,"
    " v bigint NOT NULL DEFAULT 0, token bigint NOT NULL DEFAULT 0, claim bigint,"
    " at timestamptz, PRIMARY KEY (run, k))",
    # No unique key on op: a write made twice must show, not fail.
    "CREATE TABLE IF NOT EXISTS chaos_write (run text NOT NULL, k integer NOT NULL,"
    " op bigint NOT NULL, prev bigint, claim bigint NOT NULL, kind text NOT NULL,"
    " at bigint NOT NULL, fence_at bigint, pid integer)",
    "CREATE TABLE IF NOT EXISTS chaos_grant (run text NOT NULL, name text NOT NULL,"
    " kind text NOT NULL, op bigint NOT NULL, permits integer NOT NULL, pid integer,"
    " s_at bigint NOT NULL, c_at bigint NOT NULL)",
]


def make_config(args, run):
    prefix = "chaos.%s." % run
    names = {"res": [prefix + "res.%d" % k for k in range(args.resources)],
             "pool_a": prefix + "pool.a", "pool_b": prefix + "pool.b",
             "rate": prefix + "rate", "bucket": prefix + "bucket"}
    n = {x: 1 for x in names["res"]}
    n[names["pool_a"]] = 4
    n[names["pool_b"]] = 4
    return {"run": run, "prefix": prefix, "dsn": args.dsn, "fenced": not args.unfenced,
            "lease": 2.0, "wait": 1.0, "stall": 0.03, "resources": args.resources,
            "names": names, "n": n,
            "rate": {"n": 6, "per": 1.0}, "bucket": {"n": 20, "per": 1.0, "burst": 4},
            "workers": args.workers, "seconds": args.seconds, "faults": args.faults}


def connect_retrying(dsn, seconds):
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn = psycopg2.connect(dsn, connect_timeout=3, application_name="chaos-setup")
            conn.autocommit = True
            return conn
        except psycopg2.Error:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def setup(config):
    conn = connect_retrying(config["dsn"], 30)
    cur = conn.cursor()
    cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'pgsem'")
    row = cur.fetchone()
    if row is None:
        raise RuntimeError("the database has no pgsem extension (CREATE EXTENSION pgsem)")
    config["pgsem_version"] = row[0]
    cur.execute("SELECT current_setting('pgsem.history_max_claims', true),"
                " current_setting('pgsem.history_retention', true)")
    config["server_history_settings"] = list(cur.fetchone())
    for sql in SCHEMA:
        cur.execute(sql)
    cur.execute("INSERT INTO chaos_resource (run, k) SELECT %s, g FROM generate_series(0, %s) g",
                (config["run"], config["resources"] - 1))
    conn.close()


def dump(config, record_dir):
    """The server's state at the end, for the checkers: the history of the run's names, the
    resources, their writes and the grant logs."""
    conn = connect_retrying(config["dsn"], 90)
    cur = conn.cursor()
    run, prefix = config["run"], config["prefix"]

    def rows(sql, params, keys):
        cur.execute(sql, params)
        return [dict(zip(keys, r)) for r in cur.fetchall()]

    us = "(extract(epoch FROM %s) * 1e6)::bigint"
    server = {
        "history": rows("SELECT id, name, slot, slots, " + us % "claimed_at" + ", " +
                        us % "expires_at" + ", " + us % "ended_at" + ", outcome, holder_pid,"
                        " application_name, coalesce(permits, 1), coalesce(rate, false),"
                        " " + us % "clock_timestamp()" +
                        " FROM pgsem.claims WHERE left(name, %s) = %s ORDER BY id, name, slot",
                        (len(prefix), prefix),
                        ["id", "name", "slot", "n", "claimed_at", "expires_at", "ended_at",
                         "outcome", "pid", "app", "permits", "rate", "read_at"]),
        "resources": rows("SELECT k, v, token, claim FROM chaos_resource WHERE run = %s"
                          " ORDER BY k", (run,), ["k", "v", "token", "claim"]),
        "writes": rows("SELECT k, op, prev, claim, kind, at, fence_at, pid FROM chaos_write"
                       " WHERE run = %s ORDER BY at", (run,),
                       ["k", "op", "prev", "claim", "kind", "at", "fence_at", "pid"]),
        "grants": rows("SELECT name, kind, op, permits, pid, s_at, c_at FROM chaos_grant"
                       " WHERE run = %s ORDER BY s_at", (run,),
                       ["name", "kind", "op", "permits", "pid", "s_at", "c_at"]),
    }
    conn.close()
    with open(os.path.join(record_dir, "server.json"), "w", encoding="utf-8") as f:
        json.dump(server, f)


def stop_workers(procs, grace_until):
    for p in procs.values():
        p.join(max(0.0, grace_until - time.monotonic()))
    stragglers = [p for p in procs.values() if p.is_alive()]
    for p in stragglers:
        try:
            os.kill(p.pid, signal.SIGCONT)
            p.terminate()
        except ProcessLookupError:
            pass
    for p in stragglers:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()
    return len(stragglers)


def run(args):
    run_id = "%08x" % random.getrandbits(32)
    record_dir = args.record_dir or tempfile.mkdtemp(prefix="chaos-records.", dir="/tmp")
    os.makedirs(record_dir, exist_ok=True)
    print("chaos: run %s, record in %s" % (run_id, record_dir), flush=True)
    config = make_config(args, run_id)
    try:
        setup(config)
    except (psycopg2.Error, RuntimeError) as e:
        print("chaos: could not set up: %s" % str(e).strip(), file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.getrandbits(32)
    config["seed"] = seed
    start = time.monotonic()
    config["start"] = start
    config["deadline"] = start + args.seconds
    with open(os.path.join(record_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1)

    ctx = multiprocessing.get_context("fork")
    procs = {}
    for w in range(args.workers):
        p = ctx.Process(target=worker_main, args=(w, config, record_dir, seed * 1000 + w),
                        daemon=True)
        p.start()
        procs[w] = p
    injector = None
    try:
        if args.faults == "all":
            pgctl = [os.path.join(args.pg_bindir, "pg_ctl"), "-D", args.pgdata,
                     "-l", args.pg_log or os.path.join(os.path.dirname(args.pgdata),
                                                       "server.log")]
            if os.geteuid() == 0 and args.pg_os_user:
                pgctl = ["runuser", "-u", args.pg_os_user, "--"] + pgctl
            injector = Injector(config, record_dir, {w: p.pid for w, p in procs.items()},
                                pgctl, seed)
            injector.run(start, config["deadline"])
        else:
            time.sleep(max(0.0, config["deadline"] - time.monotonic()))
    finally:
        # A worker ends its operation after the deadline (a wait, a paused backend's answer).
        killed = stop_workers(procs, config["deadline"] + 30)
    if killed:
        print("chaos: %d workers had to be stopped" % killed, flush=True)
    try:
        dump(config, record_dir)
    except psycopg2.Error as e:
        print("chaos: could not read the server's state: %s" % str(e).strip(), file=sys.stderr)
        return 2
    if args.no_check:
        return 0
    return check(record_dir)


def check(record_dir):
    data = record.load(record_dir)
    results = checkers.check_all(data)
    print(summarize(data, results))
    anomalies = sum(len(r["anomalies"]) for r in results)
    with open(os.path.join(record_dir, "anomalies.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1, default=str)
    if not data["calls"]:
        return 2
    # A run that did not exercise what it claims to check proves less: that fails too.
    unexercised = summary.unexercised(data)
    if unexercised:
        print("chaos: the run did not exercise: " + ", ".join(unexercised))
    return 1 if anomalies or unexercised else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", help="libpq conninfo of the database (may list several hosts)")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--workers", type=int, default=32)
    ap.add_argument("--resources", type=int, default=4)
    ap.add_argument("--faults", choices=["all", "none"], default="none")
    ap.add_argument("--record-dir")
    ap.add_argument("--unfenced", action="store_true")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--pgdata", help="the server's data directory (--faults all)")
    ap.add_argument("--pg-bindir", default="/usr/lib/postgresql/15/bin")
    ap.add_argument("--pg-os-user", help="the OS user the server runs as (when root)")
    ap.add_argument("--pg-log", help="the server log pg_ctl restart writes to")
    ap.add_argument("--no-check", action="store_true", help="run and read the state; no checks")
    ap.add_argument("--check-only", metavar="DIR", help="check a kept record")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        import selftest
        return selftest.main()
    if args.check_only:
        return check(args.check_only)
    if not args.dsn:
        ap.error("--dsn is needed")
    if args.faults == "all" and not args.pgdata:
        ap.error("--faults all needs --pgdata (the injector restarts the server)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
