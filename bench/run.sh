#!/usr/bin/env bash
# Benchmarks pgsem side by side with the seed articles' plain SQL and with the limits, in one
# invocation on a throwaway cluster with default durability. See bench/README.md.
#
#   bash bench/run.sh [--rounds R] [--seconds T] [--only locks|semaphores]
set -euo pipefail
PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
install_packages "${BUILD_PACKAGES[@]}" python3 python3-psycopg2
# shellcheck source=../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
build_and_install
say "starting a throwaway cluster (default settings but max_connections)"
cluster_start
export PGDATABASE=bench
psql -X -q -c "CREATE DATABASE bench" -d postgres
psql -X -q -v ON_ERROR_STOP=1 -f "$PGSEM_ROOT/bench/sql/setup.sql"
/usr/bin/python3 "$PGSEM_ROOT/bench/run.py" --pgbench "$PG_BINDIR/pgbench" "$@"
