#!/usr/bin/env bash
# Failover slots (cdc-capture(1), FAILING OVER). Before PostgreSQL 17,
# --failover is refused as bad configuration (78) and no slot is made. From
# 17: a primary and a streaming standby made from a copy of the stopped
# primary's data directory (synchronizing slots, the primary waiting for it
# through synchronized_standby_slots). cdc-capture --failover captures from
# the primary under a workload, with a --dsn naming both servers
# (target_session_attrs=read-write); the primary is stopped and the standby
# promoted; capture finds the new primary by itself and resumes from the
# synchronized slot while the workload goes on there; a capture started
# afresh with the standby's own --dsn goes on from there too. The log then holds every committed
# transaction exactly once, in commit order.
source "$(dirname "$0")/lib.sh"
source "$HERE/wl.sh"
pg_start "$T"
wl_schema
if [ "$PG_MAJOR" -lt 17 ]; then
  rc=0; capture --failover --exit-when-idle 2> "$T/err" || rc=$?
  [ "$rc" = 78 ] && grep -q "^cdc-capture: --failover needs PostgreSQL 17 or later (failover slots); the server is PostgreSQL $PG_MAJOR\." "$T/err" ||
    fail "--failover on $PG_MAJOR: $rc $(cat "$T/err")"
  [ "$(psql_q -c "SELECT count(*) FROM pg_replication_slots")" = 0 ] || fail "a slot was made"
  ok "--failover on PostgreSQL $PG_MAJOR is refused (78), no slot made"
  exit 0
fi

PRIMARY_DSN=$CDC_TEST_DSN
P_PORT=$PGPORT
# The primary keeps WAL for the standby and holds logical walsenders back
# until the standby has it: what capture saw, the standby has.
psql_q -c "SELECT pg_create_physical_replication_slot('standby')" >/dev/null
cat >> "$T/pg/postgresql.conf" <<CONF
synchronized_standby_slots = 'standby'
CONF
pg_stop_server
mkdir -p "$T/sb"
cp -a "$T/pg" "$T/sb/pg"
rm -f "$T/sb/pg/postmaster.pid" "$T/sb/pg/postmaster.opts"
S_PORT=$((P_PORT + 1))
mkdir -p "$T/sb/sock"
[ "$(id -u)" -eq 0 ] && chown postgres "$T/sb" "$T/sb/sock"
cat >> "$T/sb/pg/postgresql.conf" <<CONF
port = $S_PORT
unix_socket_directories = '$T/sb/sock'
synchronized_standby_slots = ''
primary_conninfo = 'host=$T/sock port=$P_PORT user=postgres dbname=postgres application_name=standby'
primary_slot_name = 'standby'
hot_standby_feedback = on
CONF
touch "$T/sb/pg/standby.signal"
[ "$(id -u)" -eq 0 ] && chown postgres "$T/sb/pg/standby.signal"
pg_start_server
_pg_as "$PG_BIN/pg_ctl" -D "$T/sb/pg" -l "$T/sb.log" -w start >/dev/null || fail "standby: $(cat "$T/sb.log")"
at_exit "_pg_as $PG_BIN/pg_ctl -D $T/sb/pg -w -m immediate stop >/dev/null"
on_standby() { psql -X -q -v ON_ERROR_STOP=1 -At -h "$T/sb/sock" -p "$S_PORT" "$@"; }
for _ in $(seq 100); do
  [ "$(psql_q -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ] && break
  sleep 0.1
done
[ "$(psql_q -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ] ||
  fail "the standby is not streaming: $(tail -5 "$T/sb.log")"
ok "a standby streams from the primary (PostgreSQL $PG_MAJOR)"

capture --table a,b,c --failover --exit-when-idle 2> "$T/first.err" || fail "first capture: $(cat "$T/first.err")"
[ "$(psql_q -c "SELECT failover FROM pg_replication_slots WHERE slot_name = 'cdc'")" = t ] ||
  fail "the slot is no failover slot"
python3 "$HERE/workload.py" 1 ${FAILOVER_TXNS:-30000} 21 > "$T/work1.sql"
psql -X -q -f "$T/work1.sql" > /dev/null 2>&1 &
work=$!
at_exit "kill $work"
STANDBY_DSN="host=$T/sb/sock port=$S_PORT user=postgres dbname=postgres"
BOTH_DSN="host=$T/sock,$T/sb/sock port=$P_PORT,$S_PORT user=postgres dbname=postgres target_session_attrs=read-write"
CDC_TEST_DSN=$BOTH_DSN capture_bg --failover --status-interval 0.5 --reconnect-max 600
# Synchronizing slots is switched on now: a synchronization worker started
# with the standby would by now sleep for up to 30 s between rounds, having
# found no failover slot at first.
on_standby -c "ALTER SYSTEM SET sync_replication_slots = on" -c "SELECT pg_reload_conf()" >/dev/null
# The standby's copy of the slot follows the primary's.
synced() {  # synced LSN: the standby's slot is synchronized and confirms LSN
  on_standby -c "SELECT synced AND NOT temporary AND confirmed_flush_lsn >= '$1'::pg_lsn
                 FROM pg_replication_slots WHERE slot_name = 'cdc'"
}
# A synchronized slot is kept only once the primary's slot has moved past
# where the standby's copy starts, which takes a running-transactions
# record: logged every 15 s, or at once by pg_log_standby_snapshot().
for _ in $(seq 300); do
  [ "$(synced 0/0)" = t ] && break
  psql_q -c "SELECT pg_log_standby_snapshot()" >/dev/null
  sleep 0.2
done
[ "$(synced 0/0)" = t ] || fail "the slot never reached the standby: $(on_standby -c "TABLE pg_replication_slots") $(tail -5 "$T/sb.log")"
sleep 1
kill -0 "$work" 2>/dev/null && busy=yes || busy=no
pg_stop_server  # the primary goes away mid-workload (its walsenders send the standby everything first)
wait "$work" || true
cdc-log info --log "$T/log" --json > "$T/info.json"
captured=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["last_lsn"])' "$T/info.json")
slot_at=$(on_standby -c "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'cdc'")
on_standby -c "SELECT pg_promote()" >/dev/null
for _ in $(seq 100); do [ "$(on_standby -c "SELECT pg_is_in_recovery()")" = f ] && break; sleep 0.1; done
[ "$(on_standby -c "SELECT pg_is_in_recovery()")" = f ] || fail "the standby was not promoted"
export PGHOST=$T/sb/sock PGPORT=$S_PORT
python3 "$HERE/workload.py" 100001 1500 22 | psql -X -q > /dev/null
wait_marker after-failover
grep -q "retrying" "$T/capture.err" || fail "capture never saw the primary go: $(cat "$T/capture.err")"
kill -TERM "$CAP"; wait "$CAP" || fail "capture on the new primary: $(tail -3 "$T/capture.err")"
wl_check
ok "failed over (workload still committing when the primary stopped: $busy): log at $captured, slot on the standby at $slot_at; capture found the new primary by itself; no gap, no duplicate"
# An operator who restarts capture with the new primary's --dsn.
python3 "$HERE/workload.py" 200001 500 23 | psql -X -q > /dev/null
CDC_TEST_DSN=$STANDBY_DSN capture --failover --exit-when-idle
wl_check
ok "a capture started with the new primary's --dsn goes on: no gap, no duplicate"
