#!/usr/bin/env bash
# cdc-capture on a MariaDB binlog: every column type with edge values,
# checked three ways: against mariadb-binlog --verbose decoding the same
# binlog (every row change once, in order), against the values themselves
# (every rendered value fed back into MariaDB gives the source row back),
# and against expected renderings for the forms the log defines. Then the
# tools after capture on the MariaDB log, and the refused settings.
source "$(dirname "$0")/maria_lib.sh"

maria_start "$T/m1"
# A new log of a database without tables: an empty snapshot, then the
# stream from the server's position.
expect_exit 0 mcapture --exit-when-idle

msql shop <<'SQL'
CREATE TABLE types (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
  bi BIGINT, biu BIGINT UNSIGNED,
  f FLOAT, d DOUBLE,
  dec1 DECIMAL(65,30), dec2 DECIMAL(10,2), dec3 DECIMAL(5,0),
  b1 BIT(1), b13 BIT(13), b64 BIT(64),
  y YEAR, dt DATE, tm TIME, tm6 TIME(6), tm3 TIME(3),
  dtm DATETIME, dtm6 DATETIME(6), dtm2 DATETIME(2),
  ts TIMESTAMP(6) NULL DEFAULT NULL, ts0 TIMESTAMP NULL DEFAULT NULL,
  c CHAR(10), vc VARCHAR(300), txt TEXT, mtxt MEDIUMTEXT,
  lat VARCHAR(20) CHARACTER SET latin1,
  emoji VARCHAR(20) CHARACTER SET utf8mb4,
  u16 VARCHAR(10) CHARACTER SET utf16,
  bin BINARY(4), vbin VARBINARY(20), blb BLOB, lblb LONGBLOB,
  e ENUM('small','médium','large'), st SET('a','b','c','é'),
  j JSON,
  g GEOMETRY
);
SET time_zone = '+00:00', sql_mode = 'NO_ENGINE_SUBSTITUTION';
INSERT INTO types VALUES (
  1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615,
  -1.5, -0.0,
  '-12345678901234567890123456789012345.123456789012345678901234567890',
  '-0.01', 99999,
  b'1', b'1010101010101', b'1111111111111111111111111111111111111111111111111111111111111111',
  1901, '0000-00-00', '-838:59:59', '-00:00:00.000001', '12:34:56.789',
  '0000-00-00 00:00:00', '9999-12-31 23:59:59.999999', '2024-02-29 01:02:03.45',
  '2038-01-19 03:14:07.999999', '1970-01-01 00:00:01',
  'pad', REPEAT('x', 300), 'line\nbreak "quoted" \\ back', REPEAT('m', 70000),
  CONCAT('caf', X'E9', ' ', X'80', X'81'), '😀 emoji ✓', 'ü€',
  X'00FF0000', X'DEADBEEF', X'', X'00010203',
  'médium', 'a,c,é',
  '{"k": [1, 2.5, null, "s"]}',
  ST_GeomFromText('POINT(1 2)', 4326)
);
INSERT INTO types (id) VALUES (2);
INSERT INTO types (id, f, d, dec2, y, dt, tm, dtm, e, st, b13) VALUES
  (3, 3.4028235e38, 1.7976931348623157e308, 12345678.99, 0, '1000-01-01',
   '838:59:59', '1000-01-01 00:00:00', '', '', b'0');
UPDATE types SET vc = 'changed', tm3 = '-00:00:01.5' WHERE id = 1;
DELETE FROM types WHERE id = 2;
SQL

expect_exit 0 mcapture --exit-when-idle
cdc-log verify --log "$T/log" >/dev/null || fail "cdc-log verify on the MariaDB log"

# Peer oracle: the same row changes, once each, in binlog order.
binlog_rows > "$T/peer"
log_rows > "$T/ours"
[ -s "$T/peer" ] || fail "mariadb-binlog shows no row of shop"
diff "$T/peer" "$T/ours" > "$T/diff" || { cat "$T/diff" >&2; fail "log and mariadb-binlog disagree"; }
ok "every row change mariadb-binlog decodes is in the log once, in order ($(wc -l < "$T/peer") rows)"

