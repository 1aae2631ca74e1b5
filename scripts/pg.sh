# Throwaway PostgreSQL for tests, the demo and benchmarks. Source it:
#   source scripts/pg.sh; pg_start "$dir"; ...; pg_stop
# Starts a cluster in $dir/pg with wal_level=logical, listening on a unix
# socket in $dir/sock (and on 127.0.0.1:$PGPORT when PG_TCP=1). As root the
# server runs as the `postgres` user (PostgreSQL refuses to run as root).
# Exports PGHOST, PGPORT, PGUSER, PGDATABASE, CDC_TEST_DSN and PG_MAJOR (the
# server's major version).
#
# The server is Debian's PostgreSQL 15 unless PG_BIN names another bin
# directory (initdb, pg_ctl, postgres), e.g. PG_BIN=$(scripts/pg-fetch.sh 18).
# The clients (psql, pg_recvlogical) are Debian's 15 in PG_CLIENT_BIN for
# every server version.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_CLIENT_BIN=${PG_CLIENT_BIN:-/usr/lib/postgresql/15/bin}
# The major version of the server in $PG_BIN (15, 16, ...).
pg_bin_major() { "$PG_BIN/postgres" --version | awk '{print $3}' | cut -d. -f1; }

_pg_as() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  local dir=$1
  PG_DIR="$dir"
  PGPORT=${PGPORT:-$((20000 + RANDOM % 20000))}
  mkdir -p "$dir/pg" "$dir/sock"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
    chown postgres "$dir" "$dir/pg" "$dir/sock"
    chmod 755 "$dir"
  fi
  _pg_as "$PG_BIN/initdb" -D "$dir/pg" -U postgres -A trust --no-sync -E UTF8 \
    --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
  local listen="''"
  [ "${PG_TCP:-0}" = 1 ] && listen="'127.0.0.1'"
  cat >> "$dir/pg/postgresql.conf" <<CONF
listen_addresses = $listen
port = $PGPORT
unix_socket_directories = '$dir/sock'
wal_level = logical
max_wal_senders = 20
max_replication_slots = 20
fsync = on
synchronous_commit = on
shared_buffers = 256MB
max_wal_size = 4GB
logical_decoding_work_mem = 64MB
log_min_messages = warning
CONF
  _pg_as "$PG_BIN/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w -t 60 start >/dev/null ||
    { cat "$dir/pg.log"; return 1; }
  export PGHOST="$dir/sock" PGPORT PGUSER=postgres PGDATABASE=postgres
  export CDC_TEST_DSN="host=$dir/sock port=$PGPORT user=postgres dbname=postgres"
  PG_MAJOR=$(psql -X -At -c "SELECT current_setting('server_version_num')::int / 10000")
  export PG_MAJOR
}

# pg_restart [fast|immediate|smart]: fast by default.
pg_restart() { _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/pg" -l "$PG_DIR/pg.log" -w -m "${1:-fast}" restart >/dev/null; }
pg_stop_server() { _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/pg" -w -m fast stop >/dev/null 2>&1 || true; }
pg_start_server() { _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/pg" -l "$PG_DIR/pg.log" -w start >/dev/null; }

pg_stop() {
  [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/pg" ] || return 0
  _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/pg" -w -m immediate stop >/dev/null 2>&1 || true
}

psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
