# Throwaway 3-node NATS JetStream cluster for tests and benchmarks. Source it:
#   source scripts/nats.sh; nats_start "$dir"; ...; nats_stop
# Starts nats-server three times on free loopback ports, each node with its
# own JetStream store directory ($dir/nats/nN) and routes to the other two,
# and waits until the cluster has elected a meta leader (it can then create
# replicated streams). nats_start installs `trap nats_stop EXIT` unless
# NATS_NO_TRAP=1 (a caller with its own EXIT trap calls nats_stop there).
# Extra arguments are lines added to every node's configuration (e.g.
# 'jetstream: {max_file_store: 1G}' is already there; 'authorization {...}').
#
# NATS_MAX_FILE_STORE (default 2G) is each node's JetStream file store
# limit; NATS_START_TIMEOUT (default 30 s) how long a node may take to
# report healthy (a restarted node catching up a large stream takes longer).
#
# NATS_LISTEN (default 127.0.0.1) is the address clients connect to;
# routes and monitoring stay on loopback.
#
# Exports NATS_URLS (nats://127.0.0.1:P1,...,P3) and NATS_URL (node 1).
# Helpers:
#   nats_kill N        SIGKILL node N (1-3)
#   nats_restart N     start node N again with its store; waits until it serves
#   nats_monitor N P   the JSON of the node's monitoring endpoint P (jsz, ...)
#   nats_stream_leader STREAM   the server name (n1-n3) leading STREAM
#   nats_meta_leader   the server name of the meta leader
NATS_SERVER=${NATS_SERVER:-nats-server}

_nats_free_ports() {  # _nats_free_ports N: N distinct free loopback TCP ports
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

nats_start() {
  local dir=$1; shift
  NATS_DIR="$dir/nats"
  mkdir -p "$NATS_DIR"
  local ports
  read -r -a ports <<<"$(_nats_free_ports 9)"
  NATS_PORTS=("${ports[@]:0:3}")
  NATS_CPORTS=("${ports[@]:3:3}")
  NATS_MPORTS=("${ports[@]:6:3}")
  NATS_PIDS=("" "" "")
  local i j routes
  for i in 0 1 2; do
    routes=""
    for j in 0 1 2; do
      [ "$i" = "$j" ] && continue
      routes+="    nats-route://127.0.0.1:${NATS_CPORTS[$j]}"$'\n'
    done
    mkdir -p "$NATS_DIR/n$((i + 1))"
    {
      echo "server_name: n$((i + 1))"
      echo "listen: ${NATS_LISTEN:-127.0.0.1}:${NATS_PORTS[$i]}"
      echo "http: 127.0.0.1:${NATS_MPORTS[$i]}"
      echo "jetstream {"
      echo "  store_dir: \"$NATS_DIR/n$((i + 1))\""
      echo "  max_memory_store: 64M"
      echo "  max_file_store: ${NATS_MAX_FILE_STORE:-2G}"
      echo "}"
      echo "cluster {"
      echo "  name: cdc"
      echo "  listen: 127.0.0.1:${NATS_CPORTS[$i]}"
      echo "  routes: ["
      printf '%s' "$routes"
      echo "  ]"
      echo "}"
      for extra in "$@"; do echo "$extra"; done
    } > "$NATS_DIR/n$((i + 1)).conf"
  done
  local h=${NATS_LISTEN:-127.0.0.1}
  NATS_URLS="nats://$h:${NATS_PORTS[0]},nats://$h:${NATS_PORTS[1]},nats://$h:${NATS_PORTS[2]}"
  NATS_URL="nats://$h:${NATS_PORTS[0]}"
  export NATS_URLS NATS_URL
  [ "${NATS_NO_TRAP:-0}" = 1 ] || trap nats_stop EXIT
  for i in 1 2 3; do _nats_spawn "$i"; done
  for i in 1 2 3; do _nats_wait_up "$i" || return 1; done
  nats_wait_meta_leader || return 1
}

_nats_spawn() {
  "$NATS_SERVER" -c "$NATS_DIR/n$1.conf" >>"$NATS_DIR/n$1.log" 2>&1 &
  NATS_PIDS[$(($1 - 1))]=$!
}

nats_monitor() {  # nats_monitor N PATH
  curl -sf --max-time 2 "http://127.0.0.1:${NATS_MPORTS[$(($1 - 1))]}/$2"
}

_nats_wait_up() {
  local pid=${NATS_PIDS[$(($1 - 1))]}
  local until=$((SECONDS + ${NATS_START_TIMEOUT:-30}))
  while [ $SECONDS -le $until ]; do
    nats_monitor "$1" healthz >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$NATS_DIR/n$1.log" >&2
  echo "nats.sh: node n$1 did not start" >&2
  return 1
}

# The meta leader's name as node N (default: any running node) sees it.
nats_meta_leader() {
  local i
  for i in ${1:-1 2 3}; do
    [ -n "${NATS_PIDS[$((i - 1))]}" ] || continue
    nats_monitor "$i" jsz 2>/dev/null | python3 -c '
import json, sys
l = json.load(sys.stdin).get("meta_cluster", {}).get("leader", "")
print(l); sys.exit(0 if l else 1)' 2>/dev/null && return 0
  done
  return 1
}

# Waits (up to 30 s) until every running node knows the meta leader.
nats_wait_meta_leader() {
  local i ok
  for _ in $(seq 300); do
    ok=1
    for i in 1 2 3; do
      [ -n "${NATS_PIDS[$((i - 1))]}" ] || continue
      nats_meta_leader "$i" >/dev/null || ok=0
    done
    [ "$ok" = 1 ] && return 0
    sleep 0.1
  done
  echo "nats.sh: the cluster elected no meta leader" >&2
  return 1
}

# The server name (n1-n3) leading STREAM, as the running nodes report it.
nats_stream_leader() {
  local i
  for i in 1 2 3; do
    [ -n "${NATS_PIDS[$((i - 1))]}" ] || continue
    nats_monitor "$i" "jsz?streams=true" 2>/dev/null | python3 -c '
import json, sys
for a in json.load(sys.stdin).get("account_details") or []:
    for s in a.get("stream_detail") or []:
        if s["name"] == sys.argv[1] and (s.get("cluster") or {}).get("leader"):
            print(s["cluster"]["leader"]); sys.exit(0)
sys.exit(1)' "$1" 2>/dev/null && return 0
  done
  return 1
}

nats_kill() {  # nats_kill N: SIGKILL node N
  local pid=${NATS_PIDS[$(($1 - 1))]}
  [ -n "$pid" ] || return 0
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  NATS_PIDS[$(($1 - 1))]=""
}

nats_restart() {  # nats_restart N: start node N again on its store
  nats_kill "$1"
  _nats_spawn "$1"
  _nats_wait_up "$1"
}

nats_stop() {
  local i
  for i in 1 2 3; do nats_kill "$i"; done
}