# The snapshot path: a new log of the same tables copies them over
# prepared statements; every row and every schema event equals what the
# binlog path ends with (the type matrix, through both paths).
msql shop <<'SQL'
CREATE TABLE ext (id INT PRIMARY KEY, x UUID, i6 INET6, i4 INET4,
  v INT AS (id * 2) VIRTUAL, s INT AS (id * 3) PERSISTENT,
  h INT INVISIBLE DEFAULT 7, e ENUM('it''s', 'a\\b', 'x,y'),
  bare GEOMETRY, p POINT) ENGINE=MyISAM;
INSERT INTO ext (id, x, i6, i4, e, bare, p) VALUES
  (1, '00112233-4455-6677-8899-aabbccddeeff', '::1', '10.0.0.1', 'it''s',
   ST_GeomFromText('LINESTRING(0 0, 1 1)'), POINT(3, 4)),
  (2, '6ccd780c-baba-1026-9564-5b8c656024db', 'fe80::1', '255.255.255.255',
   'a\\b', NULL, NULL);
SQL
expect_exit 0 mcapture --exit-when-idle
cdc-capture --log "$T/snap" --dsn "$MARIA_DSN" -q --exit-when-idle 2>"$T/err" ||
  fail "snapshot: $(cat "$T/err")"
grep -q "ext is MyISAM, not transactional" "$T/err" || fail "no warning for a MyISAM table: $(cat "$T/err")"
cdc-tail --log "$T/log" --schema-changes > "$T/streamed"
cdc-tail --log "$T/snap" --schema-changes > "$T/snapped"
python3 - "$T/streamed" "$T/snapped" <<'PY' || fail "snapshot and stream disagree"
import json, sys
def state(path, ops):
    rows, shapes = {}, {}
    for line in open(path):
        e = json.loads(line)
        t = e["table"]
        if e["op"] == "s":
            shapes[t] = e["columns"]
            continue
        assert e["op"] in ops, e["op"]
        k = e["key"]["id"]
        if e["op"] == "d":
            rows[t].pop(k)
        else:
            rows.setdefault(t, {})[k] = e["after"]
    return rows, shapes
streamed, sshapes = state(sys.argv[1], "cud")
snapped, pshapes = state(sys.argv[2], "r")
bad = []
for t in sorted(set(streamed) | set(snapped)):
    a, b = streamed.get(t, {}), snapped.get(t, {})
    for k in sorted(set(a) | set(b)):
        for c in sorted(set(a.get(k, {})) | set(b.get(k, {}))):
            x, y = a.get(k, {}).get(c, "absent"), b.get(k, {}).get(c, "absent")
            if x != y:
                bad.append("%s id %s column %s: streamed %r, snapshot %r" % (t, k, c, x, y))
    if sshapes.get(t) != pshapes.get(t):
        bad.append("%s: schema events differ:\n %s\n %s" % (t, sshapes.get(t), pshapes.get(t)))
if sorted(snapped) != ["ext", "types"] or len(snapped["types"]) != 2 or len(snapped["ext"]) != 2:
    bad.append("snapshot rows: %s" % {t: len(r) for t, r in snapped.items()})
if bad:
    sys.exit("\n".join(bad))
PY
ok "the type matrix reads the same through the snapshot and the binlog: every value and schema event"

# Renderings the log defines, value by value.
cdc-tail --log "$T/log" --table 'shop.types' --op c | head -1 > "$T/row1"
python3 - "$T/row1" <<'PY'
import json, sys
e = json.loads(open(sys.argv[1]).read())
a = e["after"]
want = {
  "ti": -128, "tiu": 255, "si": -32768, "siu": 65535, "mi": -8388608,
  "miu": 16777215, "i": -2147483648, "iu": 4294967295,
  "bi": -9223372036854775808, "biu": 18446744073709551615,
  "f": -1.5,
  "dec1": "-12345678901234567890123456789012345.123456789012345678901234567890",
  "dec2": "-0.01", "dec3": "99999",
  "b1": "1", "b13": "1010101010101", "b64": "1" * 64,
  "y": 1901, "dt": "0000-00-00", "tm": "-838:59:59", "tm6": "-00:00:00.000001",
  "tm3": "12:34:56.789", "dtm": "0000-00-00T00:00:00",
  "dtm6": "9999-12-31T23:59:59.999999", "dtm2": "2024-02-29T01:02:03.45",
  "ts": "2038-01-19T03:14:07.999999Z", "ts0": "1970-01-01T00:00:01Z",
  "c": "pad", "vc": "x" * 300, "txt": 'line\nbreak "quoted" \\ back',
  "lat": "caf\u00e9 \u20ac\u0081", "emoji": "\U0001F600 emoji \u2713",
  "u16": "\u00fc\u20ac",
  "bin": "AP8AAA==", "vbin": "3q2+7w==", "blb": "", "lblb": "AAECAw==",
  "e": "m\u00e9dium", "st": "a,c,\u00e9",
  "j": '{"k": [1, 2.5, null, "s"]}',
  "g": {"srid": 4326, "wkb": "AQEAAAAAAAAAAADwPwAAAAAAAABA"},
}
bad = [f"{k}: got {a.get(k)!r}, want {v!r}" for k, v in want.items() if a.get(k) != v]
if a["d"] != 0 or len(a["mtxt"]) != 70000:
    bad.append(f"d or mtxt: {a['d']!r} {len(a['mtxt'])}")
