#!/usr/bin/env bash
# cdc-capture reading a MariaDB binlog across a network that fails without
# a word (see lib.sh): the server listens on this end of a veth pair,
# capture runs in a network namespace at the other, and a random workload
# commits throughout over the server's unix socket. A 5 s blackhole, 10%
# and 1% packet loss, then a 40 s blackhole: capture must call the
# connection dead within 15 s (it asks for a heartbeat every second and
# gives up after 9 s of silence), skip the KILL of its dump thread that a
# dead server cannot answer, reconnect once the path heals, and go on. At
# the end every row change of shop the binlog holds is in the log once, in
# commit order (mariadb-binlog decodes the peer's copy).
source "$(dirname "$0")/../integration/maria_lib.sh"
source "$(dirname "$0")/lib.sh"

MARIA_OPTS="--bind-address=0.0.0.0" maria_start "$T/m"
NDSN="mariadb://cdc@$SUB.1:$MARIA_PORT/shop"
ip netns exec "$NS" cdc-capture --log "$T/log" --dsn "$NDSN" --reconnect-max 10m \
  2>>"$T/capture.err" &
CAP=$!
at_exit "kill -9 $CAP 2>/dev/null"
wait_more "streaming the binlog" "$T/capture.err" 60 0 || fail "capture did not start: $(cat "$T/capture.err")"
python3 "$HERE/maria_workload.py" "$MARIA_DIR/sock" 1000000 11 > "$T/workload.out" 2>&1 &
WL=$!
at_exit "kill $WL"
sleep 2

blackhole
sleep 5
heal
sleep 3
kill -0 "$CAP" || fail "capture exited on a 5 s blackhole: $(tail -3 "$T/capture.err")"
ok "a 5 s blackhole: capture carries on"

loss 10
sleep 10
heal
loss 1
sleep 10
heal
kill -0 "$CAP" || fail "capture exited under packet loss: $(tail -3 "$T/capture.err")"
ok "10% and 1% packet loss: capture carries on"

warned=$(count "warning" "$T/capture.err")
streams=$(count "streaming the binlog" "$T/capture.err")
t0=$SECONDS
blackhole
wait_more "warning" "$T/capture.err" 40 "$warned" || { cat "$T/capture.err" >&2; fail "a 40 s blackhole went unnoticed"; }
noticed=$((SECONDS - t0))
[ "$noticed" -le 15 ] || { cat "$T/capture.err" >&2; fail "the dead connection was noticed after $noticed s"; }
sleep $((40 - noticed))
heal
wait_more "streaming the binlog" "$T/capture.err" 120 "$streams" || fail "no reconnect: $(tail -5 "$T/capture.err")"
ok "a 40 s blackhole: noticed in $noticed s ($(grep warning "$T/capture.err" | sed -n "$((warned + 1))p" | cut -c1-110)...), the stream resumed once the path healed"

kill "$WL"; wait "$WL" 2>/dev/null || true
g=$(msql -e "SELECT @@gtid_binlog_pos")
cdc-log wait --log "$T/log" --gtid "$g" --timeout 120s || fail "capture did not catch up to $g"
kill -TERM "$CAP"
rc=0; wait "$CAP" || rc=$?
[ "$rc" = 0 ] || { tail -5 "$T/capture.err" >&2; fail "capture exited $rc on SIGTERM"; }
binlog_rows > "$T/peer"
log_rows > "$T/ours"
[ -s "$T/peer" ] || fail "the binlog holds no row change of shop"
diff "$T/peer" "$T/ours" > "$T/diff" || { head -20 "$T/diff" >&2; fail "log and binlog differ"; }
ok "$(wc -l < "$T/peer") row changes: each once, in commit order (mariadb-binlog agrees)"
