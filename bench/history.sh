#!/usr/bin/env bash
# Runs bench/history.py (a million claim+release pairs per retention setting, table size
# recorded every 100,000) on a throwaway cluster with default settings, autovacuum included.
#   bash bench/history.sh [--pairs N] [retention ...]      e.g. bash bench/history.sh 30s 1d
set -euo pipefail
PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
install_packages "${BUILD_PACKAGES[@]}" python3 python3-psycopg2
# shellcheck source=../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
build_and_install
cluster_start
/usr/bin/python3 "$PGSEM_ROOT/bench/history.py" --pgbench "$PG_BINDIR/pgbench" \
    --script "$PGSEM_ROOT/bench/sql/pgsem_pair.sql" "$@"
