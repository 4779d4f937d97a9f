#!/usr/bin/python3
"""Claim latency while an old snapshot is open (issue: every claim and release leaves a dead entry
in a partial unique index that vacuum cannot remove while another session's snapshot holds the
xmin horizon, and every later claim of that slot walks them).

For pgsem, the seed article's SQL and the INSERT+UPDATE floor, one client runs BATCHES batches of
PAIRS claim+release pairs (pgbench -t) while a second session sits in a REPEATABLE READ
transaction; then the snapshot is released and one batch more is run after VACUUM. Reported: the
average latency of one pair per batch, and the last batch over the first. Connection settings
come from the PG* environment (bench/old_snapshot.sh sets them up)."""
import argparse
import os
import re
import subprocess
import sys

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
APPROACHES = [("pgsem", "pgsem_pair"), ("seed SQL", "seed_pair"), ("floor (INSERT+UPDATE)", "floor_pair")]


def batch(pgbench, script, pairs, group):
    cmd = [pgbench, "-n", "-M", "extended", "-c", "1", "-t", str(pairs),
           "-f", os.path.join(HERE, "sql", script + ".sql"),
           "-D", "n=4", "-D", "names=1", "-D", f"group={group}", "-D", "backoff=0"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"pgbench failed:\n{out.stdout}\n{out.stderr}")
    return float(re.search(r"latency average = ([0-9.]+) ms", out.stdout).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pgbench", required=True)
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--batches", type=int, default=5)
    args = ap.parse_args()
    conn = psycopg2.connect("")
    conn.autocommit = True
    rows = []
    for group, (label, script) in enumerate(APPROACHES, start=20):
        old = psycopg2.connect("")
        old.set_session(isolation_level="REPEATABLE READ")
        with old.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_class")  # takes the snapshot
        latencies = []
        for b in range(args.batches):
            latencies.append(batch(args.pgbench, script, args.pairs, group))
            print(f"{label:24} batch {b + 1} with the old snapshot open: "
                  f"{latencies[-1]:.3f} ms per pair", flush=True)
        old.rollback()
        old.close()
        with conn.cursor() as cur:
            cur.execute("VACUUM")
        after = batch(args.pgbench, script, args.pairs, group)
        print(f"{label:24} after the snapshot closed and VACUUM: {after:.3f} ms per pair", flush=True)
        rows.append((label, latencies, after))

    print(f"\nms per claim+release pair, 1 client, batches of {args.pairs} pairs on one "
          f"semaphore of n = 4 while a REPEATABLE READ transaction is open\n")
    head = " | ".join(f"batch {i + 1}" for i in range(args.batches))
    print(f"| approach | {head} | last / first | after VACUUM |")
    print("|---|" + "---:|" * (args.batches + 2))
    for label, lat, after in rows:
        cells = " | ".join(f"{x:.3f}" for x in lat)
        print(f"| {label} | {cells} | {lat[-1] / lat[0]:.2f} | {after:.3f} |")


if __name__ == "__main__":
    main()
