#!/usr/bin/env bash
# What an operator relies on with a MariaDB log beyond the values: table
# selection (--table, and other databases never in the log), read-your-
# writes (cdc-log wait --gtid), lag in binlog bytes (cdc_capture_lag_bytes,
# exact), and rows at the limits: as many columns as MariaDB takes (2,500:
# past about 2,700 its table definition is too large, ERROR 1117, so 4,000
# cannot be made) and a 100 MB value.
source "$(dirname "$0")/maria_lib.sh"

maria_start "$T/m"
msql -e "CREATE TABLE shop.a (id INT PRIMARY KEY, v TEXT);
  CREATE TABLE shop.b1 (id INT PRIMARY KEY, v TEXT);
  CREATE TABLE shop.c (id INT PRIMARY KEY, v TEXT);
  CREATE DATABASE other; CREATE TABLE other.a (id INT PRIMARY KEY, v TEXT)"
SEL=(--table shop.a --table 'b*')

# --- Table selection: a name and a pattern; shop.c and other.a never.
mcapture --exit-when-idle "${SEL[@]}"
msql -e "INSERT INTO shop.a VALUES (1, 'a'); INSERT INTO shop.b1 VALUES (1, 'b');
  INSERT INTO shop.c VALUES (1, 'c'); INSERT INTO other.a VALUES (1, 'o');
  UPDATE shop.c SET v = 'cc'; DELETE FROM other.a"
