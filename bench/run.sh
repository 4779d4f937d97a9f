#!/usr/bin/env bash
# Benchmarks pgsem side by side with the seed articles' plain SQL and with the limits, in one
# invocation on a throwaway cluster with default durability. See bench/README.md.
#
#   bash bench/run.sh [--rounds R] [--seconds T] [--samples S] [--only locks|semaphores|waits|declarations|rates|stats]
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PGDATABASE=bench
psql -X -q -c "CREATE DATABASE bench" -d postgres
psql -X -q -v ON_ERROR_STOP=1 -f "$PGSEM_ROOT/bench/sql/setup.sql"
build_bench_driver
redis_start
/usr/bin/python3 "$PGSEM_ROOT/bench/run.py" --pgbench "$PG_BINDIR/pgbench" \
    --driver "$BENCH_DRIVER" --redis-port "$REDIS_PORT" "$@"
