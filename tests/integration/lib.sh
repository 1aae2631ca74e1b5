# Shared setup for the integration tests: built tools on PATH, a scratch
# directory, and a throwaway PostgreSQL 15 (scripts/pg.sh) stopped on exit.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../scripts/pg.sh"
on_exit_extra() { pg_stop; }
CDC_TEST_KIND=it
source "$HERE/../common.sh"
capture() { cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" -q "$@"; }
# Starts cdc-capture in the background; its pid in $CAP.
capture_bg() { cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" -q "$@" 2>>"$T/capture.err" & CAP=$!; }
# Waits until a logical message with this content is in the log.
wait_marker() {
  psql_q -c "SELECT pg_logical_emit_message(true, 'cdc-test', '$1')" >/dev/null
  for _ in $(seq 600); do
    cdc-tail --log "$T/log" --op m 2>/dev/null | grep -q "\"content\":\"$1\"" && return 0
    sleep 0.1
  done
  fail "marker $1 never reached the log"
}

# wait_slot SQL-CONDITION TRIES DELAY: polls until the cdc slot's row meets
# the condition (e.g. "confirmed_flush_lsn >= '0/1'::pg_lsn").
wait_slot() {
  local adv=f
  for _ in $(seq "$2"); do
    adv=$(psql_q -c "SELECT $1 FROM pg_replication_slots WHERE slot_name = 'cdc'")
    [ "$adv" = t ] && return 0
    sleep "$3"
  done
  return 1
}
