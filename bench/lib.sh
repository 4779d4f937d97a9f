# Shared by bench/run.sh and bench/history.sh (sourced): packages, build, a throwaway cluster
# with default settings, PG* variables exported.
PGSEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/common.sh
source "$PGSEM_ROOT/scripts/lib/common.sh"
install_packages "${BUILD_PACKAGES[@]}" python3 python3-psycopg2 python3-matplotlib libpq-dev libhiredis-dev \
    redis-server
# shellcheck source=../scripts/lib/cluster.sh
source "$PGSEM_ROOT/scripts/lib/cluster.sh"
build_and_install
# PGSEM_BENCH_SETTINGS="fsync=off synchronous_commit=off": extra settings, for a CPU-bound run
# whose ratios the disk's noise does not hide (the default measures what users run).
read -r -a bench_settings <<<"${PGSEM_BENCH_SETTINGS:-}"
say "starting a throwaway cluster (default settings but max_connections${PGSEM_BENCH_SETTINGS:+; $PGSEM_BENCH_SETTINGS})"
cluster_start "${bench_settings[@]}"

# The driver for what pgbench cannot measure (bench/driver): transaction claims, the Redis fair
# semaphore, hand-off latencies, idle waiters.
BENCH_DRIVER="$PGSEM_ROOT/build/bench/pgsem_bench_driver"
build_bench_driver() {
    say "building the benchmark driver"
    mkdir -p "$(dirname "$BENCH_DRIVER")"
    g++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$("$PG_CONFIG" --includedir)" \
        "$PGSEM_ROOT"/bench/driver/*.cpp -lpq -lhiredis -pthread -o "$BENCH_DRIVER" ||
        die "the benchmark driver did not build"
}

# Redis on a free loopback port, no persistence, removed at exit with the cluster.
redis_start() {
    REDIS_DIR=$(mktemp -d /tmp/pgsem-redis.XXXXXX)
    REDIS_PORT=$(free_port) || die "no free port for Redis"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$REDIS_DIR" --daemonize yes --pidfile "$REDIS_DIR/redis.pid" \
        --logfile "$REDIS_DIR/redis.log" || die "redis-server did not start"
    local _
    for _ in $(seq 1 50); do
        redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 || die "redis-server does not answer"
    trap 'redis_stop; cluster_stop' EXIT
}

redis_stop() {
    [ -n "${REDIS_PORT:-}" ] && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1
    [ -n "${REDIS_DIR:-}" ] && rm -rf "$REDIS_DIR"
    REDIS_PORT=
}
