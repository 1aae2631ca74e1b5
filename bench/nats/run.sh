#!/usr/bin/env bash
# bench/nats: events/s that cdc-nats publishes into an R1 and an R3
# JetStream stream on a 3-node cluster, against a plain asynchronous
# JetStream publish loop of the same payloads with the same client (nats.c
# js_PublishAsync, a Nats-Msg-Id each, the same number in flight), in one
# run.
#
#   bench/nats/run.sh [--bin build/tools] [--json bench/results/nats.json]
#                     [--events 100000] [--in-flight 1024] [--runs 3]
#
# The cluster is scripts/nats.sh's (3 nodes on loopback, file storage).
# The log holds --events inserts into one table, 10 per transaction (about
# 250 bytes per native event). cdc-nats publishes the whole log (the time
# from start to exit: connecting, reading the stream's end, reading the
# log, rendering, publishing, every answer, the final ack) into a fresh
# stream, created just before as the loop's is; the loop (build/bench/cdc-nats-probe loop) publishes the native
# lines cdc-tail prints for the same log into another fresh stream of the
# same replicas and waits for every answer; a second loop sends the same
# messages as cdc-nats, with its headers (js_PublishMsgAsync), which shows
# what the headers cost the servers apart from what the sink costs. The
# three alternate --runs times for each replica count (the servers share
# the machine's cores with them, so one set is noise); the medians are
# compared. Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/nats.json
EVENTS=100000
INFLIGHT=1024
RUNS=3
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --in-flight) INFLIGHT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
PROBE=$BIN/../bench/cdc-nats-probe
source "$ROOT/scripts/nats.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-nats.XXXXXX")
NATS_NO_TRAP=1
trap 'nats_stop; rm -rf "$T"' EXIT
nats_start "$T"

python3 - "$EVENTS" > "$T/in.ndjson" <<'PY'
import sys
n = int(sys.argv[1])
w = sys.stdout.write
for i in range(n):
    t = i // 10 + 1
    w('{"lsn":"0/%X","xid":%d,"ts":"2026-11-29T07:41:02.123456Z","op":"c",'
      '"schema":"public","table":"orders","key":{"id":%d},"before":null,'
      '"after":{"id":%d,"status":"paid","total":"%d.50","note":"order note %d"}}\n'
      % (t * 256, t, i, i, i % 1000, i))
PY
cdc-log import --log "$T/log" -q < "$T/in.ndjson"
cdc-tail --log "$T/log" > "$T/payloads"
LOG_ID=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["log_id"])')

