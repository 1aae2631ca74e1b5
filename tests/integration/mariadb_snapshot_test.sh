#!/usr/bin/env bash
# The initial snapshot of a MariaDB log: three tables of ROWS rows (200,000
# by default) copied while a writer inserts, updates and deletes in them.
# Replaying the log (snapshot rows, then the stream) gives exactly the
# final tables, and strictly: no streamed insert of a row the snapshot
# holds, no update or delete of a row it lacks (no duplicate, no gap at
# the seam). The same after SIGKILL and after SIGTERM during the copy.
# Then a snapshot taken before the binlog holds any GTID, and --table.
source "$(dirname "$0")/maria_lib.sh"
ROWS=${ROWS:-200000}
# The oldest InnoDB transaction section 6 allows, in seconds (a sanitized
# build, several times slower, is given more).
TRX_AGE_LIMIT=${TRX_AGE_LIMIT:-5}

maria_start "$T/m"
msql <<SQL
CREATE DATABASE IF NOT EXISTS shop;
USE shop;
CREATE TABLE shop.s1 (id INT PRIMARY KEY, k BIGINT, pad VARCHAR(200), d DECIMAL(12,2));
CREATE TABLE shop.s2 LIKE shop.s1;
CREATE TABLE shop.s3 LIKE shop.s1;
INSERT INTO shop.s1 SELECT seq, seq * 7, CONCAT('p', seq, REPEAT('x', 150)), seq / 100 FROM seq_1_to_$ROWS;
INSERT INTO shop.s2 SELECT * FROM shop.s1;
INSERT INTO shop.s3 SELECT * FROM shop.s1;
SQL

# Capture in the background, its progress lines in capture.err.
capture_bg() {
  cdc-capture --log "$T/log" --dsn "$MARIA_DSN" "$@" 2>>"$T/capture.err" &
  CAP=$!
}
writer_start() {
  rm -f "$T/stop"
  python3 "$HERE/maria_snap_writer.py" "$MARIA_DIR/sock" "$T/stop" "$1" > "$T/writer.out" 2>&1 &
  WRITER=$!
}
writer_stop() {
  touch "$T/stop"
  wait "$WRITER" || fail "writer: $(cat "$T/writer.out")"
}
# Waits until capture's stderr says it has begun copying; with an
# argument, until it has copied the first table (two are left: the copy is
# surely still going on).
wait_copying() {
  local what="initial snapshot of"
  [ -n "${1:-}" ] && what="snapshot: table 1/3"
  for _ in $(seq 600); do
    grep -q "$what" "$T/capture.err" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no snapshot began: $(cat "$T/capture.err")"
}
# Replays the log strictly and compares it with the tables.
check() {
  local g
  g=$(msql -e "SELECT @@gtid_binlog_pos")
  local log=${CHECK_LOG:-$T/log}
  cdc-log wait --log "$log" --gtid "$g" --timeout 120s || fail "capture behind $g"
  for t in s1 s2 s3; do
    msql shop -e "SELECT id, k, pad, d FROM $t ORDER BY id" > "$T/$t.tsv"
  done
  cdc-tail --log "$log" | python3 -c '
import json, sys
d = sys.argv[1]
# An incremental snapshot (INC=1, a log that began empty) upserts its rows,
# and the stream may change rows no chunk has reached yet.
inc = sys.argv[2] == "1"
state = {t: {} for t in ("s1", "s2", "s3")}
snap = {t: 0 for t in state}
bad = []
for line in sys.stdin:
    e = json.loads(line)
    if e["table"] not in state:
        continue
    rows = state[e["table"]]
    op = e["op"]
    if op == "r":
        snap[e["table"]] += 1
        k = e["after"]["id"]
        if inc:
            if e.get("snapshot") != "incremental": bad.append("not incremental: %s" % line[:200])
            rows[k] = e["after"]
            continue
        if k in rows: bad.append("snapshot row twice: %s %s" % (e["table"], k))
        rows[k] = e["after"]
        continue
    k = (e["after"] or e["before"])["id"]
    if op == "c":
        if k in rows: bad.append("insert of a row the log holds: %s" % line[:200])
        rows[k] = e["after"]
    elif op == "u":
        if k not in rows and not inc: bad.append("update of a row the log lacks: %s" % line[:200])
        rows[k] = e["after"]
    elif op == "d":
        if rows.pop(k, None) is None and not inc: bad.append("delete of a row the log lacks: %s" % line[:200])
for t, rows in state.items():
    want = {}
    for l in open("%s/%s.tsv" % (d, t)):
        i, k, pad, dec = l.rstrip("\n").split("\t")
        want[int(i)] = {"id": int(i), "k": int(k), "pad": pad, "d": dec}
    if rows != want:
        diff = [i for i in set(rows) | set(want) if rows.get(i) != want.get(i)]
        bad.append("%s: %d rows differ, e.g. %s: log %s, table %s" % (
            t, len(diff), diff[0], rows.get(diff[0]), want.get(diff[0])))
if bad:
    sys.exit("\n".join(bad[:10]))
print(" ".join("%s=%d" % kv for kv in sorted(snap.items())))
' "$T" "${INC:-0}" > "$T/check.out" || fail "replay: $(cat "$T/check.out")"
}

