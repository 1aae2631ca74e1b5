#!/usr/bin/env bash
# Values come back out as they went in: a json/jsonb JSON null apart from SQL
# NULL (also in arrays), dates before 1 AD and past 9999 fed back with the
# conversion cdc-capture(1) gives, a dropped domain warned of, generated
# columns named in schema change events (and, from PostgreSQL 18, their
# values in rows when capture created the publication, not when an existing
# one does not publish them), and message content of a LATIN1 database
# converted to UTF-8.
source "$(dirname "$0")/lib.sh"
MAN="$HERE/../../man/cdc-capture.1"
pg_start "$T"
psql_q <<'SQL'
CREATE TABLE jv (id int PRIMARY KEY, j json, jb jsonb, ja json[], jba jsonb[]);
CREATE TABLE jv_back (LIKE jv);
CREATE TABLE "we/ird~" (id int PRIMARY KEY, "d/o~c" jsonb);
CREATE TABLE full_jv (id int PRIMARY KEY, jb jsonb);
ALTER TABLE full_jv REPLICA IDENTITY FULL;
CREATE TABLE dv (id int PRIMARY KEY, d date, ts timestamp, tstz timestamptz,
                 da date[], tsa timestamp[], tstza timestamptz[]);
CREATE TABLE dv_back (LIKE dv);
CREATE TABLE gen (id int PRIMARY KEY, a int, g int GENERATED ALWAYS AS (a * 2) STORED);
SQL
capture --exit-when-idle  # the slot exists before any change

# While capture is stopped: JSON nulls, dates, and a domain that is gone
# before capture reads the changes that used it.
psql_q <<'SQL'
INSERT INTO jv VALUES
  (1, 'null', 'null', ARRAY['null'::json, NULL, '{"a":null}'], ARRAY[NULL, 'null'::jsonb, '"null"']),
  (2, NULL, NULL, NULL, NULL),
  (3, '"null"', '[null]', '{}', '{}'),
  (4, ' null ', '{"k": null}', ARRAY[NULL::json], ARRAY['null'::jsonb, 'null'::jsonb]);
UPDATE jv SET jb = NULL, jba = ARRAY['null'::jsonb] WHERE id = 1;
INSERT INTO "we/ird~" VALUES (1, 'null');
INSERT INTO full_jv VALUES (1, 'null');
UPDATE full_jv SET id = 2;
DELETE FROM full_jv;
SET TimeZone = 'Asia/Kolkata';
INSERT INTO dv VALUES
  (1, '0001-12-31 BC', '0001-12-31 23:59:59.5 BC', '0001-01-01 00:30:00+01',
   '{"0001-12-31 BC","0001-01-01",NULL}', '{"0001-12-31 23:59:59.5 BC"}', '{"0001-01-01 00:30:00+01"}'),
  (2, '4713-11-24 BC', '4713-11-24 00:00:00 BC', '4713-11-24 12:00:00+00 BC',
   '{"4713-11-24 BC","0044-03-15 BC"}', '{"4713-11-24 00:00:00 BC"}', '{"4713-11-24 12:00:00+00 BC"}'),
  (3, '0001-01-01', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00',
   '{0001-01-01}', '{"0001-01-01 00:00:00.000001"}', '{"0001-01-01 05:29:59+05:30"}'),
  (4, '9999-12-31', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00',
   '{9999-12-31,10000-01-01}', '{"9999-12-31 23:59:59.999999","294276-12-31 23:59:59"}',
   '{"9999-12-31 23:30:00-01"}'),
  (5, 'infinity', 'infinity', '-infinity', '{infinity,-infinity}', '{-infinity}', '{infinity}');
CREATE DOMAIN gone AS integer CHECK (VALUE > 0);
CREATE TABLE dom_t (id int PRIMARY KEY, v gone, va gone[]);
CREATE TABLE dom_t2 (id int PRIMARY KEY, v gone, va gone[]);
INSERT INTO dom_t VALUES (1, 7, '{8}');
INSERT INTO dom_t2 VALUES (1, 11, '{12}');
INSERT INTO dom_t VALUES (2, 9, '{10}');
DROP TABLE dom_t, dom_t2;
DROP DOMAIN gone;
SQL
capture --exit-when-idle 2> "$T/catchup.err"
n=$(grep -c "cdc-capture: warning: cannot look up type public._gone (its values render as strings)" "$T/catchup.err" || true)
[ "$n" = 1 ] || fail "expected one warning about the dropped domain's array type, got $n: $(cat "$T/catchup.err")"
[ "$(wc -l < "$T/catchup.err")" = 1 ] || fail "other messages: $(cat "$T/catchup.err")"

