#!/usr/bin/env bash
# A full and a failing disk under cdc-capture, injected without root by an
# LD_PRELOAD shim (tests/faults/faultfs.c) while a workload commits:
#  - ENOSPC on writes to the segments: capture stops with exit 74 and one
#    line naming the disk; the log verifies; started again once "space
#    returns", it goes on;
#  - EIO on an fdatasync of a segment, the shim cutting the file back to
#    what its last good sync covered (what a kernel that dropped the dirty
#    pages leaves): capture stops with 74 at once (a failed fsync is never
#    retried as if it had succeeded), never having acknowledged what was
#    lost; the next start recovers the log from disk and PostgreSQL sends
#    the lost transactions again;
#  - every fdatasync stalled: nothing received meanwhile is acknowledged.
# At the end every committed transaction is in the log exactly once, in
# commit order, and replaying it reproduces the tables.
source "$(dirname "$0")/lib.sh"
source "$HERE/wl.sh"
SHIM="$BIN/../tests/libcdc_faultfs.so"
[ -f "$SHIM" ] || fail "no $SHIM (build the cdc_faultfs target)"
pg_start "$T"
wl_schema
capture --table a,b,c --exit-when-idle
python3 "$HERE/workload.py" 1 "${TXNS:-6000}" 9 > "$T/work.sql"
psql -X -q -f "$T/work.sql" > /dev/null 2>&1 &
work=$!
at_exit "kill $work 2>/dev/null"
F="$T/faults"
mkdir -p "$F"
faulty() {  # starts capture under the shim; its pid in $CAP
  CDC_FAULT_DIR="$F" LD_PRELOAD="$SHIM" cdc-capture --log "$T/log" \
    --dsn "$CDC_TEST_DSN" --commit-delay 5 2> "$T/capture.err" &
  CAP=$!
}
# fault KIND ERRNO WHAT: injects the fault into a running capture, which
# must stop with 74 naming WHAT; then checks the log and the slot.
fault() {
  faulty
  sleep 0.7
  kill -0 "$CAP" 2>/dev/null || fail "capture died early: $(cat "$T/capture.err")"
  echo "$2" > "$F/.tmp" && mv "$F/.tmp" "$F/$1"  # whole, never half-written
  # The workload may have finished by now: a lone logical message makes
  # capture write a segment whether or not it still commits (the check
  # skips messages).
  local rc=0
  for _ in $(seq 100); do
    kill -0 "$CAP" 2>/dev/null || break
    psql_q -c "SELECT pg_logical_emit_message(false, 'fault', '$1')" \
      > /dev/null 2>&1 || true
    sleep 0.1
  done
  kill -0 "$CAP" 2>/dev/null && fail "$1 $2: capture still runs"
  wait "$CAP" || rc=$?
  rm -f "$F/$1"
  [ "$rc" = 74 ] || fail "$1 $2: exit $rc, not 74: $(cat "$T/capture.err")"
  grep -q "$3" "$T/capture.err" || fail "$1 $2: $(tail -2 "$T/capture.err")"
  grep -q "^$1 $2" "$F/injected" || fail "$1 $2 was never injected"
  cdc-log verify --log "$T/log" -q || fail "$1 $2: the log does not verify"
  # What PostgreSQL was told is in the log must be in it: the slot's
  # position is at most where the log's last transaction ends.
  local slot logpos
  slot=$(confirmed)
  logpos=$(log_flush)
  [ "$(lsn_num "$slot")" -le "$(lsn_num "$logpos")" ] ||
    fail "$1 $2: the slot is confirmed at $slot, past the log's $logpos"
}
fault write ENOSPC "No space left on device"
ok "ENOSPC on a segment write: exit 74, one line, the log verifies, nothing acknowledged beyond it"
fault fsync "EIO once" "Input/output error"
ok "EIO on a segment fdatasync: exit 74 at once, the unsynced tail lost and never acknowledged"
fault write EIO "Input/output error"
ok "EIO on a segment write: exit 74"
# A disk that stops answering: every fdatasync of a segment waits. Capture
# goes on receiving, and writing into the page cache, but must tell
# PostgreSQL nothing past what was durable when the disk stopped: at most
# the log's end as read just after (docs/invariants.md, invariant 2: the
# flush position sent is a function of the durable position alone, never
# of what was received). Then a SIGKILL while it waits, and a restart.
faulty
sleep 0.7
kill -0 "$CAP" 2>/dev/null || fail "capture died early: $(cat "$T/capture.err")"
touch "$F/stall"
ceiling=$(log_flush)
for i in $(seq 30); do
  psql_q -c "SELECT pg_logical_emit_message(false, 'stall', '$i')" > /dev/null
  sleep 0.1
done
sleep 1.5  # past the one-second acknowledgement interval
kill -0 "$CAP" 2>/dev/null || fail "capture died while the disk stalled: $(cat "$T/capture.err")"
slot=$(confirmed)
[ "$(lsn_num "$slot")" -le "$(lsn_num "$ceiling")" ] ||
  fail "fdatasync stalled: the slot is confirmed at $slot, past the log's $ceiling when the disk stopped"
received=$(psql_q -c "SELECT sent_lsn FROM pg_stat_replication WHERE application_name = 'cdc-capture'")
[ -n "$received" ] && [ "$(lsn_num "$received")" -gt "$(lsn_num "$ceiling")" ] ||
  fail "the stall test proves nothing: the server sent up to ${received:-nothing}, not past $ceiling"
kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
rm -f "$F/stall"
cdc-log verify --log "$T/log" -q || fail "after a SIGKILL during a stalled fdatasync: the log does not verify"
ok "fdatasync stalled: nothing received since is acknowledged (slot at $slot, log at $ceiling, sent $received)"
# Space is back: started again, capture recovers the log and goes on.
capture_bg
wait "$work" || true
wait_marker done
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"
wl_check
ok "after the faults: every committed transaction once, in order, tables reproduced"