# 1. A snapshot under writes, to the end.
writer_start 1
sleep 0.5
capture_bg
wait_copying
for _ in $(seq 600); do
  grep -q "streaming the binlog" "$T/capture.err" && break
  sleep 0.1
done
grep -q "streaming the binlog" "$T/capture.err" || fail "snapshot did not finish: $(cat "$T/capture.err")"
sleep 1
writer_stop
check
kill "$CAP"; wait "$CAP" || fail "capture did not stop cleanly"
cdc-log verify --log "$T/log" >/dev/null || fail "cdc-log verify"
ok "a snapshot of 3 x $ROWS rows under $(cat "$T/writer.out") writer transactions, then the stream, replays to the tables exactly ($(cat "$T/check.out"))"

# 2. SIGKILL during the copy: nothing of it shows, and the next start
# takes it again and ends equal.
rm -rf "$T/log" "$T/capture.err"
writer_start 2
capture_bg
wait_copying mid
kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
grep -q "initial snapshot copied" "$T/capture.err" &&
  fail "the snapshot finished before the kill (make ROWS larger)"
n=$(cdc-tail --log "$T/log" | wc -l)
[ "$n" = 0 ] || fail "$n events of a killed snapshot are visible"
cdc-log verify --log "$T/log" >/dev/null || fail "cdc-log verify after SIGKILL"
capture_bg
wait_copying
sleep 2
writer_stop
check
kill "$CAP"; wait "$CAP" || true
ok "SIGKILL during the copy: nothing visible, the next start copies again and replays exactly ($(cat "$T/check.out"))"

# 3. SIGTERM during the copy: a clean exit, nothing committed.
rm -rf "$T/log" "$T/capture.err"
capture_bg
wait_copying mid
kill -TERM "$CAP"
wait "$CAP" || fail "SIGTERM during the snapshot: exit $?"
grep -q "initial snapshot copied" "$T/capture.err" &&
  fail "the snapshot finished before SIGTERM"
[ "$(cdc-tail --log "$T/log" | wc -l)" = 0 ] || fail "a stopped snapshot left events"
expect_exit 0 mcapture --exit-when-idle
check
ok "SIGTERM during the copy exits 0 with nothing committed; the next start copies it all"