now() { date +%s.%N; }
# create_stream NAME SUBJECT_PREFIX REPLICAS: a fresh file stream, made the
# same way for the sink and the loops, before either's clock starts (a
# replicated stream takes a few hundred ms to create, once).
create_stream() {
  "$PROBE" "$NATS_URLS" req "\$JS.API.STREAM.CREATE.$1" \
    "{\"name\":\"$1\",\"subjects\":[\"$2.>\"],\"storage\":\"file\",\"num_replicas\":$3}" >/dev/null
}
sink_rate() {  # sink_rate REPLICAS RUN -> events/s
  local s e name="SINK$1x$2"
  create_stream "$name" "sink$1x$2" "$1"
  s=$(now)
  cdc-nats --log "$T/log" -c "b$1x$2" --server "$NATS_URLS" --stream "$name" \
    --subject "sink$1x$2.{schema}.{table}" --max-in-flight "$INFLIGHT" -q
  e=$(now)
  local n
  n=$("$PROBE" "$NATS_URLS" req "\$JS.API.STREAM.INFO.$name" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['state']['messages'])")
  [ "$n" = "$EVENTS" ] || { echo "run.sh: $name holds $n messages" >&2; exit 1; }
  "$PROBE" "$NATS_URLS" req "\$JS.API.STREAM.DELETE.$name" >/dev/null
  python3 -c "print(int($EVENTS / ($e - $s)))"
}
loop_rate() {  # loop_rate REPLICAS RUN [headers] -> events/s
  local name="LOOP$1x$2${3:+H}" hdr=()
  create_stream "$name" "loop$1x$2${3:+h}" "$1"
  if [ -n "${3:-}" ]; then
    headers "$name" > "$T/headers"
    hdr=("$T/headers")
  fi
  "$PROBE" "$NATS_URLS" loop "loop$1x$2${3:+h}.public.orders" "$T/payloads" "$INFLIGHT" "${hdr[@]}" |
    awk '{print int($3)}'
  "$PROBE" "$NATS_URLS" req "\$JS.API.STREAM.DELETE.$name" >/dev/null
}
# headers STREAM: for each event the headers cdc-nats gives its message
# (cdc-nats(1)), one line each, for the loop that sends the same messages.
headers() {
  python3 - "$T/payloads" "$LOG_ID" "$1" <<'PY'
import json, sys
log_id, stream = sys.argv[2], sys.argv[3]
w = sys.stdout.write
for line in open(sys.argv[1]):
    e = json.loads(line)
    h = [f"Nats-Msg-Id: {log_id}:{e['seq']}", f"Nats-Expected-Stream: {stream}",
         f"Cdc-Seq: {e['seq']}", f"Cdc-Lsn: {e['lsn']}",
         f"Cdc-Xid: {e['xid']}", f"Cdc-Op: {e['op']}",
         f"Cdc-Table: {e['schema']}.{e['table']}"]
    if e.get("last"):
        h.append("Cdc-Last: true")
    w("\t".join(h) + "\n")
PY
}
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
measure() {  # measure REPLICAS -> "SINK_MEDIAN LOOP_MEDIAN LOOP_HEADERS_MEDIAN"
  local sinks=() loops=() hloops=() i
  for i in $(seq "$RUNS"); do
    sinks+=("$(sink_rate "$1" "$i")")
    loops+=("$(loop_rate "$1" "$i")")
    hloops+=("$(loop_rate "$1" "$i" headers)")
    echo "  R$1 run $i: cdc-nats ${sinks[-1]}, loop ${loops[-1]}, loop with cdc-nats's headers ${hloops[-1]} events/s" >&2
  done
  echo "$(median "${sinks[@]}") $(median "${loops[@]}") $(median "${hloops[@]}")"
}

read -r r1 l1 h1 <<<"$(measure 1)"
read -r r3 l3 h3 <<<"$(measure 3)"
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
row() { printf '%-58s %12s\n' "$@"; }
row "median of $RUNS ($EVENTS events, $INFLIGHT in flight)" "events/s"
for r in 1 3; do
  s=r$r l=l$r h=h$r
  row "cdc-nats into an R$r stream" "${!s}"
  row "js_PublishAsync loop, Nats-Msg-Id only (limit)" "${!l}"
  row "  ratio" "$(ratio "${!s}" "${!l}")"
  row "js_PublishMsgAsync loop, cdc-nats's headers" "${!h}"
  row "  ratio" "$(ratio "${!s}" "${!h}")"
done
mkdir -p "$(dirname "$JSON")"
cat > "$JSON" <<J
{"events":$EVENTS,"in_flight":$INFLIGHT,"runs":$RUNS,"host_cpus":$(nproc),
 "nats_server":"$(nats-server --version | awk '{print $2}')",
 "cdc_nats_r1_events_per_s":$r1,"loop_r1_events_per_s":$l1,"r1_ratio":$(ratio "$r1" "$l1"),
 "loop_headers_r1_events_per_s":$h1,"r1_headers_ratio":$(ratio "$r1" "$h1"),
 "cdc_nats_r3_events_per_s":$r3,"loop_r3_events_per_s":$l3,"r3_ratio":$(ratio "$r3" "$l3"),
 "loop_headers_r3_events_per_s":$h3,"r3_headers_ratio":$(ratio "$r3" "$h3")}
J
echo "wrote $JSON"
