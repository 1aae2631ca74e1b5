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

# The cdc slot's confirmed_flush_lsn; an LSN X/Y as a number.
confirmed() {
  psql_q -c "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'cdc'"
}
lsn_num() { python3 -c "h, l = '$1'.split('/'); print(int(h, 16) << 32 | int(l, 16))"; }
# The position the log records as acknowledgeable (cdc-log info's
# flush_lsn): what is in its segments now, durable or about to be.
log_flush() {
  cdc-log info --log "${1:-$T/log}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["flush_lsn"])'
}
# check_acked WHAT: the slot is confirmed no further than the log reaches.
# The slot is read first: the log only grows, so a correct capture's
# acknowledgement is behind whatever the log holds a moment later.
check_acked() {
  local slot logpos
  slot=$(confirmed)
  logpos=$(log_flush)
  [ -z "$slot" ] || [ "$(lsn_num "$slot")" -le "$(lsn_num "$logpos")" ] ||
    fail "$1: the slot is confirmed at $slot, past the log's $logpos"
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

# as_least_privilege [TABLE,...]: from here on capture connects as
# cdc_least, the least-privilege role of cdc-capture(1): LOGIN REPLICATION
# and SELECT on the published tables, no superuser. The tables' owner makes
# the publication beforehand, as capture would (of the listed tables, or of
# all tables with SELECT on those made later too).
as_least_privilege() {
  local what="ALL TABLES" with="publish_via_partition_root = true"
  [ -n "${1:-}" ] && what="TABLE $1"
  [ "$PG_MAJOR" -ge 18 ] && with+=", publish_generated_columns = stored"
  psql_q <<SQL
CREATE ROLE cdc_least LOGIN REPLICATION;
CREATE PUBLICATION cdc FOR $what WITH ($with);
GRANT SELECT ON ALL TABLES IN SCHEMA public TO cdc_least;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO cdc_least;
SQL
  [ "$(psql_q -c "SELECT rolsuper OR rolcreatedb OR rolcreaterole FROM pg_roles WHERE rolname = 'cdc_least'")" = f ] ||
    fail "cdc_least has more than the least privilege"
  CDC_TEST_DSN=${CDC_TEST_DSN/user=postgres/user=cdc_least}
  [[ $CDC_TEST_DSN == *user=cdc_least* ]] || fail "no user in $CDC_TEST_DSN"
  export CDC_TEST_DSN
}
