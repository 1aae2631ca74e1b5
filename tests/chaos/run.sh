#!/usr/bin/env bash
# The chaos harness: the whole toolkit under a random workload while
# processes and servers die, then an oracle.
#
#   BIN=build/tools tests/chaos/run.sh [--seconds 240] [--seed N]
#                                      [--pace F] [--backup-every S]
#                                      [--self-test]
#
# The long mode for releases: --seconds 1000 --pace 0.25 --backup-every 20
# (actions four times as often, a backup at most every 20 s so that the
# oracle's restores stay linear in the run's length).
#
# Running, each restarted by a supervisor loop (as systemd would) whenever
# it exits: cdc-capture, cdc-redis in hash and in stream mode, cdc-nats
# into an R3 stream of a 3-node JetStream cluster, and a consumer pipeline
# cdc-tail -c pipe -f | handler | cdc-ack -c pipe. The workload
# (workload.py) reconnects when PostgreSQL goes away. Every 0.2-1.2 s
# (times --pace) the harness does one of: SIGKILL or SIGTERM capture,
# SIGKILL a sink or the pipeline, restart PostgreSQL (fast or immediate), SIGKILL and restart
# Redis, SIGKILL a NATS node and restart it later, take an incremental
# backup, or take one and then apply retention (only as far as every
# consumer has acked: retention does not wait for consumers, so the
# harness does). At the end, with everything caught up, oracle.py checks
# the log (the backups' events and the retained ones) against what the
# workload committed and against a test_decoding slot on the same server,
# replays it against the tables, and checks the Redis mirror and streams,
# the NATS stream, the pipeline's handled events and every backup. It
# prints the figures; events lost or duplicated in the log or a sink must
# be 0 (the pipeline is at-least-once: its repeats are counted, not
# failed). --self-test first runs the oracle on copies of what it reads,
# each with one planted fault (an event lost or changed, a transaction
# missing, a table row, a repeat or gap in NATS, an event the pipeline
# missed, a transaction only the WAL has), and fails unless it names each.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SECS=240
SEED=$RANDOM
PACE=1
BACKUP_EVERY=0
SELF_TEST=0
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --pace) PACE=$2; shift 2 ;;
    --backup-every) BACKUP_EVERY=$2; shift 2 ;;
    --self-test) SELF_TEST=1; shift ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
