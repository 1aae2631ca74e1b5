#!/usr/bin/env bash
# SIGKILL during the initial snapshot: nothing of it is visible in the log
# (it is one transaction), the marker file says it was cut short, and the
# restart takes it again on a fresh slot. Replaying the log then gives
# exactly the final tables, as without the kill. A writer keeps changing
# the tables throughout. The snapshots killed copy with --snapshot-jobs 2
# (three connections die with capture), the one that completes with one
# job. SNAP_KILL_ROWS rows per table (default 100000), SNAP_KILLS kills
# (default 1).
source "$(dirname "$0")/lib.sh"
source "$HERE/snap.sh"
ROWS=${SNAP_KILL_ROWS:-100000}
KILLS=${SNAP_KILLS:-1}
pg_start "$T"
snapshot_schema "$ROWS"
as_least_privilege a,b,c
python3 "$HERE/snap_workload.py" "$ROWS" "${SNAP_TXNS:-600}" 5 > "$T/work.sql"
psql -X -q -f "$T/work.sql" > "$T/work.out" 2>&1 &
work=$!
at_exit "kill $work 2>/dev/null"
for k in $(seq "$KILLS"); do
  capture_bg --table a,b,c --snapshot-jobs 2
  # Killed while it copies a table (its COPY is running), looked for only
  # while the snapshot's marker is there: once the marker has come and
  # gone the snapshot is committed, and capture goes on streaming.
  killed=no seen=no
  for _ in $(seq 3000); do
    if [ -e "$T/log/snapshot.pending" ]; then
      seen=yes
      copying=$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cdc-capture' AND query LIKE 'COPY %' AND state = 'active'")
      if [ "$copying" != 0 ] && [ -e "$T/log/snapshot.pending" ]; then
        kill -9 "$CAP" && killed=yes
        break
      fi
    elif [ "$seen" = yes ]; then
      break
    else
      sleep 0.01
    fi
    kill -0 "$CAP" 2>/dev/null || break
  done
  [ "$killed" = yes ] || kill -9 "$CAP" 2>/dev/null || true
  wait "$CAP" 2>/dev/null || true
  [ "$killed" = yes ] || fail "kill $k: the snapshot ended before it could be killed: $(cat "$T/capture.err")"
  [ -e "$T/log/snapshot.pending" ] || fail "kill $k: no snapshot marker after the kill"
  n=$(cdc-tail --log "$T/log" | wc -l)
  [ "$n" = 0 ] || fail "kill $k: $n events of the cut snapshot are visible"
done
capture_bg --table a,b,c
wait "$work" || fail "workload: $(tail -3 "$T/work.out")"
wait_marker done
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"
[ ! -e "$T/log/snapshot.pending" ] || fail "the snapshot marker is left behind"
grep -q "the initial snapshot of an earlier run did not complete; taking it again on a new slot cdc" "$T/capture.err" ||
  fail "no warning: $(cat "$T/capture.err")"
snapshot_check "$T/log" || fail "replay differs"
[ "$(psql_q -c "SELECT count(*) FROM pg_replication_slots")" = 1 ] || fail "slots: $(psql_q -c 'SELECT slot_name FROM pg_replication_slots')"
ok "$KILLS SIGKILL(s) during the snapshot of 3x$ROWS rows: nothing visible, retaken on a new slot, replay equals the tables"
