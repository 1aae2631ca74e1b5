#!/usr/bin/env bash
# Operations: systemd notifications, metrics textfile, clear refusals —
# another source's log (78), a log behind its slot (11) unless --accept-gap,
# a password in --dsn (64), a second capture on the same log (75), a role
# without REPLICATION or a wrong password (77) — and SIGTERM (or SIGHUP) draining with a final
# status.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
psql_q -c "CREATE TABLE t (id int PRIMARY KEY, v text)"
capture --exit-when-idle  # slot and publication exist before any change

# sd_notify: READY=1 and STATUS= arrive on $NOTIFY_SOCKET.
python3 - "$T/notify.sock" > "$T/notify.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
try:
    while True:
        msg = s.recv(4096).decode()
        print(msg, flush=True)
        if msg.startswith("STOPPING"):
            break
except socket.timeout:
    pass
PY
listener=$!
for _ in $(seq 50); do [ -S "$T/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET="$T/notify.sock" WATCHDOG_USEC=2000000 capture_bg --metrics-file "$T/cdc.prom" --metrics-interval 0.5
psql_q -c "INSERT INTO t SELECT g, 'v' FROM generate_series(1, 100) g"
wait_marker m1
sleep 1.2
# Caught up on a quiet database, capture is not behind: lag 0, not 1 (an
# alert on lag_bytes > 0 must stay quiet).
lag=
for _ in $(seq 300); do
  lag=$(metric cdc_capture_lag_bytes "$T/cdc.prom" 2>/dev/null)
  [ "$lag" = 0 ] && break
  sleep 0.1
done
[ "$lag" = 0 ] || fail "cdc_capture_lag_bytes $lag on a quiet database"
kill -TERM "$CAP"; wait "$CAP" || fail "SIGTERM did not exit 0"
wait "$listener" || true
grep -qx "READY=1" "$T/notify.out" || fail "no READY=1: $(cat "$T/notify.out")"
grep -q "^STATUS=streaming; " "$T/notify.out" || fail "no STATUS"
grep -qx "WATCHDOG=1" "$T/notify.out" || fail "no WATCHDOG=1"
grep -qx "STOPPING=1" "$T/notify.out" || fail "no STOPPING=1"
ok "sd_notify READY, STATUS, WATCHDOG, STOPPING"
for m in cdc_capture_events_total cdc_capture_transactions_total cdc_capture_event_bytes_total \
         cdc_capture_durable_lsn cdc_capture_lag_bytes cdc_capture_reconnects_total \
         cdc_capture_errors_total cdc_capture_fsync_seconds_bucket; do
  [ -n "$(metric $m "$T/cdc.prom")" ] || fail "metric $m missing"
done
grep -q '^cdc_capture_fsync_seconds_bucket{log_id="[^"]*",slot="cdc",le="+Inf"} ' "$T/cdc.prom" ||
  fail "metrics: no labelled +Inf bucket: $(grep bucket "$T/cdc.prom")"
events=$(metric cdc_capture_events_total "$T/cdc.prom")
[ "$events" -ge 101 ] || fail "events_total $events"
# The commit time of the last transaction: the INSERT above, seconds ago.
python3 - "$T/cdc.prom" <<'PY' || fail "last_commit_timestamp: $(grep last_commit "$T/cdc.prom")"
import sys, time
v = [float(l.split()[1]) for l in open(sys.argv[1])
     if l.startswith("cdc_capture_last_commit_timestamp_seconds{")][0]
sys.exit(0 if 0 < time.time() - v < 120 else 1)
PY
ok "metrics textfile ($events events)"

# The slot acknowledged what the log holds: confirmed_flush_lsn after SIGTERM.
last=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_lsn"])')
conf=$(psql_q -c "SELECT confirmed_flush_lsn > '$last'::pg_lsn FROM pg_replication_slots WHERE slot_name = 'cdc'")
[ "$conf" = t ] || fail "final status did not acknowledge $last"
ok "final status on SIGTERM acknowledged $last"

rc=0; cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN password=secret" 2> "$T/err" || rc=$?
[ "$rc" = 64 ] && grep -q "must not carry a password" "$T/err" && ! grep -q secret "$T/err" || fail "password in --dsn: $rc $(cat "$T/err")"
ok "a password in --dsn is refused without echoing it"

capture_bg
for _ in $(seq 50); do grep -q . "$T/log/LOCK" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
rc=0; capture --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 75 ] && grep -q "is locked by another writer" "$T/err" || fail "second capture: $rc $(cat "$T/err")"
kill -TERM "$CAP"; wait "$CAP"
ok "a second cdc-capture on the same log exits 75"

