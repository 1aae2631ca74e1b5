#!/usr/bin/env bash
# Randomized: sessions interleave lone (non-transactional) messages,
# transactional messages and commits, while cdc-capture is stopped at random
# moments by SIGTERM, by kill -9 and by --exit-when-idle, and restarted.
# Every committed transaction must be in the log exactly once, whole, in
# commit order, and every lone message exactly once. CDC_CHAOS_LONG=1 runs
# longer (more transactions, more restarts); CDC_CHAOS_SEED picks the seed.
source "$(dirname "$0")/lib.sh"
SESSIONS=3
if [ "${CDC_CHAOS_LONG:-0}" = 1 ]; then COUNT=1500; else COUNT=200; fi
SEED=${CDC_CHAOS_SEED:-$RANDOM}
echo "# seed $SEED ($SESSIONS sessions x $COUNT steps)"
pg_start "$T"
# wl is the oracle, kept out of the publication.
psql_q -c "CREATE TABLE r (id int PRIMARY KEY); CREATE TABLE wl (n int PRIMARY KEY, xid bigint); CREATE PUBLICATION cdc FOR TABLE r"
capture --exit-when-idle
pids=()
for s in $(seq "$SESSIONS"); do
  python3 "$HERE/msg_workload.py" gen "$s" "$COUNT" "$SEED" > "$T/s$s.sql"
  psql -X -q -f "$T/s$s.sql" > "$T/s$s.out" 2>&1 &
  pids+=("$!")
done
at_exit "kill ${pids[*]}"
running() { for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
stops=0; term=0; k9=0; idle=0
while running; do
  case $((RANDOM % 3)) in
    0) capture_bg --status-interval 1; sleep "0.$((RANDOM % 90 + 10))"
       kill -TERM "$CAP"; wait "$CAP" || fail "capture did not exit 0 on SIGTERM: $(tail -3 "$T/capture.err")"
       term=$((term + 1)) ;;
    1) capture_bg --status-interval 1; sleep "$((RANDOM % 2)).$((RANDOM % 90 + 10))"
       kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
       k9=$((k9 + 1)) ;;
    2) capture --exit-when-idle 2>>"$T/capture.err" || fail "capture --exit-when-idle failed: $(tail -3 "$T/capture.err")"
       idle=$((idle + 1)); sleep "0.$((RANDOM % 50))" ;;
  esac
  stops=$((stops + 1))
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail "session $((i + 1)) failed: $(tail -3 "$T/s$((i + 1)).out")"
done
# A lone message writes WAL but does not flush it (before PostgreSQL 17's
# flush argument), and the walsender sends only flushed WAL: a session that
# ends with one (or with a rollback after one) can leave it unsent for
# minutes. A commit flushes everything before it; pgoutput sends nothing
# for it (the table is not published).
psql_q -c "CREATE TABLE wal_flushed (n int)"
capture --exit-when-idle
cdc-log verify --log "$T/log" -q || fail "verify"
cdc-tail --log "$T/log" --schema-changes > "$T/events.ndjson"
psql_q -F $'\t' -c "SELECT n, xid FROM wl" > "$T/wl.tsv"
python3 "$HERE/msg_workload.py" check "$T/events.ndjson" "$T/wl.tsv" "$SESSIONS" "$COUNT" "$SEED" ||
  fail "seed $SEED: the log does not match what committed"
ok "$stops capture stops ($term SIGTERM, $k9 kill -9, $idle --exit-when-idle)"
