# Throwaway MariaDB for tests and benchmarks. Source it:
#   source scripts/mariadb.sh; maria_start "$dir"; ...; maria_stop
# Starts Debian's mariadbd with a data directory in $dir/data, listening on
# 127.0.0.1:$MARIA_PORT and the unix socket $dir/sock, with what capture
# needs: log_bin, binlog_format=ROW, binlog_row_image=FULL,
# binlog_row_metadata=FULL, gtid_strict_mode and server_id
# $MARIA_SERVER_ID (default 1). Creates the database `shop` and the user
# cdc (password in $MARIA_PASSWORD) with REPLICATION SLAVE, BINLOG MONITOR
# and SELECT. Exports MARIA_DSN (mariadb://cdc@127.0.0.1:PORT/shop) and
# MYSQL_PWD for the cdc user; `maria_root` runs the client as root over
# the socket. Extra server options in MARIA_OPTS. Several servers may run
# at once: each call records its directory; maria_stop stops them all.
MARIA_PASSWORD=${MARIA_PASSWORD:-cdc-test-secret}
_maria_dirs=()

maria_start() {
  local dir=$1
  MARIA_DIR="$dir"
  MARIA_PORT=${MARIA_PORT_FOR_NEXT:-$((20000 + RANDOM % 20000))}
  unset MARIA_PORT_FOR_NEXT
  mkdir -p "$dir"
  local user
  user=$(id -un)
  mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" \
    --auth-root-authentication-method=normal --skip-test-db \
    >"$dir/install.log" 2>&1 || { cat "$dir/install.log"; return 1; }
  echo "$MARIA_PORT ${MARIA_SERVER_ID:-1} ${MARIA_OPTS:-}" > "$dir/args"
  _maria_dirs+=("$dir")
  _maria_launch "$dir" || return 1
  # A replica-to-be (MARIA_REPLICA=1) keeps this out of its binlog: it
  # receives the same statements from its primary.
  local nolog=""
  [ "${MARIA_REPLICA:-0}" = 1 ] && nolog="SET sql_log_bin = 0;"
  env -u MYSQL_PWD mariadb --no-defaults -S "$dir/sock" -uroot <<SQL
$nolog
CREATE DATABASE IF NOT EXISTS shop;
CREATE USER IF NOT EXISTS cdc@'%' IDENTIFIED BY '$MARIA_PASSWORD';
GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO cdc@'%';
SQL
  export MARIA_PORT MARIA_DIR
  export MARIA_DSN="mariadb://cdc@127.0.0.1:$MARIA_PORT/shop"
  export MYSQL_PWD="$MARIA_PASSWORD"
}

# Starts (or restarts) the server of directory $1 as maria_start set it up,
# and waits until it answers.
_maria_launch() {
  local dir=$1 port sid opts user i
  read -r port sid opts < "$dir/args"
  user=$(id -un)
  # shellcheck disable=SC2086
  mariadbd --no-defaults --datadir="$dir/data" --user="$user" \
    --port="$port" --bind-address=127.0.0.1 --socket="$dir/sock" \
    --pid-file="$dir/pid" --log-error="$dir/error.log" \
    --log-bin="$dir/data/binlog" --binlog-format=ROW --binlog-row-image=FULL \
    --binlog-row-metadata=FULL --server-id="$sid" \
    --gtid-strict-mode=1 --log-slave-updates=1 --innodb-flush-log-at-trx-commit=1 \
    --sync-binlog=1 --skip-name-resolve $opts >/dev/null 2>&1 &
  disown $! 2>/dev/null || true
  for i in $(seq 1 300); do
    env -u MYSQL_PWD mariadb --no-defaults -S "$dir/sock" -uroot -e "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$dir/error.log"
  return 1
}
maria_restart() { maria_shutdown "${1:-$MARIA_DIR}" "${2:-}"; _maria_launch "${1:-$MARIA_DIR}"; }

# maria_replicate DIR PRIMARY_PORT: makes the server in DIR (started with
# MARIA_REPLICA=1) a GTID replica of the primary on 127.0.0.1:PRIMARY_PORT,
# from the primary's first transaction.
maria_replicate() {
  env -u MYSQL_PWD mariadb --no-defaults -S "$1/sock" -uroot <<SQL
RESET MASTER;
SET GLOBAL gtid_slave_pos = '';
CHANGE MASTER TO master_host = '127.0.0.1', master_port = $2,
  master_user = 'cdc', master_password = '$MARIA_PASSWORD',
  master_use_gtid = slave_pos;
START SLAVE;
SQL
}

# The client as root over the socket of the last server started (or $1's
# directory in MARIA_AT).
maria_root() { env -u MYSQL_PWD mariadb --no-defaults --default-character-set=utf8mb4 -S "${MARIA_AT:-$MARIA_DIR}/sock" -uroot "$@"; }

# Stops the server in $1 (default: the last started) at once (SIGKILL with
# `kill`, else a clean shutdown), and starts it again with maria_restart.
maria_shutdown() {
  local dir=${1:-$MARIA_DIR}
  [ -f "$dir/pid" ] || return 0
  local pid
  pid=$(cat "$dir/pid")
  if [ "${2:-}" = kill ]; then kill -9 "$pid" 2>/dev/null || true; else kill "$pid" 2>/dev/null || true; fi
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  rm -f "$dir/pid"
}

maria_stop() {
  local d
  for d in "${_maria_dirs[@]}"; do maria_shutdown "$d" kill; done
}
