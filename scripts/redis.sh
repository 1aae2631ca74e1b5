# Throwaway Redis 7 for tests and benchmarks. Source it:
#   source scripts/redis.sh; redis_start "$dir"; ...; redis_stop
# Starts redis-server with its data in $dir/redis, listening on a unix
# socket ($REDIS_SOCK) and, with REDIS_TCP=1, on 127.0.0.1:$REDIS_PORT.
# AOF with appendfsync always, so a SHUTDOWN NOSAVE or a kill -9 of the
# server loses nothing it acknowledged. Extra arguments go to redis-server
# (e.g. --requirepass x). Exports REDIS_SOCK, REDIS_PORT, REDIS_URL and
# REDIS_TCP_URL; rcli runs redis-cli against it.
REDIS_SERVER=${REDIS_SERVER:-redis-server}

redis_start() {
  local dir=$1; shift
  REDIS_DIR="$dir/redis"
  mkdir -p "$REDIS_DIR"
  REDIS_SOCK="$REDIS_DIR/redis.sock"
  REDIS_PORT=${REDIS_PORT:-$((40000 + RANDOM % 20000))}
  local port=0
  [ "${REDIS_TCP:-0}" = 1 ] && port=$REDIS_PORT
  REDIS_ARGS=(--port "$port" --bind 127.0.0.1 --unixsocket "$REDIS_SOCK"
    --unixsocketperm 700 --dir "$REDIS_DIR" --appendonly yes
    --appendfsync always --save '' --daemonize no --protected-mode no
    --maxmemory-policy noeviction --loglevel warning
    --logfile "$REDIS_DIR/redis.log" "$@")
  redis_start_server
  export REDIS_SOCK REDIS_PORT REDIS_URL="unix://$REDIS_SOCK"
  export REDIS_TCP_URL="redis://127.0.0.1:$REDIS_PORT/0"
}

# (Re)starts the server with the arguments redis_start was given; waits
# until it answers.
redis_start_server() {
  "$REDIS_SERVER" "${REDIS_ARGS[@]}" &
  REDIS_PID=$!
  for _ in $(seq 200); do
    [ -S "$REDIS_SOCK" ] && redis-cli -s "$REDIS_SOCK" ${REDISCLI_AUTH:+--no-auth-warning} \
      ping 2>/dev/null | grep -qE 'PONG|NOAUTH' && return 0
    kill -0 "$REDIS_PID" 2>/dev/null || break
    sleep 0.05
  done
  cat "$REDIS_DIR/redis.log" >&2
  echo "redis.sh: redis-server did not start" >&2
  return 1
}

# Stops the server at once (SIGKILL): what it acknowledged is in the AOF.
redis_kill() {
  [ -n "${REDIS_PID:-}" ] || return 0
  kill -9 "$REDIS_PID" 2>/dev/null || true
  wait "$REDIS_PID" 2>/dev/null || true
  REDIS_PID=
}

redis_stop() { redis_kill; }

rcli() { redis-cli -s "$REDIS_SOCK" --no-auth-warning "$@"; }
