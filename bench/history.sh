#!/usr/bin/env bash
# Runs bench/history.py (a million claim+release pairs per retention setting, table size
# recorded every 100,000) on a throwaway cluster with default settings, autovacuum included.
#   bash bench/history.sh [--pairs N] [retention ...]      e.g. bash bench/history.sh 30s 1d
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
/usr/bin/python3 "$PGSEM_ROOT/bench/history.py" --pgbench "$PG_BINDIR/pgbench" \
    --script "$PGSEM_ROOT/bench/sql/pgsem_pair.sql" "$@"
