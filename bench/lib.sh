# Shared by bench/run.sh and bench/history.sh (sourced): packages, build, a throwaway cluster
# with default settings, PG* variables exported.
PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
install_packages "${BUILD_PACKAGES[@]}" python3 python3-psycopg2
# shellcheck source=../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
build_and_install
say "starting a throwaway cluster (default settings but max_connections)"
cluster_start