[[ $SECS =~ ^[0-9]+$ && $SEED =~ ^[0-9]+$ && $BACKUP_EVERY =~ ^[0-9]+$ &&
   $PACE =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "run.sh: bad flag value" >&2; exit 64; }
CDC_TEST_KIND=chaos
# The NATS stream keeps every event of the run on each node, and a node
# restarted late in a long run rebuilds its store and catches up.
export NATS_MAX_FILE_STORE=${NATS_MAX_FILE_STORE:-24G}
export NATS_START_TIMEOUT=${NATS_START_TIMEOUT:-120}
source "$ROOT/tests/common.sh"
source "$ROOT/scripts/pg.sh"
source "$ROOT/scripts/redis.sh"
source "$ROOT/scripts/nats.sh"
PROBE="$BIN/../bench/cdc-nats-probe"
echo "chaos: seed $SEED, $SECS s, pace $PACE"
RANDOM=$SEED
stop_all() {
  touch "$T/stop" "$T/stop-workload"
  pkill -TERM -f "$T/log" 2>/dev/null || true
  sleep 0.5
  pkill -KILL -f "$T/log" 2>/dev/null || true
  nats_stop; redis_stop; pg_stop
}
at_exit stop_all
pg_start "$T"
redis_start "$T"
NATS_NO_TRAP=1 nats_start "$T"
L="$T/log"
psql_q <<'SQL'
CREATE TABLE a (id int PRIMARY KEY, v int, note text);
CREATE TABLE b (id int PRIMARY KEY, v int, note text);
CREATE TABLE c (id int PRIMARY KEY, v int, note text);
CREATE TABLE wl (n int PRIMARY KEY, xid bigint);
SQL
# sup NAME CMD...: runs CMD again whenever it ends, until $T/stop.
SUPS=()
sup() {
  local name=$1; shift
  (
    while [ ! -e "$T/stop" ]; do
      local rc=0
      "$@" >> "$T/$name.out" 2>> "$T/$name.err" || rc=$?
      echo "$rc" >> "$T/$name.rc"
      [ -e "$T/stop" ] || sleep 0.2
    done
  ) 2> /dev/null &
  SUPS+=($!)
}
# The first capture process of a new log creates its slot, records its
# source and streams; it must live through restarts of PostgreSQL before
# the random kills begin (a reconnect once checked the source as read at
# start, before this process recorded it, and exited 78).
sup capture cdc-capture --log "$L" --dsn "$CDC_TEST_DSN" --table a,b,c \
  --segment-size 256k --commit-delay 5 --reconnect-max 120 -q
for _ in $(seq 300); do
  [ "$(psql_q -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'cdc'")" = 1 ] && break
  sleep 0.1
done
first=$(pgrep -f "^cdc-capture --log $L") || fail "capture did not start: $(cat "$T/capture.err")"
chaos_marker() {  # waits until capture has written this message
  psql_q -c "SELECT pg_logical_emit_message(true, 'chaos', '$1')" > /dev/null
  for _ in $(seq 600); do
    cdc-tail --log "$L" --op m 2>/dev/null | grep -q "\"content\":\"$1\"" && return 0
    sleep 0.1
  done
  fail "capture did not write marker $1: $(cat "$T/capture.err")"
}
chaos_marker started
for mode in fast immediate; do
  pg_restart "$mode"
  chaos_marker "after-$mode"
done
[ "$(pgrep -f "^cdc-capture --log $L")" = "$first" ] ||
  fail "the first capture process did not live through the restarts: $(cat "$T/capture.rc" "$T/capture.err")"
echo "chaos: the first capture process lived through a fast and an immediate restart"
# A peer oracle on the same server: what PostgreSQL decodes, in commit order.
psql_q -c "SELECT 1 FROM pg_create_logical_replication_slot('oracle', 'test_decoding')" >/dev/null
"$PROBE" "$NATS_URLS" req '$JS.API.STREAM.CREATE.CHAOS' \
  '{"name":"CHAOS","subjects":["chaos.>"],"storage":"file","num_replicas":3,"duplicate_window":120000000000}' >/dev/null
sup rhash cdc-redis --log "$L" -c rhash --redis "$REDIS_URL" --mode hash -f \
  --reconnect-max 120 -q
sup rstream cdc-redis --log "$L" -c rstream --redis "$REDIS_URL" --mode stream \
  --prefix 'chaos:' -f --reconnect-max 120 -q
sup nats cdc-nats --log "$L" -c nats --server "$NATS_URLS" --stream CHAOS \
  --subject 'chaos.{schema}.{table}' -f --reconnect-max 120 -q
pipeline() {
  cdc-tail --log "$L" -c pipe -f |
    python3 -u -c '
import json, sys
out = open(sys.argv[1], "a")
for line in sys.stdin:
    out.write("%d\n" % json.loads(line)["seq"])
    out.flush()
    sys.stdout.write(line)
    sys.stdout.flush()' "$T/handled" |
    cdc-ack --log "$L" -c pipe
}
sup pipe pipeline

# The workload, in batches of 50 lines, each run until psql gets through it
# (a batch cut by a restart of PostgreSQL is run again).
# Enough lines that the workload runs for the whole run (about 230
# transactions a second here).
python3 "$HERE/workload.py" 1 $((SECS > 400 ? SECS * 500 : 200000)) "$SEED" > "$T/work.sql"
split -l 50 -d -a 5 "$T/work.sql" "$T/batch."
(
  for f in "$T"/batch.*; do
    [ -e "$T/stop-workload" ] && break
    until psql -X -q -v ON_ERROR_STOP=0 -f "$f" > /dev/null 2>> "$T/work.err"; do
      [ -e "$T/stop" ] && exit 0
      sleep 0.2
    done
  done
) &
work=$!

declare -A did=()
count() { did[$1]=$(( ${did[$1]:-0} + 1 )); }
killall9() { pkill -KILL -f "$1" 2>/dev/null && count "$2" || true; }
acked_min() {
  cdc-log consumers --log "$L" --json 2>/dev/null | python3 -c '
import json, sys
acks = [json.loads(l)["acked_seq"] for l in sys.stdin]
print(min(acks) if len(acks) == 4 else 0)'
}
retain() {
  # As far as every consumer has acked and the newest backup holds: the
  # sealed segments below both.
  local min keep end
  min=$(acked_min)
  end=$(python3 -c "
import glob, json
m = sorted(glob.glob('$T/backups/cdc-backup-*/manifest.json'))
print(json.load(open(m[-1]))['end_seq'] - 1 if m else 0)")
  [ "$end" -lt "$min" ] && min=$end
  keep=$(cdc-log segments --log "$L" --json | python3 -c "
import json, sys
segs = [json.loads(l) for l in sys.stdin]
gone = 0
for s in segs[:-1]:
    if not s.get('sealed') or s['last_seq'] > $min:
        break
    gone += 1
# Segments sealed between this listing and the retention run would make
# --retain-segments reach further: keep a margin.
print(len(segs) - gone + 4)")
  cdc-log retain --log "$L" --retain-segments "$keep" > /dev/null && count retain
}
last_backup=-1000000
backup() {
  [ $((SECONDS - last_backup)) -ge "$BACKUP_EVERY" ] || return 1
  cdc-backup create --log "$L" --out-dir "$T/backups" --incremental latest -q 2>> "$T/backup.err" &&
    count backup && last_backup=$SECONDS
}
mkdir -p "$T/backups"
down_node=0
end=$((SECONDS + SECS))
while [ $SECONDS -lt $end ]; do
  sleep "$(awk -v r=$RANDOM -v p="$PACE" 'BEGIN { printf "%.3f", p * (0.2 + (r % 100) / 100) }')"
  case $((RANDOM % 20)) in
    0 | 1 | 2) killall9 "cdc-capture --log $L" kill_capture ;;
    3) pkill -TERM -f "cdc-capture --log $L" 2>/dev/null && count term_capture || true ;;
    4 | 5) killall9 "cdc-redis --log $L -c rhash" kill_redis_hash ;;
    6) killall9 "cdc-redis --log $L -c rstream" kill_redis_stream ;;
    7 | 8) killall9 "cdc-nats --log $L" kill_nats_sink ;;
    9) pkill -KILL -f "cdc-tail --log $L -c pipe" 2>/dev/null && count kill_pipeline_reader || true ;;
    10) pkill -KILL -f "cdc-(tail|ack) --log $L -c pipe" 2>/dev/null && count kill_pipeline || true ;;
    11) pg_restart && count pg_restart_fast || true ;;
    12) _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/pg" -l "$PG_DIR/pg.log" -w -m immediate restart > /dev/null &&
          count pg_restart_immediate || true ;;
    13) redis_kill; redis_start_server && count redis_restart ;;
    14)
      if [ "$down_node" = 0 ]; then
        down_node=$((RANDOM % 3 + 1)); nats_kill "$down_node"; count nats_node_kill
      else
        nats_restart "$down_node"; down_node=0
      fi ;;
    15 | 16) backup || true ;;
    17) backup && retain ;;
    *) ;;
  esac