# While capture runs: generated columns, named in the schema change event.
capture_bg
psql_q -c "INSERT INTO gen (id, a) VALUES (1, 5)"
wait_marker g1
if [ "$PG_MAJOR" -ge 18 ]; then  # also a virtual one: never sent
  psql_q -c "ALTER TABLE gen ADD COLUMN g2 text GENERATED ALWAYS AS (a::text || 'x') STORED,
                             ADD COLUMN gv int GENERATED ALWAYS AS (a + 1) VIRTUAL"
else
  psql_q -c "ALTER TABLE gen ADD COLUMN g2 text GENERATED ALWAYS AS (a::text || 'x') STORED"
fi
psql_q -c "INSERT INTO gen (id, a) VALUES (2, 6)"
wait_marker g2
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"
cdc-tail --log "$T/log" --schema-changes > "$T/events.ndjson"

# The conversion function exactly as the man page prints it.
sed -n '/^CREATE FUNCTION cdc_datetime/,/^\$\$;/p' "$MAN" |
  sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" > "$T/cdc_datetime.sql"
grep -q "CREATE FUNCTION cdc_datetime" "$T/cdc_datetime.sql" || fail "no cdc_datetime in the man page"
psql_q -f "$T/cdc_datetime.sql"

python3 - "$T/events.ndjson" "$T/back.sql" "$PG_MAJOR" <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
# Each table's first sight is a schema event before its first change (the
# initial snapshot's, for tables it copied); set those aside.
first_sight, rest = {}, []
for e in evs:
    if e["op"] == "s" and e["table"] not in first_sight:
        first_sight[e["table"]] = e
    else:
        rest.append(e)
evs = rest
changed = {e["table"] for e in evs if e["op"] in "cudtr"}
assert changed <= set(first_sight), (changed - set(first_sight))
out = open(sys.argv[2], "w")
def q(s):
    return "'" + s.replace("'", "''") + "'"
def jsonval(v, pointer, nulls, typ):
    if v is None:
        return ("'null'::" if pointer in nulls else "NULL::") + typ
    return q(json.dumps(v, ensure_ascii=False)) + "::" + typ
def jsonarr(v, pointer, nulls, typ):
    if v is None:
        return "NULL::%s[]" % typ
    return "ARRAY[%s]::%s[]" % (",".join(jsonval(x, "%s/%d" % (pointer, i), nulls, typ)
                                         for i, x in enumerate(v)), typ) if v else "'{}'::%s[]" % typ
def dt(v, typ):
    return "NULL::" + typ if v is None else "cdc_datetime(%s)::%s" % (q(v), typ)
def dtarr(v, typ):
    return "NULL::%s[]" % typ if v is None else "ARRAY[%s]::%s[]" % (",".join(dt(x, typ) for x in v), typ)

jv = {}
for e in evs:
    nulls = set(e.get("json_null", []))
    if e.get("table") == "jv" and e["op"] in "cu":
        a = e["after"]
        jv[a["id"]] = "(%d, %s, %s, %s, %s)" % (
            a["id"], jsonval(a["j"], "/after/j", nulls, "json"), jsonval(a["jb"], "/after/jb", nulls, "jsonb"),
            jsonarr(a["ja"], "/after/ja", nulls, "json"), jsonarr(a["jba"], "/after/jba", nulls, "jsonb"))
    if e.get("table") == "dv":
        a = e["after"]
        out.write("INSERT INTO dv_back VALUES (%d, %s, %s, %s, %s, %s, %s);\n" % (
            a["id"], dt(a["d"], "date"), dt(a["ts"], "timestamp"), dt(a["tstz"], "timestamptz"),
            dtarr(a["da"], "date"), dtarr(a["tsa"], "timestamp"), dtarr(a["tstza"], "timestamptz")))