if e["key"] != {"id": 1} or e["before"] is not None or e["schema"] != "shop":
    bad.append("key/before/schema: " + json.dumps([e["key"], e["before"], e["schema"]]))
if not e["gtid"].startswith("0-1-") or e["file"] != "binlog.000001":
    bad.append("position fields: " + json.dumps([e["gtid"], e["file"], e["pos"]]))
if bad:
    sys.exit("\n".join(bad))
PY
ok "each type renders as cdc-capture(1) says (integers of every width, exact decimals, zero dates, BIT, TIME2 signs, charsets, ENUM/SET, geometry)"

# An update carries the whole row before and after; a delete the old row.
cdc-tail --log "$T/log" --op u > "$T/upd"
python3 - "$T/upd" <<'PY'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
assert e["before"]["vc"] == "x" * 300 and e["after"]["vc"] == "changed", e
assert e["after"]["tm3"] == "-00:00:01.5", e["after"]["tm3"]
assert e["key"] == {"id": 1}
PY
ok "updates carry the whole row before and after"

# Round trip: every row the log ends with, written back through SQL, equals
# the source row (compared by MariaDB itself, column by column).
msql shop -e "CREATE TABLE back LIKE types"
cdc-tail --log "$T/log" --table 'shop.types' | python3 -c '
import base64, json, sys
cols = None
rows = {}
for line in sys.stdin:
    e = json.loads(line)
    if e["op"] in "cu":
        rows[e["after"]["id"]] = e["after"]
    elif e["op"] == "d":
        rows.pop(e["key"]["id"], None)
BIN = {"bin", "vbin", "blb", "lblb"}
def lit(k, v):
    if v is None:
        return "NULL"
    if k in BIN:
        return "FROM_BASE64(%s)" % q(v)
    if k.startswith("b") and k[1:].isdigit():
        return "b\x27%s\x27" % v
    if k == "g":
        return "ST_GeomFromWKB(FROM_BASE64(%s), %d)" % (q(v["wkb"]), v["srid"])
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return repr(v)
    if k in ("ts", "ts0"):
        v = v.rstrip("Z")
    return q(v)
def q(s):
    return "_utf8mb4 0x" + s.encode().hex() if s else "\x27\x27"
print("SET time_zone = \x27+00:00\x27, sql_mode = \x27NO_ENGINE_SUBSTITUTION\x27;")
for r in rows.values():
    ks = list(r)
    print("INSERT INTO back (%s) VALUES (%s);" % (
        ", ".join("`%s`" % k for k in ks), ", ".join(lit(k, r[k]) for k in ks)))
' > "$T/back.sql"
msql shop < "$T/back.sql" 2>&1 | tail -c 600 >&2
diffs=$(msql shop -e "SELECT COUNT(*) FROM (SELECT * FROM types EXCEPT SELECT * FROM back
  UNION ALL SELECT * FROM back EXCEPT SELECT * FROM types) x")
[ "$diffs" = 0 ] || fail "round trip: $diffs rows differ"
n=$(msql shop -e "SELECT COUNT(*) FROM back")
[ "$n" = 2 ] || fail "round trip wrote $n rows"
ok "every rendered value fed back into MariaDB equals the source row"

