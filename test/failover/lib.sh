# A pg_auto_failover formation on loopback for the failover test (sourced, not run): a monitor and
# two Postgres nodes, each run by its own `pg_autoctl run` as the unprivileged server user, every
# file under one scratch directory. Needs scripts/lib/common.sh and scripts/lib/cluster.sh.
#
# pg_autoctl keeps its configuration and state under XDG_CONFIG_HOME and XDG_DATA_HOME (default:
# the home directory, which the server user lacks), and puts its Unix sockets where
# PG_REGRESS_SOCK_DIR says (default: /var/run/postgresql, which that user cannot write): both
# point into the scratch directory, so nothing outside it is touched and removing it removes all.

AFO_PGCTL=$("$PG_CONFIG" --bindir)/pg_ctl
AFO_PORT_node1=
AFO_PORT_node2=

# afo_init: makes the scratch directory and picks the three ports.
afo_init() {
    ensure_pg_user
    AFO_DIR=$(mktemp -d /tmp/afo-failover.XXXXXX) || return 1
    chmod 755 "$AFO_DIR"
    mkdir -p "$AFO_DIR/sock" "$AFO_DIR/xdg" "$AFO_DIR/logs"
    [ "$(id -u)" -eq 0 ] && chown -R "$PGSEM_OS_USER" "$AFO_DIR"
    # free_port only probes: draws are repeated until the three differ.
    AFO_MONITOR_PORT=$(free_port) && AFO_PORT_node1=$(free_port) && AFO_PORT_node2=$(free_port) ||
        return 1
    while [ "$AFO_PORT_node1" = "$AFO_MONITOR_PORT" ] || [ "$AFO_PORT_node2" = "$AFO_MONITOR_PORT" ] ||
          [ "$AFO_PORT_node1" = "$AFO_PORT_node2" ]; do
        AFO_PORT_node1=$(free_port) && AFO_PORT_node2=$(free_port) || return 1
    done
    AFO_MONITOR_URI="postgres://autoctl_node@127.0.0.1:$AFO_MONITOR_PORT/pg_auto_failover?sslmode=disable"
    AFO_SESSIONS=()
}

afo_port() { local v="AFO_PORT_$1"; echo "${!v}"; }

# afo_command ARGS...: sets AFO_CMD to pg_autoctl ARGS run as the server user in a clean
# environment. Its PATH holds no pg_ctl (root's PATH may hold directories that user cannot read,
# which pg_autoctl's search for pg_ctl fails on): every command that needs one is given --pgctl.
afo_command() {
    AFO_CMD=()
    [ "$(id -u)" -eq 0 ] && AFO_CMD=(runuser -u "$PGSEM_OS_USER" --)
    AFO_CMD+=(env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$AFO_DIR"
              XDG_CONFIG_HOME="$AFO_DIR/xdg/config" XDG_DATA_HOME="$AFO_DIR/xdg/data"
              XDG_RUNTIME_DIR="$AFO_DIR/xdg/run" PG_REGRESS_SOCK_DIR="$AFO_DIR/sock"
              PGHOST="$AFO_DIR/sock" PG_CONFIG="$PG_CONFIG" pg_autoctl "$@")
}

# The server user may not enter the caller's directory (a clone under /root).
afo_autoctl() {
    afo_command "$@"
    (cd / && "${AFO_CMD[@]}")
}

# Settings every node gets after pg_autoctl's own (postgresql.conf includes pg_auto_failover's
# file first, so these win): its tuning sizes shared_buffers to a quarter of the machine's
# memory, three times over on a shared test machine.
afo_small_server() {
    printf '%s\n' "shared_buffers = '32MB'" "max_connections = 100" \
        "max_prepared_transactions = 10" >>"$1/postgresql.conf"
}

# afo_create_monitor: the monitor, with health checks tuned to notice a node gone in a few
# seconds instead of twenty (node_considered_unhealthy_timeout and the checks behind it).
afo_create_monitor() {
    afo_autoctl create monitor --pgctl "$AFO_PGCTL" --pgdata "$AFO_DIR/monitor" \
        --pgport "$AFO_MONITOR_PORT" --hostname 127.0.0.1 --auth trust --no-ssl \
        >"$AFO_DIR/logs/monitor-create.log" 2>&1 || return 1
    # The monitor has no --listen: it would listen on every address.
    afo_autoctl config set --pgdata "$AFO_DIR/monitor" postgresql.listen_addresses 127.0.0.1 \
        >/dev/null || return 1
    afo_small_server "$AFO_DIR/monitor"
    printf '%s\n' "pgautofailover.health_check_period = 1000" \
        "pgautofailover.health_check_timeout = 1000" \
        "pgautofailover.health_check_retry_delay = 500" \
        "pgautofailover.health_check_max_retries = 1" \
        "pgautofailover.node_considered_unhealthy_timeout = 4000" \
        "pgautofailover.startup_grace_period = 2000" >>"$AFO_DIR/monitor/postgresql.conf"
    afo_run monitor
}

