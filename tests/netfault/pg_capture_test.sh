#!/usr/bin/env bash
# cdc-capture across a network that fails without a word. PostgreSQL
# listens on one end of a veth pair; capture runs in a network namespace
# at the other, so every packet between them crosses the pair, where tc
# netem drops them (a blackhole: no RST, no ICMP, nothing the kernel
# reports), delays, loses, reorders and duplicates them. A workload
# commits throughout (over PostgreSQL's unix socket, untouched).
#
# Short mode (CI): a 5 s blackhole, 200 ms latency with 1% loss, reorder
# and duplicate, a 40 s blackhole (past capture's liveness bound: it must
# say the connection is dead within 25 s, reconnect once the path heals,
# and go on), and a blackhole cut into a 100,000-row transaction as it
# streams. Blackholes and loss are nftables rules on the pair; latency,
# reordering and duplication need tc netem (sch_netem), tried where the
# kernel has it. NETFAULT_LONG=1 adds a 5-minute blackhole and one during the
# initial snapshot's COPY. At the end: every committed transaction in the
# log once, in order, the tables replayed exactly, and the slot never
# acknowledged past the log.
#
# Needs root (ip netns, nft); says so and stops otherwise.
source "$(dirname "$0")/../integration/lib.sh"
source "$HERE/wl.sh"
source "$(dirname "$0")/lib.sh"
LONG=${NETFAULT_LONG:-0}

pg_start "$T"
wl_schema
psql_q -c "CREATE TABLE fat (id int PRIMARY KEY, pad text)"
psql_q -c "INSERT INTO fat SELECT g, repeat('f', 200) FROM generate_series(1, 300000) g"

psql_q -c "ALTER SYSTEM SET listen_addresses = '$SUB.1'" >/dev/null
printf 'host all all %s.0/30 trust\nhost replication all %s.0/30 trust\n' "$SUB" "$SUB" >> "$T/pg/pg_hba.conf"
pg_restart
NDSN="host=$SUB.1 port=$PGPORT user=postgres dbname=postgres"

capture_start() {
  ip netns exec "$NS" cdc-capture --log "$T/log" --dsn "$NDSN" --table a,b,c,fat \
    --status-interval 1 --reconnect-max 10m 2>>"$T/capture.err" &
  CAP=$!
}
# wait_err PATTERN SECS [BEFORE]: see wait_more.
wait_err() { wait_more "$1" "$T/capture.err" "$2" "${3:-0}"; }
# Workload batches until $T/stop exists.
n=1
workload() { wl_loop 100 0.2; }

if [ "$LONG" = 1 ]; then
  # The initial snapshot's COPY cut by a blackhole: its connection is
  # found dead by TCP keepalives (about a minute), and the next attempt
  # takes the snapshot again.
  capture_start
  at_exit "kill -9 $CAP 2>/dev/null"
  wait_err "initial snapshot of" 30 || fail "no snapshot began: $(cat "$T/capture.err")"
  blackhole
  sleep 90
  heal
  wait_err "streaming from slot" 180 || fail "no stream after a snapshot blackhole: $(cat "$T/capture.err")"
  ok "a blackhole during the snapshot's COPY: capture gives up on it and takes the snapshot again"
else
  capture_start
  at_exit "kill -9 $CAP 2>/dev/null"
fi
wait_err "streaming from slot" 60 || fail "capture did not start: $(cat "$T/capture.err")"
rm -f "$T/stop"
workload &
WL=$!
at_exit "kill $WL"
sleep 2

# 1. A short blackhole: nothing to notice, nothing lost.
blackhole
sleep 5
heal
sleep 3
check_acked "after a 5 s blackhole"
kill -0 "$CAP" || fail "capture exited on a 5 s blackhole: $(tail -3 "$T/capture.err")"
ok "a 5 s blackhole: capture carries on"

# 2. A lossy path (10%, then 1%); where the kernel has netem, 200 ms
# latency with 1% loss, then reordering and duplication.
loss 10
sleep 10
heal
loss 1
sleep 10
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
check_acked "after $what"
kill -0 "$CAP" || fail "capture exited: $(tail -3 "$T/capture.err")"
ok "$what: capture carries on"

# 3. A blackhole past the liveness bound: noticed within 25 s, survived.
dead=$(grep -c "taken for dead" "$T/capture.err" || true)
streams=$(grep -c "streaming from slot" "$T/capture.err" || true)
t0=$SECONDS
blackhole
wait_err "taken for dead" 35 "$dead" || fail "a 40 s blackhole went unnoticed: $(tail -5 "$T/capture.err")"
noticed=$((SECONDS - t0))
[ "$noticed" -le 25 ] || fail "the dead connection was noticed after $noticed s"
sleep $((40 - noticed > 0 ? 40 - noticed : 0))
heal
wait_err "streaming from slot" 120 "$streams" || fail "no reconnect after the blackhole: $(tail -5 "$T/capture.err")"
check_acked "after a 40 s blackhole"
ok "a 40 s blackhole: the dead connection noticed in $noticed s, the stream resumed once the path healed"

# 4. Cut as a large transaction streams.
streams=$(grep -c "streaming from slot" "$T/capture.err" || true)
psql_q -c "BEGIN; INSERT INTO a SELECT g, g, 'big' FROM generate_series(1000, 100999) g ON CONFLICT (id) DO UPDATE SET v = 0; INSERT INTO wl VALUES (-1, txid_current()); COMMIT" >/dev/null
sleep 0.05
blackhole
sleep 30
heal
wait_err "streaming from slot" 120 "$streams" || true
check_acked "after a cut in a large transaction"
ok "a blackhole as a 100,000-row transaction streams: capture goes on"

if [ "$LONG" = 1 ]; then
  streams=$(grep -c "streaming from slot" "$T/capture.err" || true)
  blackhole
  sleep 300
  heal
  wait_err "streaming from slot" 180 "$streams" || fail "no reconnect after 5 minutes"
  ok "a 5-minute blackhole: capture reconnects afterwards"
fi

touch "$T/stop"
wait "$WL"
wait_marker netfault-done
kill -TERM "$CAP"
rc=0; wait "$CAP" || rc=$?
[ "$rc" = 0 ] || { tail -5 "$T/capture.err" >&2; fail "capture exited $rc on SIGTERM"; }
check_acked "at the end"
cdc-tail --log "$T/log" --schema-changes | python3 -c '
import json, sys
n = 0
for e in map(json.loads, sys.stdin):
    if e.get("table") in ("a", "b", "c"):
        n += 1
        e["seq"] = n
        print(json.dumps(e))' > "$T/events.ndjson"
psql_q -F $'\t' -c "SELECT n, xid FROM wl" > "$T/wl.tsv"
for t in a b c; do psql_q -F $'\t' -c "SELECT id, v, note FROM $t" > "$T/$t.tsv"; done
python3 "$HERE/check_workload.py" "$T/events.ndjson" "$T/wl.tsv" "$T/a.tsv" "$T/b.tsv" "$T/c.tsv" ||
  fail "the log differs from what committed"
ok "every committed transaction once, in order; the tables replayed exactly ($(wc -l < "$T/wl.tsv") transactions)"
