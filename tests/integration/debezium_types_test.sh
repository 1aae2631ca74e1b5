#!/usr/bin/env bash
# cdc-tail --format debezium renders values per PostgreSQL type as
# Debezium's PostgreSQL connector does (numeric, date, time, timestamp,
# timestamptz, bytea, jsonb), with the column types that capture records
# in a schema event, through real PostgreSQL; and in the other modes.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
psql_q -c "CREATE TABLE ty (id int PRIMARY KEY, amount numeric(10,2), ratio numeric,
  day date, at time, at3 time(3), ts timestamp, ts3 timestamp(3), tstz timestamptz,
  raw bytea, doc jsonb)"
capture --tables ty --exit-when-idle
# Capture reports a table's types when its shape changes: the first insert
# makes PostgreSQL send the relation, the new column a schema event.
psql_q -c "INSERT INTO ty (id) VALUES (0)" -c "ALTER TABLE ty ADD COLUMN note text" \
  -c "SET TIME ZONE 'Europe/Paris'" \
  -c "INSERT INTO ty VALUES (1, -12.5, 12.5, '2026-11-29', '07:41:02.123456', '07:41:02.123',
      '2026-11-29 07:41:02.123456', '2026-11-29 07:41:02.123', '2026-11-29 08:41:02.1234+01',
      '\\x0102ff', '{\"a\": [1]}', '12.50')"
capture --tables ty --exit-when-idle

check() {  # check PYTHON-ASSERTIONS FLAGS...: on the after of row 1
  local code=$1; shift
  cdc-tail --log "$T/log" --format debezium "$@" | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
a = [r['after'] for r in rows if r['after'] and r['after']['id'] == 1][0]
$code" || fail "cdc-tail --format debezium $*: $(cdc-tail --log "$T/log" --format debezium "$@" | tail -1)"
}
check "
assert a['amount'] == '+x4=', a            # -1250 unscaled, two's complement
assert a['ratio'] == {'scale': 1, 'value': 'fQ=='}, a
assert a['day'] == 20786, a
assert a['at'] == 27662123456 and a['at3'] == 27662123, a
assert a['ts'] == 1795938062123456 and a['ts3'] == 1795938062123, a
assert a['tstz'] == '2026-11-29T07:41:02.1234Z', a
assert a['raw'] == 'AQL/', a
assert json.loads(a['doc']) == {'a': [1]}, a
assert a['note'] == '12.50', a"
ok "defaults: precise, adaptive, bytes"
check "
assert a['amount'] == -12.5 and a['ratio'] == 12.5, a
assert a['at'] == 27662123 and a['ts'] == 1795938062123, a
assert a['raw'] == '0102ff', a" --decimal-handling double --time-precision connect --binary-handling hex
check "assert a['amount'] == '-12.50', a" --decimal-handling string
ok "--decimal-handling, --time-precision, --binary-handling"