rc=0; capture --slot other --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 78 ] && grep -q "belongs to system .* slot cdc" "$T/err" || fail "other source: $rc $(cat "$T/err")"
ok "a log of another source is refused (78)"

# A first start that failed before capturing anything (here: a slot of the
# wrong plugin) does not tie the new log to that slot.
psql_q -c "SELECT pg_create_logical_replication_slot('td', 'test_decoding')" >/dev/null
rc=0; cdc-capture --log "$T/fresh" --dsn "$CDC_TEST_DSN" --slot td -q --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 78 ] && grep -q "uses plugin test_decoding" "$T/err" || fail "wrong plugin: $rc $(cat "$T/err")"
cdc-capture --log "$T/fresh" --dsn "$CDC_TEST_DSN" --slot fresh --exit-when-idle 2> "$T/err" ||
  fail "the failed first start tied the log to its slot: $(cat "$T/err")"
grep -q "holds nothing from slot td; recording slot fresh" "$T/err" || fail "no note: $(cat "$T/err")"
grep -q '"slot": *"fresh"' "$T/fresh/log.json" || fail "log.json: $(cat "$T/fresh/log.json")"
psql_q -c "SELECT pg_drop_replication_slot('td')" -c "SELECT pg_drop_replication_slot('fresh')" >/dev/null
ok "a log that holds nothing takes a new source after a failed first start"

# An old copy of the log (a restored backup) is behind the slot: a gap.
cp -a "$T/log" "$T/old"
psql_q -c "INSERT INTO t VALUES (1000, 'after the backup')"
capture --exit-when-idle
rm -rf "$T/log"; mv "$T/old" "$T/log"
rc=0; capture --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 11 ] && grep -q "^cdc-capture: gap: log .* ends at .* but slot cdc has confirmed up to" "$T/err" || fail "gap: $rc $(cat "$T/err")"
ok "a log behind its slot is a gap (11)"
capture --exit-when-idle --accept-gap 2> "$T/err" || fail "--accept-gap: $(cat "$T/err")"
grep -q "warning: gap" "$T/err" || fail "no gap warning"
cdc-log verify --log "$T/log" -q
ok "--accept-gap continues with a warning"

printf 'slott = "x"\n' > "$T/bad.conf"
rc=0; cdc-capture --config "$T/bad.conf" --log "$T/log2" --dsn "$CDC_TEST_DSN" 2> "$T/err" || rc=$?
[ "$rc" = 78 ] && grep -q "slott" "$T/err" || fail "misspelt config key: $rc $(cat "$T/err")"
ok "a misspelt --config key is bad configuration (78)"

# A role without the REPLICATION attribute is a permission problem: exit 77
# at once, not retried as if the server were down.
psql_q -c "CREATE ROLE no_repl LOGIN"
rc=0; timeout 60 cdc-capture --log "$T/log3" --slot cdc3 --reconnect-max 30 \
  --dsn "${CDC_TEST_DSN/user=postgres/user=no_repl}" 2> "$T/err" || rc=$?
# 15 says "must be superuser or replication role", 16 and later "permission
# denied to start WAL sender ... REPLICATION attribute".
[ "$rc" = 77 ] && grep -qi "replication" "$T/err" && ! grep -q "retrying" "$T/err" ||
  fail "role without REPLICATION: $rc $(cat "$T/err")"