# A column added and one retyped mid-stream: a new schema event, and rows
# before and after it rendered by their own shapes.
msql shop <<'SQL'
CREATE TABLE evo (id INT PRIMARY KEY, a INT);
INSERT INTO evo VALUES (1, 10);
ALTER TABLE evo ADD COLUMN b VARCHAR(10) DEFAULT 'x', MODIFY a BIGINT UNSIGNED;
INSERT INTO evo VALUES (2, 18446744073709551615, 'y');
ALTER TABLE evo DROP COLUMN b;
UPDATE evo SET a = 3 WHERE id = 1;
TRUNCATE TABLE evo;
SQL
expect_exit 0 mcapture --exit-when-idle
cdc-tail --log "$T/log" --table shop.evo --schema-changes > "$T/evo"
python3 - "$T/evo" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
rows = [e for e in ev if e["op"] in "cud"]
shapes = [[c["type"] for c in e["columns"]] for e in ev if e["op"] == "s"]
assert shapes == [["int", "int"], ["int", "bigint unsigned", "varchar"],
                  ["int", "bigint unsigned"]], shapes
assert [r["op"] for r in rows] == ["c", "c", "u"], rows
assert rows[0]["after"] == {"id": 1, "a": 10}, rows[0]
assert rows[1]["after"] == {"id": 2, "a": 18446744073709551615, "b": "y"}, rows[1]
assert rows[2]["after"] == {"id": 1, "a": 3}, rows[2]
assert ev[-1]["op"] == "t", ev[-1]
PY
ok "added, retyped and dropped columns render right before and after; TRUNCATE is an event"

# The tools after capture work on a MariaDB log unchanged.
cdc-tail --log "$T/log" -c app -n 3 > "$T/c1"
[ "$(wc -l < "$T/c1")" = 3 ] || fail "cdc-tail -c"
cdc-ack --log "$T/log" -c app "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["seq"])' "$T/c1")"
cdc-log consumers --log "$T/log" | grep -q app || fail "cdc-log consumers"
for fmt in debezium cloudevents; do
  cdc-tail --log "$T/log" --format "$fmt" > "$T/$fmt" || fail "cdc-tail --format $fmt"
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/$fmt"
done
grep -q '"source":"cdc://mariadb/shop/' "$T/cloudevents" || fail "cloudevents source: $(head -c 300 "$T/cloudevents")"
# Debezium's MySQL connector envelope and value conventions, on the row
# of edge values.
python3 - "$T/debezium" <<'PY' || fail "--format debezium on a MariaDB log"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
e = next(e for e in evs if e["op"] == "c" and e["source"]["table"] == "types"
         and e["after"]["id"] == 1)
s = e["source"]
assert s["connector"] == "mysql" and s["db"] == "shop", s
assert s["gtid"].count("-") == 2 and s["gtid"] == e["transaction"]["id"], (s, e["transaction"])
assert s["file"].startswith("binlog.") and s["pos"] > 0 and s["row"] == 0, s
a = e["after"]
want = {
    "dec2": "/w==",                  # -0.01: unscaled -1, two's complement
    "dtm6": 253402300799999999,      # 9999-12-31 23:59:59.999999, µs
    "dtm2": 1709168523450,           # 2024-02-29 01:02:03.45, ms
    "dtm": None,                     # the zero datetime
    "dt": None,                      # the zero date
    "ts": "2038-01-19T03:14:07.999999Z",
    "tm": -3020399000000,            # -838:59:59 in µs
    "tm6": -1,
    "b1": True,
    "b13": "VRU=",                   # 0b1010101010101, low byte first
    "y": 1901,
    "biu": 18446744073709551615,
    "e": "médium",
}
for k, v in want.items():
    assert a[k] == v, (k, a[k], v)
assert a["g"]["srid"] == 4326 and a["g"]["wkb"], a["g"]
PY
lsn=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["lsn"])' "$T/c1")
cdc-tail --log "$T/log" --from "lsn:$lsn" -n 1 | grep -q "\"lsn\":\"$lsn\"" || fail "--from lsn: of a MariaDB position"
cdc-backup create --log "$T/log" --out "$T/bk" -q || fail "cdc-backup create"
cdc-backup verify "$T/bk" -q || fail "cdc-backup verify"
cdc-backup restore "$T/bk" --log "$T/restored" -q || fail "cdc-backup restore"
cmp <(cdc-tail --log "$T/log") <(cdc-tail --log "$T/restored") || fail "restored log differs"
cdc-log info --log "$T/restored" | grep -q "MariaDB database shop, GTID domain 0" || fail "cdc-log info: $(cdc-log info --log "$T/restored")"
ok "cdc-tail (-c, --from lsn:, debezium, cloudevents), cdc-ack, cdc-log and cdc-backup work on a MariaDB log"

