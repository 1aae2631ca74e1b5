#!/usr/bin/env bash
# Every column type and DML shape arrives as cdc-capture(1) (EVENTS) says.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
as_least_privilege
psql_q <<'SQL'
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TABLE types (
  id serial PRIMARY KEY, i2 int2, i4 int4, i8 int8, num numeric(20,5),
  f4 float4, f8 float8, b bool, t text, vc varchar(10), ch char(5), by bytea,
  j json, jb jsonb, u uuid, d date, tm time, tmtz timetz, ts timestamp,
  tstz timestamptz, iv interval, ia int4[], ta text[], m mood, dom posint,
  ip inet);
CREATE TABLE full_t (id int PRIMARY KEY, v text, big text);
ALTER TABLE full_t REPLICA IDENTITY FULL;
CREATE TABLE def_t (id int PRIMARY KEY, v text, big text);
-- Out-of-line, uncompressed: an untouched value is then sent as 'u'.
ALTER TABLE full_t ALTER COLUMN big SET STORAGE EXTERNAL;
ALTER TABLE def_t ALTER COLUMN big SET STORAGE EXTERNAL;
CREATE TABLE idx_t (a int NOT NULL, b int NOT NULL, v text);
CREATE UNIQUE INDEX idx_t_ab ON idx_t (a, b);
ALTER TABLE idx_t REPLICA IDENTITY USING INDEX idx_t_ab;
CREATE TABLE parted (id int, region text, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE parted_eu PARTITION OF parted FOR VALUES IN ('eu');
CREATE TABLE parted_us PARTITION OF parted FOR VALUES IN ('us');
SQL
capture --exit-when-idle   # creates slot and publication (via root)
psql_q >/dev/null <<'SQL'
INSERT INTO types (i2,i4,i8,num,f4,f8,b,t,vc,ch,by,j,jb,u,d,tm,tmtz,ts,tstz,iv,ia,ta,m,dom,ip) VALUES
 (-32768, 2147483647, 9223372036854775807, 12345678901234.56789, 1.5, 'NaN', true,
  'hé "quoted"\n', 'var', 'ab', '\x00ff10', '{"a": [1, 2.50]}', '{"b": {"c": null}}',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2026-11-29', '07:41:02.5', '07:41:02+05:30',
  '2026-11-29 07:41:02.123456', '2026-11-29 13:11:02.5+05:30', '1 day 02:03:04',
  '{1,NULL,3}', '{"a b","c,d",NULL,"NULL","q\"x"}', 'happy', 7, '192.168.0.1/24');
INSERT INTO types (f4, f8, num) VALUES ('Infinity', '-Infinity', 'NaN');
INSERT INTO types DEFAULT VALUES;
BEGIN;
INSERT INTO def_t VALUES (1, 'a', repeat('x', 10000)), (2, 'b', 'small');
INSERT INTO full_t VALUES (1, 'a', repeat('y', 10000));
INSERT INTO idx_t VALUES (1, 2, 'v');
COMMIT;
UPDATE def_t SET v = 'a2' WHERE id = 1;
UPDATE full_t SET v = 'a2' WHERE id = 1;
UPDATE def_t SET id = 10 WHERE id = 2;
UPDATE idx_t SET v = 'w' WHERE a = 1;
DELETE FROM def_t WHERE id = 10;
DELETE FROM full_t WHERE id = 1;
DELETE FROM idx_t WHERE a = 1;
BEGIN; INSERT INTO def_t VALUES (99, 'never', 'x'); ROLLBACK;
ALTER TABLE def_t ADD COLUMN extra int DEFAULT 5;
INSERT INTO def_t VALUES (3, 'c', 'z', 6);
ALTER TABLE def_t DROP COLUMN extra;
INSERT INTO def_t VALUES (4, 'd', 'z');
INSERT INTO parted VALUES (1, 'eu', 'p1'), (2, 'us', 'p2');
SELECT pg_logical_emit_message(true, 'app', 'hello');
SELECT pg_logical_emit_message(false, 'app', 'loose');
TRUNCATE def_t;
SQL
capture --exit-when-idle
cdc-log verify --log "$T/log" -q || fail "verify"
cdc-tail --log "$T/log" --schema-changes > "$T/events.ndjson"
python3 - "$T/events.ndjson" <<'PY'
import json, sys
def short(x):
    s = repr(x)
    return s if len(s) < 600 else s[:600] + "..."
evs = [json.loads(l) for l in open(sys.argv[1])]
def where(pred):
    r = [e for e in evs if pred(e)]
    return r
def one(pred, what):
    r = where(pred)
    assert len(r) == 1, (what, len(r), r)
    return r[0]
seqs = [e["seq"] for e in evs]
assert seqs == list(range(1, len(evs) + 1)), "seq not dense"
lsns = [int(e["lsn"].split("/")[0], 16) << 32 | int(e["lsn"].split("/")[1], 16) for e in evs]
assert lsns == sorted(lsns), "not in commit order"

ins = [e for e in evs if e.get("table") == "types" and e["op"] == "c"] if True else []
a = ins[0]["after"]
exp = {"id": 1, "i2": -32768, "i4": 2147483647, "i8": 9223372036854775807,
       "num": "12345678901234.56789", "f4": 1.5, "f8": "NaN", "b": True,
       "t": 'hé "quoted"\\n', "vc": "var", "ch": "ab   ", "by": "AP8Q",
       "j": {"a": [1, 2.50]}, "jb": {"b": {"c": None}},
       "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "d": "2026-11-29",
       "tm": "07:41:02.5", "tmtz": "07:41:02+05:30",
       "ts": "2026-11-29T07:41:02.123456", "tstz": "2026-11-29T07:41:02.500000Z",
       "iv": "1 day 02:03:04", "ia": [1, None, 3],
       "ta": ["a b", "c,d", None, "NULL", 'q"x'], "m": "happy", "dom": 7,
       "ip": "192.168.0.1/24"}
for k, v in exp.items():
    assert a[k] == v, (k, a[k], v)
assert ins[0]["key"] == {"id": 1} and ins[0]["before"] is None
b = ins[1]["after"]
assert (b["f4"], b["f8"], b["num"]) == ("Infinity", "-Infinity", "NaN"), b
c = ins[2]["after"]
nulls = [k for k in exp if k != "id"]
assert all(c[k] is None for k in nulls), c

# One transaction of three tables, in statement order, ending with "last";
# each table's first change comes after its schema event (the initial
# snapshot had no row of them, so no schema event either).
t = [e for e in evs if e["xid"] == one(lambda e: e.get("table") == "def_t" and e["op"] == "c" and e["after"]["id"] == 1, "def 1")["xid"]]
assert [(e["op"], e["table"]) for e in t] == [
    ("s", "def_t"), ("c", "def_t"), ("c", "def_t"), ("s", "full_t"), ("c", "full_t"),
    ("s", "idx_t"), ("c", "idx_t")], [(e["op"], e["table"]) for e in t]
assert [e.get("last", False) for e in t] == [False] * 6 + [True]
assert not [e for e in evs if e["xid"] == 0 and e["op"] == "s"], "schema events of empty tables"
ty = one(lambda e: e["op"] == "s" and e.get("table") == "types", "types schema")
assert ty["seq"] + 1 == ins[0]["seq"], "the schema event is not just before the first insert"
assert [c["type_oid"] for c in ty["columns"]][:5] == [23, 21, 23, 20, 1700], ty["columns"]
assert ty["columns"][4]["type_mod"] == (20 << 16 | 5) + 4, ty["columns"]
u_def = one(lambda e: e.get("table") == "def_t" and e["op"] == "u" and e["after"]["v"] == "a2", "update def")
assert u_def["before"] is None and u_def["key"] == {"id": 1}
assert "big" not in u_def["after"] and u_def["unchanged"] == ["big"], short(u_def)
u_full = one(lambda e: e.get("table") == "full_t" and e["op"] == "u", "update full")
assert u_full["before"] == {"id": 1, "v": "a", "big": "y" * 10000}
assert u_full["after"]["big"] == "y" * 10000 and "unchanged" not in u_full
pk = one(lambda e: e.get("table") == "def_t" and e["op"] == "u" and e["after"]["id"] == 10, "pk change")
assert pk["key"] == {"id": 2} and pk["before"] is None, pk
u_idx = one(lambda e: e.get("table") == "idx_t" and e["op"] == "u", "idx update")
assert u_idx["key"] == {"a": 1, "b": 2}, u_idx
d_def = one(lambda e: e.get("table") == "def_t" and e["op"] == "d", "delete def")
assert d_def["key"] == {"id": 10} and d_def["before"] is None and d_def["after"] is None
d_full = one(lambda e: e.get("table") == "full_t" and e["op"] == "d", "delete full")
assert d_full["before"]["big"] == "y" * 10000
d_idx = one(lambda e: e.get("table") == "idx_t" and e["op"] == "d", "delete idx")
assert d_idx["key"] == {"a": 1, "b": 2}
assert not where(lambda e: e.get("after") and e["after"].get("v") == "never"), "rollback leaked"
schema = where(lambda e: e["op"] == "s" and e.get("table") == "def_t")
assert len(schema) == 3, [c["seq"] for c in schema]  # first change, ADD, DROP
assert [c["name"] for c in schema[0]["columns"]] == ["id", "v", "big"]
assert [c["name"] for c in schema[1]["columns"]] == ["id", "v", "big", "extra"]
assert [c["name"] for c in schema[2]["columns"]] == ["id", "v", "big"]
e3 = one(lambda e: e.get("table") == "def_t" and e["op"] == "c" and e["after"]["id"] == 3, "insert with extra")
assert e3["after"]["extra"] == 6
e4 = one(lambda e: e.get("table") == "def_t" and e["op"] == "c" and e["after"]["id"] == 4, "insert after drop")
assert "extra" not in e4["after"]
p = where(lambda e: e.get("schema") == "public" and e.get("table") in ("parted", "parted_eu", "parted_us"))
assert [(e["op"], e["table"]) for e in p] == [("s", "parted"), ("c", "parted"), ("c", "parted")], p
m = one(lambda e: e["op"] == "m" and e["content"] == "hello", "message")
assert m["prefix"] == "app" and m["transactional"] is True
loose = one(lambda e: e["op"] == "m" and e["content"] == "loose", "loose message")
assert loose["transactional"] is False and loose.get("last") is True
tr = one(lambda e: e["op"] == "t", "truncate")
assert tr["table"] == "def_t" and tr["options"] == {"cascade": False, "restart_identity": False}
print("checked %d events" % len(evs))
PY
ok "type matrix, replica identities, TOAST, key change, schema change, partitions, messages, truncate"
