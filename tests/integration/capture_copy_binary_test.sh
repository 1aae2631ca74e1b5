#!/usr/bin/env bash
# The initial snapshot copies a table whose columns are all of the types
# pg/copy_binary.h decodes (bool, int2/4/8, oid, text, varchar, bpchar,
# name, uuid, json, jsonb) with binary COPY, and any other table with text
# COPY; either way each value is what pgoutput streams for it. The oracle
# is pgoutput itself: the same rows, inserted after the snapshot into a
# twin table, stream through the slot, and the two `after` objects of
# every row must be equal. The server's statement log shows which COPY
# each table got.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
psql_q <<'SQL'
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE TABLE bt (id bigint PRIMARY KEY, i2 int2, i4 int4, o oid, b bool,
                 tx text, vc varchar(20), bp char(5), nm name, u uuid,
                 j json, jb jsonb);
CREATE TABLE bt_back (LIKE bt INCLUDING ALL);
-- A timestamptz, a numeric and a domain: text COPY.
CREATE TABLE mixed (id int PRIMARY KEY, tx text, ts timestamptz, n numeric,
                    d posint);
CREATE TABLE mixed_back (LIKE mixed INCLUDING ALL);
INSERT INTO bt VALUES
  (-9223372036854775808, -32768, -2147483648, 0, true,
   E'tab\there\nnew line \\ backslash', 'x', 'ab', 'a name', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
   '{ "k" : [1, 2.50, "x"], "k": null }', '{"b": [1, {"c": null}], "a": "é"}'),
  (9223372036854775807, 32767, 2147483647, 4294967295, false,
   E'\\N', '', '     ', '', '00000000-0000-0000-0000-000000000000',
   'null', 'null'),
  (0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (7, 0, 0, 1, true, E'ünïcødé 😀 \x01 ctrl', repeat('v', 20), 'abcde',
   repeat('n', 63), 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '"str"', '[]');
INSERT INTO bt SELECT g, g % 32767, g * 7, g, g % 2 = 0, md5(g::text),
  left(md5(g::text), 20), left(md5(g::text), g % 6), 'n' || g,
  md5(g::text)::uuid, json_build_object('g', g), jsonb_build_object('g', g)
  FROM generate_series(100, 2099) g;
INSERT INTO mixed VALUES
  (1, E'a\tb', '2024-02-29 12:34:56.789+05:30', 1234567890.0123456789, 5),
  (2, NULL, '-infinity', 'NaN', NULL);
ALTER SYSTEM SET log_statement = 'all';
SELECT pg_reload_conf() \gset
SQL
capture --exit-when-idle --snapshot-jobs 2
psql_q -c "INSERT INTO bt_back SELECT * FROM bt" \
       -c "INSERT INTO mixed_back SELECT * FROM mixed" >/dev/null
capture --exit-when-idle

grep -q 'COPY "public"."bt" (.*) TO STDOUT (FORMAT binary)' "$T/pg.log" ||
  fail "bt was not copied with binary COPY"
grep 'COPY "public"."mixed" (' "$T/pg.log" | grep -q 'TO STDOUT$' ||
  fail "mixed was not copied with text COPY"
grep -q 'COPY "public"."mixed" (.*(FORMAT binary)' "$T/pg.log" &&
  fail "mixed (timestamptz, numeric, a domain) was copied in binary"
ok "binary COPY for bt's types, text COPY for a table with others"

cdc-tail --log "$T/log" > "$T/events"
python3 - "$T/events" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("op") not in ("r", "c"):
        continue
    rows.setdefault((e["table"], e["op"]), {})[json.dumps(e["key"], sort_keys=True)] = e["after"]
def same(a, b):
    snap, streamed = rows[(a, "r")], rows[(b, "c")]
    assert len(snap) == len(streamed) > 0, (a, len(snap), len(streamed))
    for k, v in snap.items():
        assert streamed[k] == v, (a, k, v, streamed.get(k))
    return len(snap)
n = same("bt", "bt_back")
m = same("mixed", "mixed_back")
assert n == 2004 and m == 2, (n, m)
row = rows[("bt", "r")]['{"id": -9223372036854775808}']
assert row["tx"] == "tab\there\nnew line \\ backslash", row
assert row["o"] == 0 and row["bp"] == "ab   ", row
row = rows[("bt", "r")]['{"id": 9223372036854775807}']
assert row["o"] == 4294967295 and row["tx"] == "\\N" and row["bp"] == "     ", row
print("ok - %d snapshot rows (binary) and %d (text) equal what pgoutput streams" % (n, m))
PY