for k in sorted(jv):
    out.write("INSERT INTO jv_back VALUES %s;\n" % jv[k])

def one(pred, what):
    r = [e for e in evs if pred(e)]
    assert len(r) == 1, (what, r)
    return r[0]
# The pointers themselves, where SQL NULL and JSON null sit side by side.
e1 = one(lambda e: e.get("table") == "jv" and e["op"] == "c" and e["after"]["id"] == 1, "jv 1")
assert e1["json_null"] == ["/after/j", "/after/jb", "/after/ja/0", "/after/jba/1"], e1
assert e1["after"]["ja"] == [None, None, {"a": None}], e1
e2 = one(lambda e: e.get("table") == "jv" and e["op"] == "c" and e["after"]["id"] == 2, "jv 2")
assert "json_null" not in e2, e2
u1 = one(lambda e: e.get("table") == "jv" and e["op"] == "u", "jv update")
assert u1["json_null"] == ["/after/j", "/after/ja/0", "/after/jba/0"], u1
w = one(lambda e: e.get("table") == "we/ird~", "escaped names")
assert w["json_null"] == ["/after/d~1o~0c"], w
fu = one(lambda e: e.get("table") == "full_jv" and e["op"] == "u", "full update")
assert fu["json_null"] == ["/key/jb", "/before/jb", "/after/jb"], fu
fd = one(lambda e: e.get("table") == "full_jv" and e["op"] == "d", "full delete")
assert fd["json_null"] == ["/key/jb", "/before/jb"], fd
# Dates as the man page describes them.
d1 = one(lambda e: e.get("table") == "dv" and e["after"]["id"] == 1, "dv 1")["after"]
assert d1["d"] == "0000-12-31" and d1["ts"] == "0000-12-31T23:59:59.5", d1
assert d1["tstz"] == "0000-12-31T23:30:00.000000Z" and d1["da"] == ["0000-12-31", "0001-01-01", None], d1
d2 = one(lambda e: e.get("table") == "dv" and e["after"]["id"] == 2, "dv 2")["after"]
assert d2["d"] == "-4712-11-24" and d2["da"] == ["-4712-11-24", "-0043-03-15"], d2
d4 = one(lambda e: e.get("table") == "dv" and e["after"]["id"] == 4, "dv 4")["after"]
assert d4["da"] == ["9999-12-31", "+10000-01-01"] and d4["tstza"] == ["+10000-01-01T00:30:00.000000Z"], d4
# The dropped domain renders as its base type, as it would have while it
# existed; its array type, which nothing describes any more, as strings.
dom = [e["after"] for e in evs if e.get("table") in ("dom_t", "dom_t2")]
assert dom == [{"id": 1, "v": 7, "va": "{8}"}, {"id": 1, "v": 11, "va": "{12}"},
               {"id": 2, "v": 9, "va": "{10}"}], dom
# Generated columns: named in the schema change; in the rows only from
# PostgreSQL 18, where capture's publication publishes the stored ones.
gen = [e for e in evs if e.get("table") == "gen"]
assert [e["op"] for e in gen] == ["c", "s", "c"], gen
if int(sys.argv[3]) >= 18:
    assert gen[0]["after"] == {"id": 1, "a": 5, "g": 10}, gen
    assert gen[2]["after"] == {"id": 2, "a": 6, "g": 12, "g2": "6x"}, gen
    assert [c["name"] for c in gen[1]["columns"]] == ["id", "a", "g", "g2"], gen[1]
    assert gen[1]["generated"] == ["g", "g2", "gv"], gen[1]
else:
    assert gen[0]["after"] == {"id": 1, "a": 5} and gen[2]["after"] == {"id": 2, "a": 6}, gen
    assert [c["name"] for c in gen[1]["columns"]] == ["id", "a"], gen[1]
    assert gen[1]["generated"] == ["g", "g2"], gen[1]
PY

