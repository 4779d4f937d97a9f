#!/usr/bin/env bash
# Sets up pgsem on this machine and shows it working:
#   installs what it needs from Debian (via sudo unless root), builds and installs the
#   extension, starts a throwaway Postgres on loopback as an unprivileged user, creates the
#   extension and plays each seed article's use case (scripts/demo_scenarios.py): double
#   booking, a throttle, a bounded pool with a line, each record once with a fence, hosts with
#   skewed clocks. The cluster is removed at the end; with --keep it stays up and the script
#   prints how to connect.
set -euo pipefail

PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"

keep=no
[ "${1:-}" = "--keep" ] && keep=yes

install_packages "${BUILD_PACKAGES[@]}" python3 python3-psycopg2
# shellcheck source=lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
build_and_install

say "starting a throwaway Postgres on 127.0.0.1"
# Preloaded, so that sem_stats counts what the scenarios do.
cluster_start shared_preload_libraries=pgsem
echo "   port $PGPORT, data in $CLUSTER_DIR, server running as $(as_pg_user id -un)"
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE demo"
export PGDATABASE=demo
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pgsem"
psql -X -At -c "SELECT 'pgsem ' || extversion || ' installed in database demo' FROM pg_extension WHERE extname = 'pgsem'"

say "the seed scenarios"
# Debian's interpreter: python3-psycopg2 is installed for it, whatever else is on PATH.
/usr/bin/python3 "$PGSEM_ROOT/scripts/demo_scenarios.py"
status=$?

say "where to look"
echo "   What the scenarios did, name by name, from the counters (sem_stats: needs pgsem in"
echo "   shared_preload_libraries, as this cluster has):"
psql -X -P pager=off -c "SELECT name, granted, granted_after_wait AS after_wait, refused,
       timed_out, released, expired_permits AS expired, round(wait_max_seconds::numeric, 3)
       AS longest_wait_s, permits_in_use AS in_use, waiters
  FROM sem_stats ORDER BY name"
echo "   Who holds now: SELECT * FROM sem_holders;  who waits: SELECT * FROM sem_waiters;"
echo "   per semaphore: sem_summary;  claims kept as history: sem_history;  declarations,"
echo "   quotas, pauses, buckets: sem_declarations, sem_quotas, sem_pauses, sem_buckets."
echo "   Prometheus: monitoring/ (README, Operations)."

if [ "$keep" = yes ]; then
    trap - EXIT
    say "the cluster stays up"
    echo "   connect:  psql -h 127.0.0.1 -p $PGPORT -U postgres demo"
    echo "   stop:     $(command -v runuser >/dev/null && [ "$(id -u)" -eq 0 ] && echo "runuser -u $PGSEM_OS_USER -- ")$PG_BINDIR/pg_ctl -D $CLUSTER_DIR/data stop"
fi
exit $status