# 4. No GTID in the binlog yet (RESET MASTER): the snapshot records the
# start, and the stream then begins at the binlog's first transaction.
msql -e "RESET MASTER"
[ -z "$(msql -e 'SELECT @@gtid_binlog_pos')" ] || fail "RESET MASTER left a GTID"
rm -rf "$T/log"
expect_exit 0 mcapture --exit-when-idle
msql shop -e "INSERT INTO s1 VALUES ($((ROWS + 900001)), 1, 'after reset', 1); UPDATE s2 SET k = 0 WHERE id = 5; DELETE FROM s3 WHERE id = 6"
expect_exit 0 mcapture --exit-when-idle
check
ok "a snapshot before any GTID: the stream starts at the binlog's first transaction, nothing twice ($(cat "$T/check.out"))"

# 5. --table selects what the snapshot copies too.
rm -rf "$T/log2"
cdc-capture --log "$T/log2" --dsn "$MARIA_DSN" -q --exit-when-idle --table 'shop.s1' 2>"$T/err" ||
  fail "--table: $(cat "$T/err")"
n=$(cdc-tail --log "$T/log2" | python3 -c 'import json,sys; print(len({json.loads(l)["table"] for l in sys.stdin}))')
[ "$n" = 1 ] || fail "--table shop.s1 copied $n tables"
ok "--table limits the snapshot to the tables capture reads"

