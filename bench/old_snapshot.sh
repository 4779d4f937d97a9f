#!/usr/bin/env bash
# Claim latency while another session holds an old snapshot (bench/old_snapshot.py), pgsem next
# to the seed article's SQL and the INSERT+UPDATE floor, on a throwaway cluster.
#   bash bench/old_snapshot.sh [--pairs N] [--batches B]
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PGDATABASE=bench
psql -X -q -c "CREATE DATABASE bench" -d postgres
psql -X -q -v ON_ERROR_STOP=1 -f "$PGSEM_ROOT/bench/sql/setup.sql"
/usr/bin/python3 "$PGSEM_ROOT/bench/old_snapshot.py" --pgbench "$PG_BINDIR/pgbench" "$@"
