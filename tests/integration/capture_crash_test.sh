#!/usr/bin/env bash
# While a workload commits, cdc-capture is SIGKILLed at random moments (at
# least 20 times) and restarted. Every committed transaction ends up in the
# log exactly once, in commit order, and replaying it reproduces the tables.
# Before every kill the slot is confirmed no further than the log reaches.
source "$(dirname "$0")/lib.sh"
source "$HERE/wl.sh"
KILLS=${KILLS:-22}
pg_start "$T"
wl_schema
as_least_privilege a,b,c
capture --table a,b,c --exit-when-idle
python3 "$HERE/workload.py" 1 ${TXNS:-12000} 7 > "$T/work.sql"
psql -X -q -f "$T/work.sql" > /dev/null 2>&1 &
work=$!
at_exit "kill $work"
kills=0
while [ "$kills" -lt "$KILLS" ]; do
  capture_bg
  sleep "0.$(( RANDOM % 40 + 10 ))"
  # Invariant 2 (docs/invariants.md) before every kill: PostgreSQL was told of nothing the log
  # does not hold.
  check_acked "before kill $((kills + 1))"
  kill -9 "$CAP" 2>/dev/null && kills=$((kills + 1))
  wait "$CAP" 2>/dev/null || true
done
kill -0 "$work" 2>/dev/null && busy=yes || busy=no
wait "$work" || true
capture_bg
wait_marker done
kill -TERM "$CAP"; wait "$CAP" || fail "capture did not exit 0 on SIGTERM"
wl_check
ok "$kills SIGKILLs of cdc-capture (workload still committing at the last: $busy)"
