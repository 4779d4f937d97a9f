# A throwaway Postgres cluster on loopback, owned by an unprivileged user (sourced, not run).
# cluster_start exports PGHOST, PGPORT, PGUSER and PGDATABASE for every client that follows;
# cluster_stop removes everything it made.

PG_BINDIR=$("$PG_CONFIG" --bindir)

# A loopback TCP port nobody listens on.
# A port nobody listens on, below the ephemeral range (Linux: 32768 up): a port of that range can
# be the local end of some outgoing connection, which a probe does not see and a bind trips on.
free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$((20000 + RANDOM % 12000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# cluster_start [extra postgres -c settings...]; CLUSTER_TEMPLATE names the directory (mktemp).
cluster_start() {
    ensure_pg_user
    CLUSTER_DIR=$(mktemp -d "${CLUSTER_TEMPLATE:-/tmp/pgsem-cluster.XXXXXX}")
    chmod 755 "$CLUSTER_DIR"
    [ "$(id -u)" -eq 0 ] && chown "$PGSEM_OS_USER" "$CLUSTER_DIR"
    PGPORT=$(free_port) || die "no free port"
    as_pg_user "$PG_BINDIR/initdb" -D "$CLUSTER_DIR/data" -U postgres --auth=trust --no-sync \
        -E UTF8 --locale=C.UTF-8 >"$CLUSTER_DIR/initdb.log" 2>&1 ||
        { cat "$CLUSTER_DIR/initdb.log"; die "initdb failed"; }
    local opts="-c listen_addresses=127.0.0.1 -c port=$PGPORT -c unix_socket_directories=$CLUSTER_DIR"
    opts+=" -c max_connections=200 -c fsync=on -c max_prepared_transactions=20"
    local s
    for s in "$@"; do opts+=" -c $s"; done
    as_pg_user "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -w \
        -o "$opts" start >/dev/null || { cat "$CLUSTER_DIR/server.log"; die "server did not start"; }
    export PGHOST=127.0.0.1 PGPORT PGUSER=postgres PGDATABASE=postgres
    trap cluster_stop EXIT
}

cluster_stop() {
    [ -n "${CLUSTER_DIR:-}" ] && [ -d "$CLUSTER_DIR" ] || return 0
    as_pg_user "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$CLUSTER_DIR"
    CLUSTER_DIR=
}
