#!/usr/bin/env bash
# A non-transactional logical message gets the LSN of the END of its WAL
# record, where the next transaction's commit record may start: the
# message's LSN then equals that transaction's commit LSN. A capture that
# stops (--exit-when-idle, or SIGTERM) right after such a message must not
# acknowledge past the transaction, nor skip it when it resumes.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
as_least_privilege
psql_q -c "CREATE TABLE t (id int PRIMARY KEY, v text)"
capture --exit-when-idle  # creates the publication and the slot

# Session A holds a transaction open (its insert is in WAL before the
# message) until told to commit.
open_txn() {
  rm -f "$T/a.fifo"; mkfifo "$T/a.fifo"
  psql -X -q -v ON_ERROR_STOP=1 < "$T/a.fifo" > "$T/a.out" 2>&1 & APID=$!
  exec 7> "$T/a.fifo"
  echo "BEGIN; INSERT INTO t VALUES ($1, 'T');" >&7
  for _ in $(seq 100); do
    [ "$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'")" = 1 ] && return 0
    sleep 0.05
  done
  fail "session A never opened its transaction"
}
commit_txn() { echo "COMMIT;" >&7; exec 7>&-; wait "$APID" || fail "session A: $(cat "$T/a.out")"; }
# Emits a non-transactional message and waits until its record is flushed
# (PostgreSQL 15 does not flush one by itself), so capture sees it.
emit_nt() {
  psql_q -c "SELECT pg_logical_emit_message(false, 'nt', '$1')" > /dev/null
  local end
  end=$(psql_q -c "SELECT pg_current_wal_insert_lsn()")
  for _ in $(seq 100); do
    [ "$(psql_q -c "SELECT pg_current_wal_flush_lsn() >= '$end'::pg_lsn")" = t ] && return 0
    sleep 0.05
  done
  fail "message $1 never flushed"
}
# check ID CONTENT: row ID is in the log exactly once, and whether its
# commit LSN equals the message's (the case this test is about) goes to $SAME.
check() {
  cdc-tail --log "$T/log" > "$T/ev.ndjson"
  python3 - "$T/ev.ndjson" "$1" "$2" > "$T/check.out" <<'PY' || fail "$(cat "$T/check.out")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
rid, content = int(sys.argv[2]), sys.argv[3]
rows = [e for e in ev if e["op"] == "c" and e["after"]["id"] == rid]
msgs = [e for e in ev if e["op"] == "m" and e["content"] == content]
if len(msgs) != 1: print(f"message {content} in the log {len(msgs)} times"); sys.exit(1)
if len(rows) != 1: print(f"row {rid} in the log {len(rows)} times (message at {msgs[0]['lsn']})"); sys.exit(1)
print("same" if rows[0]["lsn"] == msgs[0]["lsn"] else "differ", rows[0]["lsn"])
PY
  SAME=$(cut -d' ' -f1 "$T/check.out")
}

# 1. --exit-when-idle stops right after the message; the transaction commits
# meanwhile; the next run must still capture it. Repeated until the commit
# record started exactly at the message's LSN at least once (other WAL can
# come between them, e.g. a standby snapshot record).
hit=0
for i in 1 2 3 4 5; do
  open_txn "$i"
  emit_nt "idle$i"
  capture --exit-when-idle
  commit_txn
  capture --exit-when-idle
  check "$i" "idle$i"
  [ "$SAME" = same ] && hit=$((hit + 1))
  [ "$hit" -ge 2 ] && break
done
[ "$hit" -ge 1 ] || fail "the commit never started at the message's LSN; the case was not exercised"
ok "--exit-when-idle after a lone message: the next transaction is captured once (commit at the message's LSN $hit times)"

# 2. The same with SIGTERM to a live capture that has acknowledged the
# message.
hit=0
for i in 11 12 13 14 15; do
  capture_bg --status-interval 1
  open_txn "$i"
  emit_nt "term$i"
  for _ in $(seq 100); do
    cdc-tail --log "$T/log" --op m 2>/dev/null | grep -q "\"content\":\"term$i\"" && break
    sleep 0.05
  done
  kill -TERM "$CAP"; wait "$CAP" || fail "capture did not exit 0 on SIGTERM"
  commit_txn
  capture --exit-when-idle
  check "$i" "term$i"
  [ "$SAME" = same ] && hit=$((hit + 1))
  [ "$hit" -ge 2 ] && break
done
[ "$hit" -ge 1 ] || fail "the commit never started at the message's LSN; the case was not exercised"
ok "SIGTERM after a lone message: the next transaction is captured once (commit at the message's LSN $hit times)"

# 3. What was acknowledged is exactly the message's LSN, never one past it.
open_txn 21
emit_nt ack21
capture --exit-when-idle
commit_txn
msg_lsn=$(cdc-tail --log "$T/log" --op m | python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin][-1]["lsn"])')
confirmed=$(psql_q -c "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'cdc'")
[ "$confirmed" = "$msg_lsn" ] || fail "slot confirmed $confirmed after a lone message at $msg_lsn"
capture --exit-when-idle
check 21 ack21
ok "the slot is confirmed at the lone message's LSN $msg_lsn, not past it"
cdc-log verify --log "$T/log" -q || fail "verify"
