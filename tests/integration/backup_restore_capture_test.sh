#!/usr/bin/env bash
# A restored backup under cdc-capture with the same slot. Behind the slot
# (the slot confirmed changes after the backup's end): exit 11, a message
# naming both positions and the operator's options, and neither the log
# nor the slot touched. Not behind (backup taken after capture stopped):
# capture resumes, and the transactions committed since arrive exactly once.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
as_least_privilege
psql_q -c "CREATE TABLE t (id int PRIMARY KEY, v text)"
capture --exit-when-idle  # slot and publication exist before any change
ins() { psql_q -c "INSERT INTO t SELECT g, 'v' || g FROM generate_series($1, $2) g"; }
mfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]+"/manifest.json"))[sys.argv[2]])' "$1" "$2"; }
slot_lsn() { psql_q -c "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'cdc'"; }
ids() { cdc-tail --log "$1" --table t | python3 -c '
import json, sys
for line in sys.stdin:
    print(json.loads(line)["after"]["id"])'; }

# Online backup while capture runs, then more changes the slot confirms.
capture_bg
for i in 1 2 3; do psql_q -c "INSERT INTO t VALUES ($i, 'one by one')"; done
ins 4 40
wait_marker m1
cdc-backup create --log "$T/log" --out "$T/b1" -q
ins 41 80
wait_marker m2
kill -TERM "$CAP"; wait "$CAP" || fail "capture did not stop cleanly: $(cat "$T/capture.err")"
cdc-backup restore "$T/b1" --log "$T/r1" -q
cdc-log verify --log "$T/r1" -q || fail "restored log fails cdc-log verify"
end_lsn=$(mfield "$T/b1" last_lsn) slot_before=$(slot_lsn)
r1_events=$(cdc-tail --log "$T/r1" | wc -l)

rc=0; cdc-capture --log "$T/r1" --dsn "$CDC_TEST_DSN" -q --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 11 ] || fail "capture on a restored log behind its slot: exit $rc, not 11: $(cat "$T/err")"
[ "$(grep -c '' "$T/err")" = 1 ] || fail "not one line: $(cat "$T/err")"
grep -q "^cdc-capture: gap: log $T/r1 ends at $end_lsn but slot cdc has confirmed up to $slot_before;" "$T/err" ||
  fail "the message does not name the backup's end ($end_lsn) and the slot's position ($slot_before): $(cat "$T/err")"
for option in "Restore a newer backup of the log" "start a new log with a new slot" "pass --accept-gap"; do
  grep -qF "$option" "$T/err" || fail "the message does not offer \"$option\": $(cat "$T/err")"
done
[ "$(slot_lsn)" = "$slot_before" ] || fail "the refused capture moved the slot"
[ "$(cdc-tail --log "$T/r1" | wc -l)" = "$r1_events" ] || fail "the refused capture wrote to the log"
ok "a restored log behind its slot is refused (11) naming both positions and the options"

# No gap: a backup of the stopped log, restored; changes made since the
# capture stopped arrive once, after what the backup holds.
cdc-backup create --log "$T/log" --out - -q > "$T/b2.tar"
cdc-backup restore "$T/b2.tar" --log "$T/r2" -q
ins 81 120
psql_q -c "UPDATE t SET v = 'late' WHERE id = 120"
rc=0; cdc-capture --log "$T/r2" --dsn "$CDC_TEST_DSN" -q --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 0 ] || fail "capture on a restored log level with its slot: exit $rc: $(cat "$T/err")"
cdc-log verify --log "$T/r2" -q || fail "the resumed log fails cdc-log verify"
ids "$T/r2" > "$T/ids"
[ "$(sort -n "$T/ids" | uniq -d | grep -v '^120$' || true)" = "" ] || fail "rows twice: $(sort -n "$T/ids" | uniq -d | head)"
[ "$(grep -c '' "$T/ids")" = 121 ] && [ "$(sort -nu "$T/ids" | tr '\n' ' ')" = "$(seq 1 120 | tr '\n' ' ')" ] ||
  fail "the resumed log holds $(grep -c '' "$T/ids") row events, not ids 1-120 once (and the update)"
[ "$(tail -n 1 "$T/ids")" = 120 ] && cdc-tail --log "$T/r2" --table t | tail -n 1 | grep -q '"late"' ||
  fail "the update is not the last event"
cmp <(cdc-tail --log "$T/r2" -n "$(cdc-tail --log "$T/log" | wc -l)") <(cdc-tail --log "$T/log") ||
  fail "the resumed log does not begin with the backed-up one"
ok "a restored log level with its slot resumes; later transactions arrive exactly once"
