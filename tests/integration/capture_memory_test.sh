#!/usr/bin/env bash
# One 2,000,000-row transaction streams to the log frame by frame: capture's
# peak RSS stays under 150 MB, and every row arrives, in one transaction.
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-2000000}
pg_start "$T"
psql_q -c "CREATE TABLE big (id int PRIMARY KEY, payload text)"
capture --exit-when-idle
psql_q -c "INSERT INTO big SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(1, $ROWS) g"
capture_bg --exit-when-idle
peak=0
while kill -0 "$CAP" 2>/dev/null; do
  hwm=$(awk '/^VmHWM/ {print $2}' /proc/$CAP/status 2>/dev/null || echo 0)
  [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
  sleep 0.05
done
wait "$CAP" || fail "capture failed: $(cat "$T/capture.err")"
n=$(cdc-tail --log "$T/log" --table big | wc -l)
[ "$n" = "$ROWS" ] || fail "$n of $ROWS rows in the log"
lasts=$(cdc-tail --log "$T/log" --table big | grep -c '"last":true' || true)
[ "$lasts" = 1 ] || fail "expected one transaction end, got $lasts"
peak_mb=$((peak / 1024))
[ "$peak_mb" -lt 150 ] || fail "peak RSS $peak_mb MB (limit 150)"
ok "$ROWS-row transaction captured with peak RSS $peak_mb MB"
