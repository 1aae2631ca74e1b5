#!/usr/bin/env bash
# cdc-log wait --lsn: read-your-writes against real capture. A script that
# committed, then asked pg_current_wal_lsn(), finds its change readable as
# soon as wait returns 0; without capture running (or for an LSN never
# reached) wait gives up after --timeout with 75.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
psql_q -c "CREATE TABLE rw (id int PRIMARY KEY, note text)"
capture --table rw --exit-when-idle

write() {  # write ID: commits a row, prints the WAL position after it
  psql_q -c "INSERT INTO rw VALUES ($1, 'row $1')" -c "SELECT pg_current_wal_lsn()" | tail -1
}

# Capture is not running: the change cannot reach the log.
lsn=$(write 1)
start=$(date +%s%N)
rc=0; cdc-log wait --log "$T/log" --lsn "$lsn" --timeout 2s 2> "$T/err" || rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" = 75 ] || fail "wait without capture: exit $rc, want 75"
[ "$took" -ge 1900 ] || fail "wait gave up after $took ms, before its 2 s timeout"
grep -q "has not reached $lsn within 2s" "$T/err" || fail "timeout message: $(cat "$T/err")"
! cdc-tail --log "$T/log" | grep -q '"note":"row 1"' || fail "row 1 in the log without capture"
ok "no capture: exit 75 after the timeout"

capture_bg --status-interval 1
at_exit "kill -9 $CAP"
cdc-log wait --log "$T/log" --lsn "$lsn" --timeout 30s || fail "wait for row 1: exit $?"
cdc-tail --log "$T/log" | grep -q '"note":"row 1"' || fail "wait returned before row 1 was readable"
for i in 2 3 4 5 6; do
  lsn=$(write "$i")
  # cdc-log(1): progress is recorded about once a second while PostgreSQL
  # is idle (its own keepalives can be 30 s apart), so 10 s is ample.
  cdc-log wait --log "$T/log" --lsn "$lsn" --timeout 10s || fail "wait for row $i: exit $?"
  cdc-tail --log "$T/log" --from "lsn:0/0" | grep -q "\"note\":\"row $i\"" ||
    fail "wait returned before row $i was readable"
done
ok "every change is readable as soon as wait returns"

# Far beyond anything written: times out while capture runs, idle.
rc=0; cdc-log wait --log "$T/log" --lsn FF/0 --timeout 1s 2> "$T/err" || rc=$?
[ "$rc" = 75 ] || fail "wait for FF/0: exit $rc, want 75"
rc=0; cdc-log wait --log "$T/log" --lsn bogus 2> "$T/err" || rc=$?
[ "$rc" = 64 ] || fail "bad --lsn: exit $rc, want 64"
rc=0; cdc-log wait --log "$T/log" 2> "$T/err" || rc=$?
[ "$rc" = 64 ] || fail "missing --lsn: exit $rc, want 64"
ok "timeouts and usage errors"
