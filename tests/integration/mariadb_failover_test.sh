#!/usr/bin/env bash
# Failover: capture follows a primary; the primary dies (SIGKILL); its GTID
# replica is promoted and capture, pointed at it, resumes from the GTID in
# the log with no gap and no duplicate. The oracle is the new primary's
# binlog, which holds the old primary's transactions under the same GTIDs.
source "$(dirname "$0")/maria_lib.sh"
TXNS=${TXNS:-600}

MARIA_SERVER_ID=1 maria_start "$T/m1"
P1=$MARIA_PORT DSN1=$MARIA_DSN
MARIA_SERVER_ID=2 MARIA_REPLICA=1 maria_start "$T/m2"
P2=$MARIA_PORT DSN2=$MARIA_DSN
maria_replicate "$T/m2" "$P1"
MARIA_AT="$T/m1" msql -e "SELECT 1" >/dev/null

cdc-capture --log "$T/log" --dsn "$DSN1" -q --exit-when-idle 2>/dev/null
python3 "$HERE/maria_workload.py" "$T/m1/sock" "$TXNS" 11 > "$T/wl1" 2>&1 &
WL=$!
for i in 1 2 3; do
  cdc-capture --log "$T/log" --dsn "$DSN1" -q 2>>"$T/capture.err" &
  CAP=$!
  sleep 0.7
  kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
done
wait "$WL" || fail "workload on the primary: $(cat "$T/wl1")"
cdc-capture --log "$T/log" --dsn "$DSN1" -q 2>>"$T/capture.err" &
CAP=$!
sleep 1
# The replica has everything; the primary dies mid-capture.
pos=$(MARIA_AT="$T/m1" msql -e "SELECT @@gtid_binlog_pos")
got=$(MARIA_AT="$T/m2" msql -e "SELECT MASTER_GTID_WAIT('$pos', 60)")
[ "$got" = 0 ] || fail "the replica did not reach $pos"
maria_shutdown "$T/m1" kill
kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
MARIA_AT="$T/m2" msql -e "STOP SLAVE; RESET SLAVE ALL"

# Capture goes on from the promoted replica, which takes new writes.
python3 "$HERE/maria_workload.py" "$T/m2/sock" "$TXNS" 12 > "$T/wl2" 2>&1 &
WL=$!
cdc-capture --log "$T/log" --dsn "$DSN2" -q 2>>"$T/capture.err" &
CAP=$!
wait "$WL" || fail "workload on the new primary: $(cat "$T/wl2")"
kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
cdc-capture --log "$T/log" --dsn "$DSN2" -q --exit-when-idle || fail "capture on the new primary"

binlog_rows "$T/m2" > "$T/peer"
log_rows > "$T/ours"
grep -q ' 0-2-' <(cut -d' ' -f1 "$T/ours" | sed 's/^/ /') || fail "nothing from the new primary in the log"
grep -q ' 0-1-' <(cut -d' ' -f1 "$T/ours" | sed 's/^/ /') || fail "nothing from the old primary in the log"
diff "$T/peer" "$T/ours" > "$T/diff" || { head -20 "$T/diff" >&2; fail "log and the new primary's binlog differ"; }
cdc-log verify --log "$T/log" >/dev/null || fail "cdc-log verify"
ok "failover to a GTID replica: $(wc -l < "$T/peer") row changes, none lost, none repeated"
