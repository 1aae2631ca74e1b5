#!/usr/bin/env bash
# PostgreSQL restarted mid-stream: cdc-capture reconnects and loses nothing.
# The slot is released as capture catches up and keeps advancing on an idle
# (filtered) database. PostgreSQL gone for longer than --reconnect-max:
# exit 69 with a clear message.
source "$(dirname "$0")/lib.sh"
source "$HERE/wl.sh"
pg_start "$T"
wl_schema
capture --tables a,b,c --exit-when-idle
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
ok "capture reconnected after pg_ctl restart -m fast"

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
