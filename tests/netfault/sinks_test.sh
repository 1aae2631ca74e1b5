#!/usr/bin/env bash
# cdc-redis, cdc-pg and cdc-nats across a network that fails without a
# word. Redis, the target PostgreSQL and a 3-node JetStream cluster listen
# on one end of a veth pair; the sinks run
# in a network namespace at the other and follow a log that capture (over
# PostgreSQL's unix socket, untouched) fills from a workload committing
# throughout.
#
# Short mode (CI): a 5 s blackhole (nothing to notice), 10% and 1% packet
# loss (and, where the kernel has sch_netem, 200 ms latency with 1% loss,
# then reordering and duplication), a 45 s blackhole past the sinks'
# liveness bounds (each must say its connection is dead within the bound
# its man page gives for the flags used here, keep running, and resume once
# the path heals), and a blackhole cut into a 50,000-row transaction as the
# sinks apply it. NETFAULT_LONG=1 adds a 5-minute blackhole. At the end the
# Redis hash mirror equals the state rebuilt from the log, every target
# table equals its source table, the stream holds every event of the log
# once, in order, and each consumer is acked to the log's end: nothing
# lost, nothing applied twice.
#
# Needs root (ip netns, nft); says so and stops otherwise.
source "$(dirname "$0")/../integration/lib.sh"
source "$HERE/wl.sh"
source "$HERE/../../scripts/redis.sh"
source "$HERE/../../scripts/nats.sh"
source "$(dirname "$0")/lib.sh"
LONG=${NETFAULT_LONG:-0}
MODEL="$HERE/../e2e/redis_model.py"

pg_start "$T"
wl_schema
psql_q -c "CREATE TABLE fat (id int PRIMARY KEY, pad text)"
psql_q -c "CREATE DATABASE tgt"
psql_q -d tgt -c "CREATE TABLE a (id int PRIMARY KEY, v int, note text);
  CREATE TABLE b (LIKE a INCLUDING ALL); CREATE TABLE c (LIKE a INCLUDING ALL);
  CREATE TABLE fat (id int PRIMARY KEY, pad text)"
psql_q -c "ALTER SYSTEM SET listen_addresses = '$SUB.1'" >/dev/null
printf 'host all all %s.0/30 trust\n' "$SUB" >> "$T/pg/pg_hba.conf"
pg_restart
TDSN="host=$SUB.1 port=$PGPORT user=postgres dbname=tgt"
REDIS_TCP=1 redis_start "$T" --bind "$SUB.1"
at_exit redis_stop
RURL="redis://$SUB.1:$REDIS_PORT/0"
NATS_NO_TRAP=1 NATS_LISTEN=$SUB.1 nats_start "$T"
at_exit nats_stop

cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --table a,b,c,fat 2>>"$T/capture.err" &
CAP=$!
at_exit "kill -9 $CAP 2>/dev/null"
wait_more "streaming from slot" "$T/capture.err" 60 0 || fail "capture did not start: $(cat "$T/capture.err")"
# The sinks' liveness bounds: cdc-redis and cdc-nats --timeout (a batch
# or a publish unanswered for that long is a failure); cdc-pg
# tcp_user_timeout (its default, cdc-pg(1)).
declare -A pid bound
ip netns exec "$NS" cdc-redis --log "$T/log" -c redis --redis "$RURL" --mode hash \
  --prefix h: --timeout 5s --reconnect-max 10m -f 2>>"$T/redis.err" &
pid[redis]=$!
bound[redis]=12
ip netns exec "$NS" cdc-pg --log "$T/log" -c pg --dsn "$TDSN" --reconnect-max 10m \
  -f 2>>"$T/pg.err" &
pid[pg]=$!
bound[pg]=40
ip netns exec "$NS" cdc-nats --log "$T/log" -c nats --server "$NATS_URLS" --stream NF \
  --replicas 3 --timeout 5s --reconnect-max 10m -f 2>>"$T/nats.err" &
pid[nats]=$!
bound[nats]=40
SINKS="redis pg nats"
at_exit "kill -9 ${pid[*]} 2>/dev/null"

# Workload batches until $T/stop exists.
workload() { wl_loop 100 0.2; }
workload &
WL=$!
at_exit "kill $WL"
# Every sink must stay up through every fault.
alive() {
  local s
  for s in $SINKS; do
    kill -0 "${pid[$s]}" 2>/dev/null || fail "$s exited $1: $(tail -3 "$T/$s.err")"
  done
}
acked() {  # acked CONSUMER: its cursor's seq
  cdc-log consumers --log "$T/log" --json | python3 -c "
import json, sys
for l in sys.stdin:
    c = json.loads(l)
    if c['name'] == sys.argv[1]: print(c['acked_seq'])" "$1"
}
last_seq() { cdc-log info --log "$T/log" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['last_seq'])"; }
# caught_up SECS: every consumer acked to the log's end as it is now.
caught_up() {
  local end i s behind
  end=$(last_seq)
  for i in $(seq $(($1 * 10))); do
    behind=0
    for s in $SINKS; do
      [ "$(acked $s)" -ge "$end" ] 2>/dev/null || behind=1
    done
    [ "$behind" = 0 ] && return 0
    sleep 0.1
  done
  return 1
}
where() { local s; for s in $SINKS; do printf '%s %s, ' "$s" "$(acked $s)"; done; echo "log $(last_seq)"; }
sleep 3
caught_up 30 || fail "the sinks do not follow: $(where)"

