#!/usr/bin/env bash
# PostgreSQL restarted mid-stream: cdc-capture reconnects and loses nothing.
# The slot is released as capture catches up and keeps advancing on an idle
# (filtered) database. PostgreSQL gone for longer than --reconnect-max:
# exit 69 with a clear message.
source "$(dirname "$0")/lib.sh"
source "$HERE/wl.sh"
pg_start "$T"
wl_schema
as_least_privilege a,b,c
capture --table a,b,c --exit-when-idle
capture_bg --reconnect-max 60 --status-interval 1
at_exit "kill -9 $CAP"
python3 "$HERE/workload.py" 1 6000 11 > "$T/work1.sql"
psql -X -q -f "$T/work1.sql" > /dev/null 2>&1 &
work=$!
sleep 1.5
pg_restart
wait "$work" || true  # its session was cut by the restart
python3 "$HERE/workload.py" 6001 500 12 | psql -X -q > /dev/null
wait_marker after-restart
kill -0 "$CAP" || fail "capture died across the restart"
grep -q "retrying" "$T/capture.err" || fail "capture never saw the restart: $(cat "$T/capture.err")"
# What happened is said once, first, with its reason; no status is sent on a
# stream the server has ended.
! grep -q "final status not sent" "$T/capture.err" || fail "status sent on an ended stream: $(cat "$T/capture.err")"
[ "$(head -1 "$T/capture.err")" = "cdc-capture: warning: PostgreSQL ended the replication stream without an error (as it does when shutting down); retrying in 500 ms" ] ||
  fail "unclear first message after a restart: $(cat "$T/capture.err")"
[ "$(grep -c "replication stream" "$T/capture.err")" = 1 ] || fail "the stream's end reported more than once: $(cat "$T/capture.err")"
ok "capture reconnected after pg_ctl restart -m fast, saying so once"

# The walsender terminated: the server's reason is named.
: > "$T/capture.err"
psql_q -c "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'cdc'" > /dev/null
wait_marker after-terminate
[ "$(grep -c "" "$T/capture.err")" = 1 ] &&
  grep -qE "^cdc-capture: warning: .*replication stream.*: .*terminating connection due to administrator command.*; retrying in [0-9]+ ms$" "$T/capture.err" ||
  fail "unclear message after the walsender was terminated: $(cat "$T/capture.err")"
ok "a terminated walsender is reported with the server's reason"

# The slot catches up with the log.
last=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_lsn"])')
wait_slot "confirmed_flush_lsn > '$last'::pg_lsn" 100 0.1 || fail "confirmed_flush_lsn did not pass the last captured commit $last"
ok "confirmed_flush_lsn passed the last captured commit $last"

# Changes to an unpublished table only move WAL: the slot must follow.
psql_q -c "CREATE TABLE unpublished (x int); INSERT INTO unpublished SELECT generate_series(1, 1000)"
target=$(psql_q -c "SELECT pg_current_wal_flush_lsn()")
wait_slot "confirmed_flush_lsn >= '$target'::pg_lsn" 150 0.2 || fail "slot did not advance on a filtered database (target $target)"
ok "slot advances to $target on a filtered database"

kill -TERM "$CAP"; wait "$CAP" || fail "capture did not exit 0 on SIGTERM"
wl_check

# Server gone for longer than the retry budget.
pg_stop_server
start=$(date +%s)
rc=0; cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --reconnect-max 3 2> "$T/gone.err" || rc=$?
[ "$rc" = 69 ] || fail "expected exit 69, got $rc: $(cat "$T/gone.err")"
tail -1 "$T/gone.err" | grep -q "^cdc-capture: gave up after 3 s of failures: cannot connect to PostgreSQL" ||
  fail "unclear message: $(tail -1 "$T/gone.err")"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "took too long to give up"
ok "server unavailable beyond --reconnect-max: exit 69"
pg_start_server