# A restart resumes from the GTID in the log: nothing again, nothing lost.
msql shop -e "INSERT INTO evo VALUES (9, 9)"
before=$(cdc-tail --log "$T/log" | wc -l)
expect_exit 0 mcapture --exit-when-idle
expect_exit 0 mcapture --exit-when-idle
after=$(cdc-tail --log "$T/log" | wc -l)
[ "$after" = $((before + 1)) ] || fail "restart: $before then $after events"
binlog_rows > "$T/peer"; log_rows > "$T/ours"
diff -q "$T/peer" "$T/ours" >/dev/null || fail "after restarts the log and mariadb-binlog disagree"
ok "restarts resume at the log's GTID: the new row once, nothing repeated"

# Refused settings and credentials, each one line and its exit code.
for setting in "binlog_row_metadata=MINIMAL" "binlog_row_image=MINIMAL" "binlog_format=MIXED"; do
  msql -e "SET GLOBAL $setting"
  expect_exit 78 mcapture --exit-when-idle
  grep -q "${setting%%=*}" "$T/err" || fail "$setting: $(cat "$T/err")"
  [ "$(wc -l < "$T/err")" = 1 ] || fail "$setting: more than one line: $(cat "$T/err")"
  msql -e "SET GLOBAL ${setting%%=*}=DEFAULT"
done
msql -e "SET GLOBAL binlog_row_metadata=FULL, binlog_format=ROW"
expect_exit 64 cdc-capture --log "$T/log" --dsn "mariadb://cdc:pw@127.0.0.1:$MARIA_PORT/shop"
grep -q "must not carry a password" "$T/err" || fail "password in --dsn: $(cat "$T/err")"
expect_exit 64 cdc-capture --log "$T/log" --dsn "mariadb://cdc@127.0.0.1:$MARIA_PORT/shop" --slot x
expect_exit 64 cdc-capture --log "$T/log" --dsn "mariadb://cdc@127.0.0.1:$MARIA_PORT/shop" --snapshot-jobs 2
grep -q "^cdc-capture: --snapshot-jobs is for a PostgreSQL source; MariaDB's consistent snapshot cannot be shared" "$T/err" ||
  fail "--snapshot-jobs on MariaDB: $(cat "$T/err")"
MYSQL_PWD=wrong expect_exit 77 mcapture --exit-when-idle
msql -e "CREATE USER weak@'%' IDENTIFIED BY 'w'; GRANT SELECT, BINLOG MONITOR ON *.* TO weak@'%'"
MYSQL_PWD=w expect_exit 77 cdc-capture --log "$T/log2" -q --exit-when-idle \
  --dsn "mariadb://weak@127.0.0.1:$MARIA_PORT/shop"
echo "$MARIA_PASSWORD" > "$T/pw"
env -u MYSQL_PWD cdc-capture --log "$T/log" -q --exit-when-idle --dsn "$MARIA_DSN" \
  --password-file "$T/pw" || fail "--password-file"
expect_exit 69 cdc-capture --log "$T/log" -q --exit-when-idle --reconnect-max 1s --dsn "mariadb://cdc@127.0.0.1:1/shop"
ok "ROW, FULL images, FULL metadata, credentials and privileges are checked (78, 64, 77, 69)"

# A binlog purged under a stopped capture: the server refuses the position
# and capture says so (11), rather than skip what is gone.
msql shop -e "INSERT INTO evo VALUES (10, 10); FLUSH BINARY LOGS"
last=$(msql -e "SHOW BINARY LOGS" | tail -1 | cut -f1)
# The server keeps a binlog its checkpoint still needs: purge until it goes.
for _ in $(seq 50); do
  msql -e "PURGE BINARY LOGS TO '$last'"
  [ "$(msql -e 'SHOW BINARY LOGS' | wc -l)" = 1 ] && break
  sleep 0.2
done
[ "$(msql -e 'SHOW BINARY LOGS' | wc -l)" = 1 ] || fail "the old binlog was not purged"
expect_exit 11 mcapture --exit-when-idle
[ "$(wc -l < "$T/err")" = 1 ] || fail "purged binlog: $(cat "$T/err")"
ok "a purged binlog under the log's position stops capture with status 11: $(cat "$T/err")"