# 1. A short blackhole: nothing to notice, nothing lost.
blackhole
sleep 5
heal
alive "on a 5 s blackhole"
caught_up 60 || fail "no progress after a 5 s blackhole: $(where)"
ok "a 5 s blackhole: every sink carries on"

# 2. A lossy path.
loss 10
sleep 8
heal
loss 1
sleep 8
heal
what="10% and 1% packet loss"
if netem delay 200ms loss 1% 2>/dev/null; then
  sleep 10
  netem delay 10ms reorder 25% 50% duplicate 5%
  sleep 10
  heal
  what+=", 200 ms latency with 1% loss, reordering and duplication"
else
  heal
  echo "note: this kernel has no sch_netem: latency, reordering and duplication not tried"
fi
alive "on $what"
caught_up 60 || fail "no progress after $what: $(where)"
ok "$what: every sink carries on"

# 3. A blackhole past the liveness bounds: each sink says its connection
# is dead (or its requests failed) within its bound, and resumes once the
# path heals.
declare -A before noticed
for x in $SINKS; do before[$x]=$(count warning "$T/$x.err"); done
t0=$SECONDS
blackhole
seen=0
while [ $((SECONDS - t0)) -lt 60 ] && [ "$seen" -lt 3 ]; do
  for x in $SINKS; do
    if [ -z "${noticed[$x]:-}" ] && [ "$(count warning "$T/$x.err")" -gt "${before[$x]}" ]; then
      noticed[$x]=$((SECONDS - t0))
      seen=$((seen + 1))
    fi
  done
  sleep 0.2
done
sleep $((45 - (SECONDS - t0) > 0 ? 45 - (SECONDS - t0) : 0))
heal
said=""
for x in $SINKS; do
  [ -n "${noticed[$x]:-}" ] || fail "$x did not notice the blackhole: $(tail -3 "$T/$x.err")"
  [ "${noticed[$x]}" -le "${bound[$x]}" ] || fail "$x took ${noticed[$x]} s to notice (bound ${bound[$x]} s): $(grep warning "$T/$x.err" | tail -2)"
  said+="$x ${noticed[$x]} s, "
done
alive "on a 45 s blackhole"
caught_up 120 || fail "no progress after a 45 s blackhole: $(where)"
ok "a 45 s blackhole, noticed within the bounds (${said%, }): every sink resumed"

# 4. Cut as the sinks apply a 50,000-row transaction.
end=$(last_seq)
psql_q -c "INSERT INTO fat SELECT g, repeat('f', 200) FROM generate_series(1, 50000) g" >/dev/null
for _ in $(seq 300); do
  [ "$(last_seq)" -gt $((end + 49000)) ] && break
  sleep 0.05
done
sleep 0.3
blackhole
sleep 20
heal
alive "on a cut into a large transaction"
caught_up 180 || fail "no progress after a cut into a large transaction: $(where)"
ok "a 20 s blackhole as the sinks apply a 50,000-row transaction: every sink goes on"

if [ "$LONG" = 1 ]; then
  blackhole
  sleep 300
  heal
  alive "on a 5-minute blackhole"
  caught_up 300 || fail "no progress after 5 minutes of blackhole"
  ok "a 5-minute blackhole: every sink resumes afterwards"
fi

touch "$T/stop"
wait "$WL"
wait_marker netfault-done
caught_up 120 || fail "the sinks did not catch up: $(where)"
for s in $SINKS; do
  kill -TERM "${pid[$s]}"
  rc=0; wait "${pid[$s]}" || rc=$?
  [ "$rc" = 0 ] || fail "$s exited $rc on SIGTERM: $(tail -3 "$T/$s.err")"
done
cdc-tail --log "$T/log" --schema-changes > "$T/events"
python3 "$MODEL" check hash "$REDIS_SOCK" h: redis < "$T/events" > "$T/redis.check" ||
  fail "the Redis mirror differs from the log: $(cat "$T/redis.check")"
for t in a b c fat; do
  src=$(psql_q -c "SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY id), '')), count(*) FROM $t x")
  dst=$(psql_q -d tgt -c "SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY id), '')), count(*) FROM $t x")
  [ "$src" = "$dst" ] || fail "target table $t differs: $dst, source $src"
done
# The stream: each event of the log, schema events included, once, in
# order.
"$BIN/../bench/cdc-nats-probe" "$NATS_URLS" dump NF > "$T/dump"
cdc-tail --log "$T/log" --schema-changes | python3 -c 'import json,sys; [print(json.loads(l)["seq"]) for l in sys.stdin]' > "$T/want"
python3 - "$T/dump" "$T/want" <<'PY' > "$T/nats.check" || fail "the stream differs from the log: $(cat "$T/nats.check")"
import sys
got = [int(l.split()[2]) for l in open(sys.argv[1])]
want = [int(l) for l in open(sys.argv[2])]
if got != want:
    dup = len(got) - len(set(got))
    missing = sorted(set(want) - set(got))[:5]
    extra = sorted(set(got) - set(want))[:5]
    print("%d messages for %d events: %d twice, missing %s, extra %s" % (len(got), len(want), dup, missing, extra))
    sys.exit(1)
print("%d messages" % len(got))
PY
ok "the stream holds each event once, in order ($(cat "$T/nats.check")); the Redis mirror equals the log ($(cat "$T/redis.check")); every target table equals its source ($(wc -l < "$T/events") events)"
