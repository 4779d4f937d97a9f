#!/usr/bin/python3
"""Claims a million times and watches pgsem.claims: does the table stay bounded under sustained
load with default autovacuum and the history pruning that claimers do as they go?

For each retention given, a fresh database runs 1,000,000 claim+release pairs with pgbench
(8 clients over 100 semaphores of n = 4), in chunks of 100,000, and after each chunk records the
rows kept and the on-disk size of the table and its indexes."""
import argparse
import subprocess
import sys
import time

import psycopg2

SIZE_SQL = """
SELECT count(*),
       pg_relation_size('pgsem.claims'),
       pg_indexes_size('pgsem.claims'),
       pg_total_relation_size('pgsem.claims'),
       (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'pgsem.claims'::regclass),
       (SELECT autovacuum_count FROM pg_stat_user_tables WHERE relid = 'pgsem.claims'::regclass)
  FROM pgsem.claims
"""


def mib(n):
    return f"{n / 1048576:.1f}"


def measure(pgbench, script, retention, total, chunk, clients):
    admin = psycopg2.connect(dbname="postgres")
    admin.autocommit = True
    db = f"history_{retention.replace(' ', '')}"
    with admin.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{db}"')
        cur.execute(f'CREATE DATABASE "{db}"')
        cur.execute(f"ALTER DATABASE \"{db}\" SET pgsem.history_retention = '{retention}'")
    admin.close()
    conn = psycopg2.connect(dbname=db)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("CREATE EXTENSION pgsem")
    print(f"\n### retention {retention}\n")
    print("| pairs | seconds | rows kept | heap MiB | indexes MiB | total MiB | dead rows | autovacuums |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    done = 0
    started = time.time()
    while done < total:
        per_client = chunk // clients
        out = subprocess.run(
            [pgbench, "-n", "-M", "extended", "-c", str(clients), "-j", "2",
             "-t", str(per_client), "-f", script, "-D", "n=4", "-D", "names=100",
             "-D", "group=1", "-D", "backoff=0", "-d", db], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(out.stdout + out.stderr)
        done += per_client * clients
        with conn.cursor() as cur:
            cur.execute(SIZE_SQL)
            rows, heap, idx, tot, dead, av = cur.fetchone()
        print(f"| {done} | {time.time() - started:.0f} | {rows} | {mib(heap)} | {mib(idx)} | "
              f"{mib(tot)} | {dead} | {av} |", flush=True)
    conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pgbench", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--pairs", type=int, default=1000000)
    ap.add_argument("--chunk", type=int, default=100000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("retentions", nargs="*", default=["30s", "1d"])
    args = ap.parse_args()
    for retention in args.retentions:
        measure(args.pgbench, args.script, retention, args.pairs, args.chunk, args.clients)


if __name__ == "__main__":
    main()