mcapture --exit-when-idle "${SEL[@]}"
got=$(cdc-tail --log "$T/log" | python3 -c '
import json, sys
print(" ".join(sorted("%s.%s:%s" % (e["schema"], e["table"], e["op"])
                      for e in map(json.loads, sys.stdin))))')
[ "$got" = "shop.a:c shop.b1:c" ] || fail "--table shop.a --table 'b*' gave: $got"
ok "--table selects by name and pattern; other tables and databases stay out"

# A clean stop ends capture's dump thread on the server at once (the
# server itself would notice only when a heartbeat failed to send, a
# second or two later, and a new capture with the same server id waits
# for it).
dumps() {
  msql -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST
    WHERE COMMAND LIKE 'Binlog Dump%'"
}
mcapture --exit-when-idle "${SEL[@]}"
for _ in 1 2 3 4 5; do [ "$(dumps)" = 0 ] && break; sleep 0.1; done
[ "$(dumps)" = 0 ] || fail "a Binlog Dump thread outlived capture's clean stop"
ok "a clean stop ends capture's dump thread on the server"

# --- Read-your-writes: a change committed, then its GTID waited for, is
# readable at once; so is one of a table capture leaves out (the position
# moves on without it).
cdc-capture --log "$T/log" --dsn "$MARIA_DSN" -q "${SEL[@]}" \
  --commit-delay 2500ms --metrics-file "$T/m.prom" --metrics-interval 100ms \
  2>>"$T/capture.err" &
CAP=$!
at_exit "kill $CAP"
for i in $(seq 10 19); do
  g=$(msql shop -e "INSERT INTO a VALUES ($i, 'w'); SELECT @@last_gtid")
  cdc-log wait --log "$T/log" --gtid "$g" --timeout 20s ||
    fail "wait --gtid $g"
  cdc-tail --log "$T/log" | grep -q "\"id\":$i," ||
    fail "GTID $g waited for, its row not in the log"
done
g=$(msql shop -e "INSERT INTO c VALUES (10, 'x'); SELECT @@last_gtid")
cdc-log wait --log "$T/log" --gtid "$g" --timeout 20s ||
  fail "wait for a transaction capture leaves out"
# @@gtid_binlog_pos (one GTID per domain) is taken as it prints.
pos=$(msql -e "SELECT @@gtid_binlog_pos")
cdc-log wait --log "$T/log" --gtid "$pos,7-1-1" --timeout 20s ||
  fail "wait --gtid '$pos,7-1-1'"
domain=${g%%-*}
expect_exit 75 cdc-log wait --log "$T/log" --gtid "$domain-1-99999999" \
  --timeout 300ms
grep -q "has not reached $domain-1-99999999 within 300ms (it holds up to GTID $domain-\*-" "$T/err" ||
  fail "timeout message: $(cat "$T/err")"
expect_exit 64 cdc-log wait --log "$T/log" --gtid "7-1-5" --timeout 1s
grep -q "no GTID of domain $domain" "$T/err" || fail "$(cat "$T/err")"
expect_exit 64 cdc-log wait --log "$T/log" --lsn 0/1 --timeout 1s
expect_exit 64 cdc-log wait --log "$T/log" --gtid "0-1" --timeout 1s
expect_exit 64 cdc-log wait --log "$T/log" --timeout 1s
ok "cdc-log wait --gtid: read-your-writes, timeouts and bad positions"

# --- Lag in binlog bytes: with a 2.5 s group-commit window, a transaction
# received but not yet durable is exactly its binlog bytes of lag.
lag() { metric cdc_capture_lag_bytes "$T/m.prom"; }
wait_lag() {  # wait_lag TEST: until the metric satisfies [ lag TEST ]
  local k
  for k in $(seq 1 100); do
    [ -s "$T/m.prom" ] && [ "$(lag)" "$@" ] && return 0
    sleep 0.1
  done
  fail "cdc_capture_lag_bytes stayed $(lag), not $*"
}
wait_lag -eq 0
before=$(msql -e "SHOW MASTER STATUS" | cut -f2)
msql shop -e "INSERT INTO shop.a SELECT 1000 + seq, REPEAT('l', 100) FROM seq_1_to_50"
after=$(msql -e "SHOW MASTER STATUS" | cut -f2)
wait_lag -gt 0
[ "$(lag)" = $((after - before)) ] ||
  fail "lag $(lag) bytes, the transaction is $((after - before))"
wait_lag -eq 0
ok "cdc_capture_lag_bytes: $((after - before)) while not durable, then 0"
kill "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"

# --- A row of 2,500 columns (MyISAM: InnoDB stops at 1,017) and a 100 MB
# value, through capture and back out of cdc-tail whole.
cols=$(seq 1 2500 | sed 's/.*/c& SMALLINT NOT NULL DEFAULT 0/' | paste -sd,)
echo "CREATE TABLE shop.wide (id INT PRIMARY KEY, $cols) ENGINE=MyISAM" |
  msql > /dev/null
msql -e "INSERT INTO shop.wide (id, c1, c1250, c2500) VALUES (1, 1, 1250, -2500);
  UPDATE shop.wide SET c2499 = 2499 WHERE id = 1"
msql -e "SET GLOBAL max_allowed_packet = 256 * 1024 * 1024"
msql -e "CREATE TABLE shop.big (id INT PRIMARY KEY, v LONGTEXT CHARACTER SET utf8mb4)"
msql --max-allowed-packet=256M -e "
  INSERT INTO shop.big VALUES (1, REPEAT('0123456789abcdéf', 6168471))"
md5=$(msql --max-allowed-packet=256M -e "SELECT MD5(v), LENGTH(v) FROM shop.big")
mcapture --exit-when-idle --table wide --table big
cdc-tail --log "$T/log" --table shop.wide --table shop.big > "$T/rows"
python3 - "$T/rows" "$md5" <<'PY' || fail "wide and big rows"
import hashlib, json, sys
events = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
wide = [e for e in events if e["table"] == "wide"]
assert [e["op"] for e in wide] == ["c", "u"], [e["op"] for e in wide]
after = wide[1]["after"]
assert len(after) == 2501, len(after)
assert (after["c1"], after["c1250"], after["c2499"], after["c2500"],
        after["c17"]) == (1, 1250, 2499, -2500, 0), after
assert wide[1]["before"]["c2499"] == 0
big = [e for e in events if e["table"] == "big"]
assert len(big) == 1
v = big[0]["after"]["v"].encode("utf-8")
want_md5, want_len = sys.argv[2].split()
assert len(v) == int(want_len), (len(v), want_len)
assert hashlib.md5(v).hexdigest() == want_md5
PY
ok "a 2,500-column row and a $(echo "$md5" | cut -f2)-byte value come through whole"

# --- RENAME: the next row comes with a schema event under the new name;
# DROP: no more events, and capture goes on.
msql -e "RENAME TABLE shop.b1 TO shop.b2; INSERT INTO shop.b2 VALUES (5, 'r');
  DROP TABLE shop.c; INSERT INTO shop.a VALUES (5, 'after drop')"
mcapture --exit-when-idle
cdc-tail --log "$T/log" --schema-changes | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
tail = [(e["table"], e["op"]) for e in ev if e["table"] in ("b1", "b2", "c")]
i = tail.index(("b2", "s"))
assert tail[i + 1] == ("b2", "c"), tail
assert not any(t == "c" for t, _ in tail), tail
assert (ev[-1]["table"], ev[-1]["after"]["v"]) == ("a", "after drop"), ev[-1]
' || fail "RENAME and DROP"
ok "RENAME: a schema event under the new name before its next row; DROP: none"
