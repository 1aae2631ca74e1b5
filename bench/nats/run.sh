#!/usr/bin/env bash
# bench/nats: events/s that cdc-nats publishes into an R1 and an R3
# JetStream stream on a 3-node cluster, against a plain asynchronous
# JetStream publish loop of the same payloads with the same client (nats.c
# js_PublishAsync, a Nats-Msg-Id each, the same number in flight), in one
# run.
#
#   bench/nats/run.sh [--bin build/tools] [--json bench/results/nats.json]
#                     [--events 100000] [--in-flight 1024]
#
# The cluster is scripts/nats.sh's (3 nodes on loopback, file storage).
# The log holds --events inserts into one table, 10 per transaction (about
# 250 bytes per native event). cdc-nats publishes the whole log (the time
# from start to exit: connecting, reading the stream's end, reading the
# log, rendering, publishing, every answer, the final ack) into a fresh
# stream; the loop (build/bench/cdc-nats-probe loop) publishes the native lines
# cdc-tail prints for the same log into another fresh stream of the same
# replicas and waits for every answer. Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/nats.json
EVENTS=100000
INFLIGHT=1024
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --in-flight) INFLIGHT=$2; shift 2 ;;
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

now() { date +%s.%N; }
sink_rate() {  # sink_rate REPLICAS -> events/s
  local s e
  s=$(now)
  cdc-nats --log "$T/log" -c "b$1" --server "$NATS_URLS" --stream "SINK$1" \
    --subject "sink$1.{schema}.{table}" --replicas "$1" --max-in-flight "$INFLIGHT" -q
  e=$(now)
  local n
  n=$("$PROBE" "$NATS_URLS" req "\$JS.API.STREAM.INFO.SINK$1" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['state']['messages'])")
  [ "$n" = "$EVENTS" ] || { echo "run.sh: SINK$1 holds $n messages" >&2; exit 1; }
  python3 -c "print(int($EVENTS / ($e - $s)))"
}
loop_rate() {  # loop_rate REPLICAS -> events/s
  "$PROBE" "$NATS_URLS" req "\$JS.API.STREAM.CREATE.LOOP$1" \
    "{\"name\":\"LOOP$1\",\"subjects\":[\"loop$1.>\"],\"storage\":\"file\",\"num_replicas\":$1}" >/dev/null
  "$PROBE" "$NATS_URLS" loop "loop$1.public.orders" "$T/payloads" "$INFLIGHT" |
    awk '{print int($3)}'
}

r1=$(sink_rate 1); l1=$(loop_rate 1)
r3=$(sink_rate 3); l3=$(loop_rate 3)
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
printf '%-52s %12s\n' "measure ($EVENTS events, $INFLIGHT in flight)" "events/s"
printf '%-52s %12s\n' "cdc-nats into an R1 stream" "$r1"
printf '%-52s %12s\n' "js_PublishAsync loop into an R1 stream (limit)" "$l1"
printf '%-52s %12s\n' "  ratio" "$(ratio "$r1" "$l1")"
printf '%-52s %12s\n' "cdc-nats into an R3 stream" "$r3"
printf '%-52s %12s\n' "js_PublishAsync loop into an R3 stream (limit)" "$l3"
printf '%-52s %12s\n' "  ratio" "$(ratio "$r3" "$l3")"
mkdir -p "$(dirname "$JSON")"
cat > "$JSON" <<J
{"events":$EVENTS,"in_flight":$INFLIGHT,"host_cpus":$(nproc),
 "nats_server":"$(nats-server --version | awk '{print $2}')",
 "cdc_nats_r1_events_per_s":$r1,"loop_r1_events_per_s":$l1,"r1_ratio":$(ratio "$r1" "$l1"),
 "cdc_nats_r3_events_per_s":$r3,"loop_r3_events_per_s":$l3,"r3_ratio":$(ratio "$r3" "$l3")}
J
echo "wrote $JSON"