psql_q -f "$T/back.sql" >/dev/null
same() {  # TABLE COLUMNS-EXPRESSION: every row came back identical
  local n
  n=$(psql_q -c "SELECT count(*) FROM $1 a FULL JOIN $1_back b USING (id)
                 WHERE ($2) IS NOT DISTINCT FROM ($(echo "$2" | sed 's/a\./b./g'))")
  [ "$n" = "$(psql_q -c "SELECT count(*) FROM $1")" ] && [ "$n" = "$(psql_q -c "SELECT count(*) FROM $1_back")" ] ||
    fail "$1: only $n rows came back identical: $(psql_q -c "TABLE $1_back")"
}
same jv "a.j::jsonb, a.jb, a.ja::jsonb[], a.jba"
ok "json/jsonb JSON null and SQL NULL come back apart, top level and in arrays"
same dv "a.d, a.ts, a.tstz, a.da, a.tsa, a.tstza"
ok "dates 4713 BC to 294276 AD and infinities come back with the man page's cdc_datetime"
ok "a dropped domain renders as its base type; its array type is warned of once and rendered as strings"
if [ "$PG_MAJOR" -ge 18 ]; then
  ok "stored generated columns are in rows on PostgreSQL $PG_MAJOR, virtual ones not; all named in schema change events"
  # A publication that exists is used as it is: without
  # publish_generated_columns, their values are not sent.
  psql_q -c "CREATE PUBLICATION plain FOR TABLE gen"
  cdc-capture --log "$T/plain" --dsn "$CDC_TEST_DSN" --slot plain --publication plain -q --exit-when-idle
  psql_q -c "INSERT INTO gen (id, a) VALUES (3, 7)"
  cdc-capture --log "$T/plain" --dsn "$CDC_TEST_DSN" --slot plain --publication plain -q --exit-when-idle
  # Rows 1 and 2 come from the initial snapshot, row 3 from the stream:
  # neither carries the generated columns this publication does not send.
  got=$(cdc-tail --log "$T/plain" --table gen | python3 -c 'import json,sys; print([(json.loads(l)["op"], json.loads(l)["after"]) for l in sys.stdin])')
  [ "$got" = "[('r', {'id': 1, 'a': 5}), ('r', {'id': 2, 'a': 6}), ('c', {'id': 3, 'a': 7})]" ] ||
    fail "an existing publication's generated columns: $got"
  psql_q -c "SELECT pg_drop_replication_slot('plain')" >/dev/null
  ok "an existing publication without publish_generated_columns is used as it is"
else
  ok "generated columns are left out of rows and named in schema change events"
fi

# A LATIN1 database: message content is converted as row values are.
psql_q -c "CREATE DATABASE l1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
L1_DSN="host=$PGHOST port=$PGPORT user=postgres dbname=l1"
export PGCLIENTENCODING=UTF8  # what this script's text is in
psql_q -d l1 -c "CREATE TABLE t (id int PRIMARY KEY, v text)"
cdc-capture --log "$T/l1" --dsn "$L1_DSN" --slot l1 -q --exit-when-idle
psql_q -d l1 >/dev/null <<'SQL'
BEGIN;
INSERT INTO t VALUES (1, 'café ÿ');
SELECT pg_logical_emit_message(true, 'préfixe', 'café ÿ');
COMMIT;
SELECT pg_logical_emit_message(false, 'préfixe', 'naïve');
SELECT pg_logical_emit_message(false, 'bin', '\xff00e9'::bytea);
INSERT INTO t VALUES (2, 'flushes the WAL of the messages');
SQL
cdc-capture --log "$T/l1" --dsn "$L1_DSN" --slot l1 -q --exit-when-idle
cdc-tail --log "$T/l1" --schema-changes > "$T/l1.ndjson"
python3 - "$T/l1.ndjson" <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
row = [e for e in evs if e["op"] == "c"][0]  # the first
assert row["after"]["v"] == "café ÿ", row
ms = [e for e in evs if e["op"] == "m"]
assert [(m["prefix"], m["content"], m["transactional"]) for m in ms] == [
    ("préfixe", "café ÿ", True), ("préfixe", "naïve", False), ("bin", "ÿ\u0000é", False)], ms
assert all("content_encoding" not in m for m in ms), ms
PY
ok "message content of a LATIN1 database is converted to UTF-8, like row values"