# 6. Incremental snapshots: a log begun empty (--snapshot never) takes
# each table in chunks while the writer runs, capture SIGKILLed during one
# of them; replaying the log then gives exactly the tables, so every row
# came from a chunk or the stream, none lost, none stale.
# Meanwhile no InnoDB transaction gets older than a few seconds and
# commits keep reaching the log (their latency is reported). ROWS=1000000
# is the long mode.
L3=$T/log3
rm -f "$T/capture.err"
# What cdc-capture(1) says an incremental snapshot needs beyond SELECT.
msql -e "GRANT CREATE, INSERT, UPDATE ON shop.cdc_watermark TO cdc@'%'"
msql shop -e "CREATE TABLE ping (id INT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(6) DEFAULT NOW(6))"
# Sessions of the parts above, left to the server: a client killed (or
# stopped) while the server was sending it a table is noticed only when
# the server's next write to it fails, which can take tens of seconds. They
# are no transaction of the snapshots below, which the probe watches; they
# are reported at the end if still open.
before=$(msql -e "SELECT COALESCE(GROUP_CONCAT(ID), 0) FROM information_schema.PROCESSLIST")
# The age of the oldest InnoDB transaction of a session begun from here
# on, every 0.1 s (innodb_trx counts in whole seconds).
(
  while :; do
    # The oldest one, and whose it is (for the message if it is too old).
    a=$(msql -e "SELECT TIMESTAMPDIFF(SECOND, t.trx_started, NOW()), t.trx_state,
                   p.ID, p.USER, p.HOST, p.COMMAND, p.STATE, p.TIME,
                   LEFT(COALESCE(t.trx_query, p.INFO, '-'), 70)
                 FROM information_schema.innodb_trx t LEFT JOIN
                   information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
                 WHERE t.trx_mysql_thread_id NOT IN ($before)
                 ORDER BY t.trx_started LIMIT 1") || true
    echo "${a:-0}"
    sleep 0.1
  done
) >> "$T/ages" 2>/dev/null &
ages=$!
at_exit "kill $ages 2>/dev/null"
# The probe sees a long transaction when there is one: a 3-second one.
msql shop -e "START TRANSACTION; SELECT COUNT(*) FROM ping; DO SLEEP(3); COMMIT" >/dev/null
sleep 0.3
python3 -c 'import sys; a=[int(l.split()[0]) for l in open(sys.argv[1]) if l.strip()]; sys.exit(max(a) < 2)' "$T/ages" ||
  fail "innodb_trx never showed a 3-second transaction: $(sort -n "$T/ages" | tail -1)"
writer_start 3
cap3() {
  cdc-capture --log "$L3" --dsn "$MARIA_DSN" --snapshot never 2>>"$T/capture.err" &
  CAP=$!
}
cap3
for _ in $(seq 300); do
  grep -q "streaming the binlog" "$T/capture.err" && break
  sleep 0.1
done
# Commit to readable-in-the-log latency, a commit every 0.2 s.
(
  while :; do
    g=$(msql shop -e "INSERT INTO ping () VALUES (); SELECT @@last_gtid")
    t0=$(date +%s.%N)
    cdc-log wait --log "$L3" --gtid "$g" --timeout 60s >/dev/null 2>&1 || echo "timeout"
    echo "$t0 $(date +%s.%N)"
    sleep 0.2
  done
) > "$T/latency" 2>/dev/null &
pinger=$!
at_exit "kill $pinger 2>/dev/null"
: > "$T/ages"
t0=$(date +%s.%N)
wait_s=$((300 + ROWS / 2000))
cdc-log snapshot --log "$L3" --table shop.s1 --chunk-rows 2000 -q --timeout ${wait_s}s >/dev/null 2>"$T/err" ||
  fail "snapshot of s1: $(cat "$T/err")"
t1=$(date +%s.%N)
id=$(cdc-log snapshot --log "$L3" --table shop.s2 --chunk-rows 1000 --no-wait)
for _ in $(seq 600); do
  rows=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"])' "$L3/snapshots/$id.json")
  [ "$rows" -ge 3000 ] && break
  sleep 0.05
done
kill -9 "$CAP"; wait "$CAP" 2>/dev/null || true
grep -q '"state":"done"' "$L3/snapshots/$id.json" && fail "s2's snapshot finished before the kill"
cdc-log verify --log "$L3" >/dev/null || fail "cdc-log verify after SIGKILL during an incremental snapshot"
cap3
cdc-log snapshot --log "$L3" --table shop.s3 --chunk-rows 5000 -q --timeout ${wait_s}s >/dev/null 2>"$T/err" ||
  fail "snapshot of s3: $(cat "$T/err")"
t2=$(date +%s.%N)
grep -q '"state":"done"' "$L3/snapshots/$id.json" || fail "s2's snapshot did not finish after the restart"
sleep 1
kill "$ages" "$pinger" 2>/dev/null || true
writer_stop
# The first snapshot (t0..t1) ran with capture undisturbed; the ages are
# of the whole run, the kill and restart included.
python3 - "$T/ages" "$T/latency" "$t0" "$t1" "$t2" "$ROWS" "$TRX_AGE_LIMIT" <<'PY' > "$T/inc.out" || fail "long transactions or a stalled stream: $(cat "$T/inc.out")"
import sys
samples = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
ages = [int(l.split()[0]) for l in samples]
t0, t1, t2, rows = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
limit = int(sys.argv[7])
lat = []
for l in open(sys.argv[2]):
    if l.strip() == "timeout":
        print("a commit did not reach the log within 60 s")
        sys.exit(1)
    a, b = map(float, l.split())
    if t0 <= a <= t1:
        lat.append(b - a)
lat.sort()
if not ages or not lat:
    print("no samples", len(ages), len(lat))
    sys.exit(1)
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
print(f"oldest InnoDB transaction {max(ages)} s ({len(ages)} samples); "
      f"s1 at {rows / (t1 - t0):,.0f} rows/s, commit to log meanwhile p50 {q(0.5):.0f} ms, "
      f"p99 {q(0.99):.0f} ms, max {lat[-1] * 1000:.0f} ms ({len(lat)} commits)")
if max(ages) >= limit:
    oldest = max(samples, key=lambda l: int(l.split()[0]))
    print("the oldest (age, trx state, id, user, host, command, thread state, time, statement): " + " | ".join(oldest.split("\t")))
sys.exit(max(ages) >= limit or lat[-1] >= 10)
PY
echo "# $(cat "$T/inc.out")"
left=$(msql -e "SELECT GROUP_CONCAT(CONCAT(p.ID, ' ', p.COMMAND, ' ', p.TIME, ' s') SEPARATOR '; ')
                FROM information_schema.innodb_trx t JOIN information_schema.PROCESSLIST p
                  ON p.ID = t.trx_mysql_thread_id WHERE p.ID IN ($before)")
[ "$left" = NULL ] || echo "# transactions of sessions from before section 6 still open: $left"
CHECK_LOG=$L3 INC=1 check
kill "$CAP"; wait "$CAP" || fail "capture did not stop cleanly"
# The signal table's own changes are no events, and watermarks hidden.
cdc-tail --log "$L3" | grep -q cdc_watermark && fail "the signal table shows in the log"
n=$(cdc-tail --log "$L3" --watermarks | grep -c '"prefix":"cdc.snapshot"')
[ "$n" -gt 0 ] || fail "no watermark in the log"
ok "incremental snapshots of 3 tables under $(cat "$T/writer.out") writer transactions, SIGKILL during one: the replay equals the tables ($(cat "$T/check.out"), $n watermarks); $(cat "$T/inc.out")"

# 7. Keys of other kinds: text in a case-insensitive collation before an
# integer, a latin1 text key, DATETIME(6) and DECIMAL keys; chunks of 7 rows
# must neither skip nor repeat a row across their boundaries.
msql shop <<'SQL'
CREATE TABLE kc (s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, n INT, v INT, PRIMARY KEY (s, n));
INSERT INTO kc SELECT ELT(1 + seq % 5, 'a', 'B', 'é', 'Zz', 'b\'q'), seq, seq FROM seq_1_to_60;
CREATE TABLE kl (s VARCHAR(20) CHARACTER SET latin1 PRIMARY KEY, v INT);
INSERT INTO kl SELECT CONCAT(CHAR(64 + seq % 26), 'ü', seq), seq FROM seq_1_to_50;
CREATE TABLE kt (t DATETIME(6), d DECIMAL(10,3), v INT, PRIMARY KEY (t, d));
INSERT INTO kt SELECT '2024-01-01' + INTERVAL seq SECOND + INTERVAL seq MICROSECOND, seq / 8, seq FROM seq_1_to_45;
SQL
cap3
for t in kc kl kt; do
  cdc-log snapshot --log "$L3" --table shop.$t --chunk-rows 7 -q --timeout 120s >/dev/null 2>"$T/err" ||
    fail "snapshot of $t: $(cat "$T/err")"
  got=$(cdc-tail --log "$L3" --table "shop.$t" | grep -c '"snapshot":"incremental"')
  want=$(msql shop -e "SELECT COUNT(*) FROM $t")
  [ "$got" = "$want" ] || fail "$t: $got rows from the snapshot, $want in the table"
  dup=$(cdc-tail --log "$L3" --table "shop.$t" | grep '"snapshot":"incremental"' | python3 -c 'import json,sys; k=[json.dumps(json.loads(l)["key"],sort_keys=True) for l in sys.stdin]; print(len(k)-len(set(k)))')
  [ "$dup" = 0 ] || fail "$t: $dup rows twice"
done
kill "$CAP"; wait "$CAP" || true
ok "composite text-and-integer keys in a case-insensitive collation, latin1, DATETIME(6) and DECIMAL keys: every row once, in 7-row chunks"

# 8. Refusals: a table without a primary key, another database.
msql shop -e "CREATE TABLE nokey (a INT); INSERT INTO nokey VALUES (1)"
cdc-capture --log "$L3" --dsn "$MARIA_DSN" -q 2>>"$T/capture.err" &
CAP=$!
expect_exit 65 cdc-log snapshot --log "$L3" --table shop.nokey --timeout 60s
grep -q "no primary key" "$T/err" || fail "no key: $(cat "$T/err")"
expect_exit 65 cdc-log snapshot --log "$L3" --table other.s1 --timeout 60s
grep -q "not in database shop" "$T/err" || fail "other db: $(cat "$T/err")"
kill "$CAP"; wait "$CAP" || true
ok "a table without a primary key and one of another database are refused with the reason"