ok "a role without REPLICATION is refused (77), not retried"

# A wrong password (from libpq's PGPASSWORD, as users pass it) is an
# authentication failure: 77 at once, and the password is never printed.
psql_q -c "CREATE ROLE pw_user LOGIN REPLICATION PASSWORD 'right-secret'"
hba="$PG_DIR/pg/pg_hba.conf"
{ echo "local all pw_user scram-sha-256"; echo "local replication pw_user scram-sha-256"; cat "$hba"; } > "$T/hba" &&
  cat "$T/hba" > "$hba"
psql_q -c "SELECT pg_reload_conf()" >/dev/null
rc=0; PGPASSWORD=wrong-secret timeout 60 cdc-capture --log "$T/log4" --slot cdc4 --reconnect-max 30 \
  --dsn "${CDC_TEST_DSN/user=postgres/user=pw_user}" 2> "$T/err" || rc=$?
[ "$rc" = 77 ] && grep -q "password authentication failed" "$T/err" && ! grep -q "retrying" "$T/err" ||
  fail "wrong password: $rc $(cat "$T/err")"
! grep -q "wrong-secret" "$T/err" || fail "the password was printed: $(cat "$T/err")"
PGPASSWORD=right-secret cdc-capture --log "$T/log4" --slot cdc4 -q --exit-when-idle --snapshot never \
  --dsn "${CDC_TEST_DSN/user=postgres/user=pw_user}" 2> "$T/err" || fail "right password: $(cat "$T/err")"
psql_q -c "SELECT pg_drop_replication_slot('cdc4')" >/dev/null
ok "a wrong password is an authentication failure (77), not retried nor printed"
rc=0; cdc-capture --log "$T/log2" --dsn "$CDC_TEST_DSN" --slot s2 --publication p2 \
  --table no_such_table --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 78 ] && grep -q 'no_such_table' "$T/err" || fail "missing table: $rc $(cat "$T/err")"
ok "a publication of a missing table is a configuration error (78), not retried"
rc=0; echo '{"lsn":"F/0","xid":1,"ts":"2026-11-29T00:00:00Z","op":"m"}' |
  cdc-log import --log "$T/log" 2> "$T/err" || rc=$?
[ "$rc" = 78 ] && grep -q "is written by cdc-capture" "$T/err" || fail "import into captured log: $rc $(cat "$T/err")"
ok "cdc-log import refuses a captured log (78)"

# Below the free-disk floor capture pauses reading instead of failing a
# write: nothing new is written or acknowledged until space returns.
before=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
capture_bg --min-free-disk 1000000T
psql_q -c "INSERT INTO t VALUES (2000, 'while paused')"
sleep 2
kill -0 "$CAP" || fail "capture exited below the disk floor"
grep -q "below the floor; pausing reading" "$T/capture.err" || fail "no pause warning: $(cat "$T/capture.err")"
now=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
[ "$now" = "$before" ] || fail "events written while paused ($before -> $now)"
kill -HUP "$CAP"; wait "$CAP" || fail "SIGHUP did not stop capture with status 0"
capture --exit-when-idle
cdc-tail --log "$T/log" --table t | grep -q '"while paused"' || fail "the paused change was lost"
ok "below --min-free-disk capture pauses, then resumes with nothing lost (stopped by SIGHUP)"

# A slot capture creates only to find a gap is dropped again: it would hold
# WAL on the server while capture waits for the operator.
psql_q -c "SELECT pg_drop_replication_slot('cdc')" >/dev/null
psql_q -c "INSERT INTO t VALUES (3000, 'while the slot was gone')"
rc=0; capture --exit-when-idle 2> "$T/err" || rc=$?
[ "$rc" = 11 ] && grep -q "gap: .*(the slot created just now was dropped)" "$T/err" || fail "gap with a new slot: $rc $(cat "$T/err")"
[ "$(psql_q -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'cdc'")" = 0 ] || fail "the new slot was left on the server"
ok "a slot created only to find a gap is dropped (11)"
