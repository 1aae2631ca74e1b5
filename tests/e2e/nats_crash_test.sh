#!/usr/bin/env bash
# cdc-nats exactly once under failures, against a real 3-node JetStream
# cluster and an R3 stream whose duplicate window is 1 s (so most resumes
# come after it has passed and only the stream's last message and the
# expected-last-sequence check stand between a replay and a duplicate):
#  - the log grows while the sink follows it and is SIGKILLed at random
#    moments at least 20 times and restarted (some restarts only after the
#    duplicate window has passed); its --batch of 3 splits each
#    transaction of 5, so kills land between the pieces of one too;
#  - the stream's leader node is SIGKILLed mid-run and restarted later; the
#    sink, left running, reconnects by itself;
#  - with 2 of 3 nodes down the sink stores nothing, acks nothing beyond
#    what the stream holds, and exits 69 after --reconnect-max;
# then the stream holds every seq exactly once, in order, and the consumer
# is acked to the end. NATS_FULL=1: 100,000 events instead of 10,000.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/nats.sh"
NATS_NO_TRAP=1 nats_start "$T"
at_exit nats_stop
L="$T/log"
PROBE="$BIN/../bench/cdc-nats-probe"  # a test client (bench/nats/probe.cpp)
P() { "$PROBE" "$NATS_URLS" "$@"; }
acked() { cdc-log consumers --log "$L" --json | python3 -c "
import json, sys
for l in sys.stdin:
    c = json.loads(l)
    if c['name'] == 'k': print(c['acked_seq'])"; }
check_stream() {  # check_stream N: seqs 1..N once each, in order
  P dump CRASH > "$T/dump"
  python3 - "$T/dump" "$1" <<'PY' || fail "the stream does not hold seqs 1..$1 once each, in order"
import sys
seqs = [int(l.split()[2]) for l in open(sys.argv[1])]
n = int(sys.argv[2])
if seqs != list(range(1, n + 1)):
    dup = len(seqs) - len(set(seqs))
    missing = sorted(set(range(1, n + 1)) - set(seqs))[:5]
    print("%d messages, %d duplicates, missing %s" % (len(seqs), dup, missing), file=sys.stderr)
    sys.exit(1)
PY
}

N=${NATS_FULL:+100000}
N=${N:-10000}
CHUNKS=30
gen_events 1 $((N / 5)) 5 > "$T/in.ndjson"
split -l $(((N / CHUNKS / 5 + 1) * 5)) -d -a 2 "$T/in.ndjson" "$T/chunk."  # whole transactions
chunks=("$T"/chunk.*)
cdc-log import --log "$L" -q < "${chunks[0]}"

pid=
start_sink() {
  cdc-nats --log "$L" -c k --server "$NATS_URLS" --stream CRASH --replicas 3 \
    --duplicate-window 1s --timeout 3 --reconnect-max 60 --max-in-flight 256 \
    --batch 3 -f -q 2>>"$T/sink.err" &
  pid=$!
}
check_alive() {
  local rc=0
  kill -0 "$pid" 2>/dev/null && return 0
  wait "$pid" || rc=$?
  cat "$T/sink.err" >&2; fail "the sink exited $rc on its own"
}
start_sink
RANDOM=7
kills=0 late=0 left=$((${#chunks[@]} - 1)) leader=
for ((i = 1; i < ${#chunks[@]}; i++)); do
  cdc-log import --log "$L" -q < "${chunks[$i]}" &
  importer=$!
  if [ "$i" = 8 ]; then
    leader=$(nats_stream_leader CRASH) || fail "no leader for CRASH"
    nats_kill "${leader#n}"                 # SIGKILL the stream's leader
  elif [ "$i" = 20 ]; then
    nats_restart "${leader#n}"
  fi
  sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
  check_alive
  # At least 20 kills: a coin toss until the rounds left are needed. The
  # node-down rounds keep the sink alive, to see it reconnect by itself.
  if { [ "$i" -lt 8 ] || [ "$i" -gt 12 ]; } &&
     { [ $((RANDOM % 3)) != 0 ] || [ $((20 - kills)) -ge "$left" ]; }; then
    kill -9 "$pid" && kills=$((kills + 1))
    wait "$pid" 2>/dev/null || true
    # Now and then wait out the duplicate window before resuming.
    if [ $((kills % 5)) = 0 ]; then sleep 1.2; late=$((late + 1)); fi
    start_sink
  fi
  wait "$importer" || fail "import of ${chunks[$i]} failed"
  left=$((left - 1))
done
[ "$kills" -ge 20 ] || fail "only $kills kills"
total=$(cdc-log info --log "$L" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['last_seq'])")
[ "$total" = "$N" ] || fail "the log holds $total events, not $N"
for ((w = 0; w < 600; w++)); do
  [ "$(acked)" = "$N" ] && break
  check_alive; sleep 0.1
done
[ "$(acked)" = "$N" ] || { cat "$T/sink.err" >&2; fail "the sink did not catch up: acked $(acked)"; }
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 0 ] || { cat "$T/sink.err" >&2; fail "the sink exited $rc on SIGTERM"; }
check_stream "$N"
ok "$N events, $kills SIGKILLs ($late after the duplicate window), leader $leader killed and restarted: each seq once, in order"

# 2 of 3 nodes down: nothing stored, nothing acked beyond the stream; 69.
gen_events $((N / 5 + 1)) 200 5 | cdc-log import --log "$L" -q
nats_wait_meta_leader
leader=$(nats_stream_leader CRASH) || fail "no leader for CRASH"
down=(${leader#n})
for n in 1 2 3; do [ "$n" != "$down" ] && { down+=("$n"); break; }; done
for n in "${down[@]}"; do nats_kill "$n"; done
before=$(acked)
rc=0
cdc-nats --log "$L" -c k --server "$NATS_URLS" --stream CRASH --timeout 2 \
  --reconnect-max 4 -q 2>"$T/down.err" || rc=$?
[ "$rc" = 69 ] || { cat "$T/down.err" >&2; fail "2 of 3 nodes down: exit $rc, not 69"; }
[ "$(acked)" = "$before" ] || fail "2 of 3 nodes down: acked moved from $before to $(acked)"
for n in "${down[@]}"; do nats_restart "$n"; done
nats_wait_meta_leader
cdc-nats --log "$L" -c k --server "$NATS_URLS" --stream CRASH --timeout 3 \
  --reconnect-max 30 -q || fail "after the nodes came back the sink failed"
[ "$(acked)" = $((N + 1000)) ] || fail "acked $(acked), not $((N + 1000))"
check_stream $((N + 1000))
ok "2 of 3 nodes down: exit 69, acked stays at $before; once back, each seq once"