# afo_create_node NAME: registers a node with the monitor (the first becomes the primary, the
# next its standby, copied from it by pg_basebackup) and leaves it stopped.
afo_create_node() {
    local name=$1
    afo_autoctl create postgres --pgctl "$AFO_PGCTL" --pgdata "$AFO_DIR/$name" \
        --pgport "$(afo_port "$name")" --hostname 127.0.0.1 --listen 127.0.0.1 --name "$name" \
        --monitor "$AFO_MONITOR_URI" --auth trust --no-ssl \
        >"$AFO_DIR/logs/$name-create.log" 2>&1 || return 1
    # A standby's postgresql.conf is the primary's copy, with these lines already.
    grep -q "^shared_buffers = '32MB'" "$AFO_DIR/$name/postgresql.conf" ||
        afo_small_server "$AFO_DIR/$name"
}

# afo_run NAME: `pg_autoctl run` in a session of its own, so that the keeper, its services and
# the Postgres it starts can all be killed as one process group (its id in NAME.pgid).
afo_run() {
    local name=$1
    rm -f "$AFO_DIR/$name.pgid"
    afo_command run --pgdata "$AFO_DIR/$name"
    # shellcheck disable=SC2016  # $$ and $@ are the inner shell's
    (cd / && exec setsid bash -c 'echo $$ >"$0"; exec "$@"' "$AFO_DIR/$name.pgid" "${AFO_CMD[@]}") \
        >>"$AFO_DIR/logs/$name.log" 2>&1 &
    local _
    for _ in $(seq 100); do [ -s "$AFO_DIR/$name.pgid" ] && break; sleep 0.1; done
    AFO_SESSIONS+=("$(cat "$AFO_DIR/$name.pgid")")
}

# afo_stop NAME [--immediate]: stops the node's keeper and its Postgres (fast shutdown, or
# immediate: a crash as far as the data is concerned), and waits until its processes are gone.
afo_stop() {
    local name=$1 mode=${2:-} pgid
    afo_autoctl stop --pgdata "$AFO_DIR/$name" ${mode:+"$mode"} >/dev/null 2>&1
    pgid=$(cat "$AFO_DIR/$name.pgid" 2>/dev/null) || return 0
    local _
    for _ in $(seq 300); do
        kill -0 -- "-$pgid" 2>/dev/null || return 0
        sleep 0.2
    done
    kill -KILL -- "-$pgid" 2>/dev/null
    return 0
}

# afo_cleanup: ends every process the formation started (stop, then SIGKILL to each session
# started here, then an immediate stop of any Postgres left) and removes the scratch directory.
afo_cleanup() {
    [ -n "${AFO_DIR:-}" ] && [ -d "$AFO_DIR" ] || return 0
    local name pgid
    for name in node1 node2 monitor; do
        [ -d "$AFO_DIR/$name" ] && afo_autoctl stop --pgdata "$AFO_DIR/$name" --immediate \
            >/dev/null 2>&1
    done
    sleep 1
    for pgid in "${AFO_SESSIONS[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null; done
    for name in node1 node2 monitor; do
        [ -f "$AFO_DIR/$name/postmaster.pid" ] &&
            as_pg_user "$AFO_PGCTL" -D "$AFO_DIR/$name" -m immediate stop >/dev/null 2>&1
    done
    rm -rf "$AFO_DIR"
    AFO_DIR=
}

# afo_sql NODE|PORT SQL...: runs SQL on a node as the superuser, unaligned, stopping at an error.
afo_sql() {
    local port=$1
    shift
    case "$port" in node*) port=$(afo_port "$port") ;; esac
    local args=()
    local s
    for s in "$@"; do args+=(-c "$s"); done
    psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$PGSEM_OS_USER" -d postgres \
        "${args[@]}"
}

afo_monitor_sql() {
    psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$AFO_MONITOR_PORT" -U autoctl_node \
        -d pg_auto_failover -c "$1"
}

# afo_states: "node1=reported/goal node2=reported/goal" as the monitor has them.
afo_states() {
    afo_monitor_sql "SELECT string_agg(nodename || '=' || reportedstate || '/' || goalstate, ' '
                       ORDER BY nodename) FROM pgautofailover.node" 2>/dev/null
}

# afo_wait_states WANT [SECONDS]: waits until afo_states is WANT; false if it never is. The limit
# only stops a hang: it is generous, and a slow machine only takes longer.
afo_wait_states() {
    local want=$1 limit=${2:-300} start=$SECONDS
    while [ $((SECONDS - start)) -lt "$limit" ]; do
        [ "$(afo_states)" = "$want" ] && return 0
        sleep 0.5
    done
    echo "   the monitor has '$(afo_states)', not '$want', after ${limit}s"
    return 1
}

# afo_primary: the node the monitor has as primary (reported and assigned).
afo_primary() {
    afo_monitor_sql "SELECT nodename FROM pgautofailover.node
                      WHERE reportedstate = 'primary' AND goalstate = 'primary'"
}

# A conninfo naming both nodes, as an application's would: libpq tries them in turn and keeps
# the one that accepts writes.
afo_conninfo() {
    echo "host=127.0.0.1,127.0.0.1 port=$AFO_PORT_node1,$AFO_PORT_node2 user=$PGSEM_OS_USER" \
         "dbname=postgres target_session_attrs=read-write connect_timeout=5"
}