done
[ "$down_node" = 0 ] || nats_restart "$down_node"
touch "$T/stop-workload"
wait "$work" || true
psql_q -c "SELECT pg_logical_emit_message(true, 'chaos', 'end')" > /dev/null
# Caught up: every consumer acked the last event, the stream holds it.
# The log's end is read only once the 'end' message is in it (nothing is
# written after it): read before, it can be short of events still coming,
# which the consumers then ack past.
last=0 min=-1
for _ in $(seq 1200); do
  if cdc-tail --log "$L" --op m | grep -q '"content":"end"'; then
    last=$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
    min=$(acked_min)
    [ "$min" = "$last" ] && break
  fi
  sleep 0.1
done
[ "$min" = "$last" ] || {
  cdc-log consumers --log "$L"; tail -n 3 "$T"/*.err
  fail "the consumers did not catch up (the log ends at seq $last, the least acked is $min; -1: no 'end' message in the log)"; }
BACKUP_EVERY=0 backup
touch "$T/stop"
pkill -TERM -f "$T/log" 2>/dev/null || true
wait "${SUPS[@]}" 2>/dev/null || true
# Killed (137), stopped (0), killed by SIGTERM before it could catch it
# (143), or gave up on an unavailable server (69): a capture that exits for
# any other reason is a defect the supervisor would hide.
! grep -qvE '^(0|69|137|143)$' "$T/capture.rc" ||
  fail "capture exited with $(grep -vE '^(0|69|137|143)$' "$T/capture.rc" | sort -u | tr '\n' ' '): $(grep -v retrying "$T/capture.err" | tail -3)"

# What the oracle reads.
O="$T/oracle"
mkdir -p "$O"
cdc-log verify --log "$L" -q || fail "the log does not verify"
cdc-tail --log "$L" --schema-changes > "$O/live.ndjson"
n=0
for b in "$T"/backups/cdc-backup-*; do
  n=$((n + 1))
  cdc-backup verify "$b" -q || fail "backup $b does not verify"
  cdc-backup restore "$b" --log "$O/restored.$n" -q || fail "backup $b does not restore"
  cdc-log verify --log "$O/restored.$n" -q || fail "restored $b does not verify"
  cdc-tail --log "$O/restored.$n" --schema-changes > "$O/backup.$n.ndjson"
  rm -rf "$O/restored.$n"
done
psql_q -F $'\t' -c "SELECT n, xid FROM wl" > "$O/wl.tsv"
for t in a b c; do psql_q -F $'\t' -c "SELECT id, v, note FROM $t" > "$O/$t.tsv"; done
psql_q -v FETCH_COUNT=20000 -c "SELECT data FROM pg_logical_slot_get_changes('oracle', NULL, NULL, 'include-xids', '1', 'skip-empty-xacts', '1')" \
  > "$O/test_decoding.txt"
"$PROBE" "$NATS_URLS" dump CHAOS > "$O/nats.txt"
cp "$T/handled" "$O/handled.txt"
printf '%s\n' "${!did[@]}" | while read -r k; do echo "$k ${did[$k]}"; done > "$O/actions.txt"
oracle() { python3 "$HERE/oracle.py" "$1" "$REDIS_SOCK" "$ROOT/tests/e2e"; }
if [ "$SELF_TEST" = 1 ]; then
  # planted NAME SHELL: the oracle must name a problem in a copy of what it
  # reads, changed by SHELL (run in the copy).
  planted() {
    rm -rf "$T/planted" && cp -r "$O" "$T/planted"
    (cd "$T/planted" && eval "$2")
    ! oracle "$T/planted" > "$T/planted.out" 2>&1 || fail "self-test: the oracle missed $1"
    grep -q "^PROBLEM" "$T/planted.out" || fail "self-test: $1: $(tail -2 "$T/planted.out")"
    echo "self-test: $1: $(grep -m1 "^PROBLEM" "$T/planted.out")"
  }
  newest=$(ls "$O" | grep '^backup\.[0-9]*\.ndjson$' | sort -t. -k2 -n | tail -1)
  planted "an event lost" "sed -i '5000d' live.ndjson"
  planted "an event changed in one copy" \
    "sed -i '\$s/\"ts\":\"[^\"]*\"/\"ts\":\"1999-01-01T00:00:00.000000Z\"/' $newest"
  planted "a committed transaction not captured" "echo '999999999 4000000000' >> wl.tsv"
  planted "a table row the log does not make" "printf '999999\t1\tplanted\n' >> a.tsv"
  planted "an event twice in NATS" "sed -i '5000p' nats.txt"
  planted "an event lost in NATS" "sed -i '5000d' nats.txt"
  planted "an event the pipeline never handled" "grep -vx 5000 handled.txt > h; mv h handled.txt"
  planted "a transaction only the WAL has" \
    "printf 'BEGIN 4000000001\ntable public.a: INSERT: id[integer]:1\nCOMMIT 4000000001\n' >> test_decoding.txt"
  rm -rf "$T/planted"
fi
oracle "$O" || fail "the oracle found a difference (seed $SEED)"
