#!/usr/bin/env bash
# bench/redis: events/s that cdc-redis writes into Redis, in each mode,
# against redis-benchmark's pipelined XADD and HSET on the same server, in
# one run.
#
#   bench/redis/run.sh [--bin build/tools] [--json bench/results/redis.json]
#                      [--events 300000] [--batch 1000] [--runs 3]
#
# One Redis (scripts/redis.sh, unix socket, persistence off so neither side
# waits for the disk) serves every measure. The log holds --events inserts
# into one table, 10 per transaction, each row with 4 columns (about 170
# bytes of event). cdc-redis applies the whole log (the time from start to
# exit, including connecting and reading the log) in stream mode (one XADD
# of 8 fields per event) and in hash mode (one HSET of 4 fields per event
# plus one SADD per table per batch), each batch one MULTI/EXEC with the
# applied seq. redis-benchmark -P 64 runs XADD (1 field, as its own
# examples do, and again with the 8 fields of one of our entries) and HSET
# (4 fields) with one client. The median of --runs is
# reported for each. Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/redis.json
EVENTS=300000
BATCH=1000
RUNS=3
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
source "$ROOT/scripts/redis.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-redis.XXXXXX")
trap 'redis_stop; rm -rf "$T"' EXIT
redis_start "$T" --appendonly no

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

now() { date +%s.%N; }
median() { python3 -c "import sys, statistics; print(int(statistics.median(map(int, sys.argv[1:]))))" "$@"; }
sink_rate() {  # sink_rate MODE -> events/s (median of RUNS)
  local rates=() s e r
  for i in $(seq "$RUNS"); do
    rcli flushall >/dev/null
    s=$(now)
    cdc-redis --log "$T/log" -c "b$i$1" --redis "$REDIS_URL" --mode "$1" --batch "$BATCH" -q
    e=$(now)
    [ "$(rcli get "cdc:__cdc_applied:b$i$1")" = "$EVENTS" ] || { echo "run.sh: $1 run incomplete" >&2; exit 1; }
    rates+=("$(python3 -c "print(int($EVENTS / ($e - $s)))")")
  done
  median "${rates[@]}"
}
bench_rate() {  # bench_rate ARGS... -> requests/s (median of RUNS)
  local rates=() r
  for i in $(seq "$RUNS"); do
    rcli flushall >/dev/null
    r=$(redis-benchmark -s "$REDIS_SOCK" -P 64 -c 1 -n "$EVENTS" -r 1000000 -q "$@" |
      tr '\r' '\n' | grep -oE '[0-9.]+ requests per second' | tail -1 | cut -d. -f1)
    rates+=("$r")
  done
  median "${rates[@]}"
}

stream=$(sink_rate stream)
hash=$(sink_rate hash)
xadd=$(bench_rate XADD bench:s '*' f v)
# The same command with the fields and sizes of one of our entries.
xadd8=$(bench_rate XADD bench:s8 '*' lsn 0/1634F28 xid 750 ts 2026-11-29T07:41:02.123456Z \
  op c key '{"id":7}' before null after '{"id":7,"status":"paid","total":"12.50","note":"order note 7"}')
hset=$(bench_rate HSET 'bench:h:__rand_int__' id 1 status paid total 1.50 note 'order note 1')

ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
printf '%-44s %12s\n' "measure ($EVENTS events, batch $BATCH)" "per second"
printf '%-44s %12s\n' "cdc-redis --mode stream (events)" "$stream"
printf '%-44s %12s\n' "redis-benchmark -P 64 XADD" "$xadd"
printf '%-44s %12s\n' "  ratio" "$(ratio "$stream" "$xadd")"
printf '%-44s %12s\n' "redis-benchmark -P 64 XADD (8 fields, ours)" "$xadd8"
printf '%-44s %12s\n' "  ratio" "$(ratio "$stream" "$xadd8")"
printf '%-44s %12s\n' "cdc-redis --mode hash (events)" "$hash"
printf '%-44s %12s\n' "redis-benchmark -P 64 HSET (4 fields)" "$hset"
printf '%-44s %12s\n' "  ratio" "$(ratio "$hash" "$hset")"
mkdir -p "$(dirname "$JSON")"
cat > "$JSON" <<J
{"events":$EVENTS,"batch":$BATCH,"runs":$RUNS,"host_cpus":$(nproc),
 "redis":"$(redis-server --version | awk '{print $3}' | cut -d= -f2)",
 "cdc_redis_stream_events_per_s":$stream,"redis_benchmark_xadd_per_s":$xadd,
 "stream_ratio":$(ratio "$stream" "$xadd"),
 "redis_benchmark_xadd_8_fields_per_s":$xadd8,"stream_ratio_8_fields":$(ratio "$stream" "$xadd8"),
 "cdc_redis_hash_events_per_s":$hash,"redis_benchmark_hset_per_s":$hset,
 "hash_ratio":$(ratio "$hash" "$hset")}
J
echo "wrote $JSON"
