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
capture --table ty --exit-when-idle
# Capture reports a table's types when its shape changes: the first insert
# makes PostgreSQL send the relation, the new column a schema event.
psql_q -c "INSERT INTO ty (id) VALUES (0)" -c "ALTER TABLE ty ADD COLUMN note text" \
  -c "SET TIME ZONE 'Europe/Paris'" \
  -c "INSERT INTO ty VALUES (1, -12.5, 12.5, '2026-11-29', '07:41:02.123456', '07:41:02.123',
      '2026-11-29 07:41:02.123456', '2026-11-29 07:41:02.123', '2026-11-29 08:41:02.1234+01',
      '\\x0102ff', '{\"a\": [1]}', '12.50')"
capture --table ty --exit-when-idle

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
assert a['tstz'] == '2026-11-29T07:41:02.123400Z', a
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

# A relation's first sight is a schema event too, recorded in the log's
# schema file: a table never altered renders by its types read from
# anywhere in the log, even once retention removed the segment that held
# its schema event. A second log: small segments, retention keeping 2.
psql_q -c "CREATE TABLE ty2 (id int PRIMARY KEY, amount numeric(10,2), pad text)" \
  -c "CREATE PUBLICATION ty2pub FOR TABLE ty2"
L2="$T/log2"
cap2() { cdc-capture --log "$L2" --dsn "$CDC_TEST_DSN" --slot ty2slot --publication ty2pub \
  --snapshot never --segment-size 64k -q --exit-when-idle; }
rows2() {  # rows2 FIRST LAST: one transaction each, about 1 KiB on disk
  for ((i = $1; i <= $2; i++)); do
    echo "INSERT INTO ty2 SELECT $i, $i.25, string_agg(md5('$i' || g), '') FROM generate_series(1, 32) g;"
  done | psql_q >/dev/null
}
cap2
rows2 1 200
cap2
rows2 201 220
cap2
cdc-log retain --log "$L2" --retain-segments 1 >/dev/null
[ "$(cdc-tail --log "$L2" --schema-changes --op s | wc -l)" = 0 ] ||
  fail "retention was to remove ty2's schema event from the log"
python3 - "$(cat "$L2/schemas.ndjson")" <<'PY' || fail "ty2's schema event is not in the schema file"
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines()]
assert [l["table"] for l in lines] == ["ty2"], lines
PY
first=$(cdc-log info --log "$L2" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["first_seq"])')
cdc-tail --log "$L2" --format debezium --from "$first" | python3 -c "
import base64, json, sys
rows = [json.loads(l)['after'] for l in sys.stdin]
assert rows, 'no rows'
for a in rows:
    unscaled = int.from_bytes(base64.b64decode(a['amount']), 'big', signed=True)
    assert unscaled == a['id'] * 100 + 25, a
" || fail "ty2's numeric is not converted when its schema event was retained away"
ok "first sight: a never-altered table renders by its types after retention removed its schema event"

# real, double precision, bit(n) and a date's infinities through real
# PostgreSQL, on both of the connector's paths: rows an initial snapshot
# read (op r) and rows streamed after it. Checked as text: Java's float
# and double digits are the point.
psql_q -c "CREATE TABLE fx (id int PRIMARY KEY, f4 real, f8 double precision,
  b16 bit(16), d date)" \
  -c "INSERT INTO fx VALUES (1, 3.4028235e38, 1e-310, B'0000000000000001', 'infinity'),
      (2, 0.1, 100, B'0000000000000000', '-infinity')" \
  -c "CREATE PUBLICATION fxpub FOR TABLE fx"
L3="$T/log3"
cap3() { cdc-capture --log "$L3" --dsn "$CDC_TEST_DSN" --slot fxslot --publication fxpub \
  -q --exit-when-idle; }
cap3
psql_q -c "INSERT INTO fx VALUES (3, 1e7, 0.0001, B'0000000100000000', 'infinity'),
  (4, -1.5, 1.7976931348623157e308, B'1000000000000000', '-infinity')"
cap3
cdc-tail --log "$L3" --format debezium | grep -o '"after":{[^}]*}' > "$T/fx"
cat > "$T/fx.want" <<'WANT'
"after":{"id":1,"f4":3.4028235E38,"f8":1.0E-310,"b16":"AQ==","d":-622191234}
"after":{"id":2,"f4":0.1,"f8":100.0,"b16":"","d":-625821272}
"after":{"id":3,"f4":1.0E7,"f8":1.0E-4,"b16":"AAE=","d":-2147472692}
"after":{"id":4,"f4":-1.5,"f8":1.7976931348623157E308,"b16":"AIA=","d":-2147472691}
WANT
diff "$T/fx.want" "$T/fx" >&2 || fail "real, double precision, bit(16) or date infinity differ from the connector's"
ok "real and double precision as Java prints them; bit(n) and a date's infinities per path"
