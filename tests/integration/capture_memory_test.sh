#!/usr/bin/env bash
# Memory stays bounded: one 2,000,000-row transaction streams to the log
# frame by frame (capture's peak RSS under 150 MB, every row in one
# transaction), and a large value costs capture and cdc-tail at most three
# times its size plus a constant (cdc-capture(1), cdc-tail(1)): a 50 MB
# value, and a transaction of three 20 MB values.
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-2000000}
pg_start "$T"
psql_q -c "CREATE TABLE big (id int PRIMARY KEY, payload text)"
capture --exit-when-idle
psql_q -c "INSERT INTO big SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(1, $ROWS) g"
capture_bg --exit-when-idle
peak=0
while kill -0 "$CAP" 2>/dev/null; do
  hwm=$(awk '/^VmHWM/ {print $2}' /proc/$CAP/status 2>/dev/null || echo 0)
  [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
  sleep 0.05
done
wait "$CAP" || fail "capture failed: $(cat "$T/capture.err")"
n=$(cdc-tail --log "$T/log" --table big | wc -l)
[ "$n" = "$ROWS" ] || fail "$n of $ROWS rows in the log"
lasts=$(cdc-tail --log "$T/log" --table big | grep -c '"last":true' || true)
[ "$lasts" = 1 ] || fail "expected one transaction end, got $lasts"
peak_mb=$((peak / 1024))
[ "$peak_mb" -lt 150 ] || fail "peak RSS $peak_mb MB (limit 150)"
ok "$ROWS-row transaction captured with peak RSS $peak_mb MB"

# Large values. Text of md5 digits compresses about 2:1, so the log's
# compressed copy of a value counts too.
CONST_KB=$((32 * 1024))  # what the tools take with no large value
rss_kb() { awk '/Maximum resident set size/ {print $6}' "$1"; }
# VALUE_BYTES WHAT SQL: runs the SQL, then capture and cdc-tail of what it
# wrote under /usr/bin/time -v, and checks both peaks against the bound.
large() {
  local bytes=$1 what=$2 sql=$3 from
  from=$(( $(cdc-log info --log "$T/log" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['last_seq'])") + 1 ))
  psql_q -c "$sql" >/dev/null
  /usr/bin/time -v -o "$T/capture.time" cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" -q --exit-when-idle ||
    fail "capture of $what failed"
  /usr/bin/time -v -o "$T/tail.time" cdc-tail --log "$T/log" --from "$from" > "$T/large.out" ||
    fail "cdc-tail of $what failed"
  python3 - "$T/large.out" "$bytes" <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
assert evs and all(len(e["after"]["payload"]) == int(sys.argv[2]) for e in evs), len(evs)
assert evs[-1].get("last") is True and sum(1 for e in evs if e.get("last")) == 1
PY
  local limit=$((3 * bytes / 1024 + CONST_KB)) c t
  c=$(rss_kb "$T/capture.time"); t=$(rss_kb "$T/tail.time")
  [ "$c" -le "$limit" ] || fail "$what: capture peak RSS $c kB, over 3x the value + 32 MB ($limit kB)"
  [ "$t" -le "$limit" ] || fail "$what: cdc-tail peak RSS $t kB, over 3x the value + 32 MB ($limit kB)"
  ok "$what: peak RSS capture $((c / 1024)) MB, cdc-tail $((t / 1024)) MB (limit $((limit / 1024)) MB)"
}
large 51200000 "one 50 MB value" \
  "INSERT INTO big SELECT -1, string_agg(md5(g::text), '') FROM generate_series(1, 1600000) g"
large 20000000 "a transaction of three 20 MB values" \
  "INSERT INTO big SELECT -1 - i, (SELECT string_agg(md5((g + i)::text), '') FROM generate_series(1, 625000) g)
     FROM generate_series(1, 3) i"

# An initial snapshot of a large value. Its table's schema event comes
# with the row, and neither pushes the other into a copy: the row stays in
# the copier's batch while the schema event goes out, and the batch becomes
# a frame of its own rather than one appended to the schema event's. The
# peak is then the COPY's row, its rendering and the compressed frame, at
# most about 2.5 times the value (a copy of either, 3.2 times, fails this).
psql_q -c "CREATE TABLE bigsnap (id int PRIMARY KEY, payload text)" \
       -c "INSERT INTO bigsnap SELECT 1, string_agg(md5(g::text), '') FROM generate_series(1, 1600000) g" \
       -c "INSERT INTO bigsnap VALUES (2, 'small')" \
       -c "CREATE PUBLICATION bigsnap FOR TABLE bigsnap" >/dev/null
limit=$((5 * 51200000 / 2 / 1024 + CONST_KB))
for jobs in 1 2; do
  /usr/bin/time -v -o "$T/snap.time" cdc-capture --log "$T/snap$jobs" --dsn "$CDC_TEST_DSN" -q \
    --slot "bigsnap$jobs" --publication bigsnap --snapshot-jobs "$jobs" --exit-when-idle ||
    fail "snapshot of a 50 MB value (--snapshot-jobs $jobs) failed"
  rows=$(cdc-tail --log "$T/snap$jobs" --op r | python3 -c '
import json, sys
print(" ".join("%d:%d:%s" % (e["after"]["id"], len(e["after"]["payload"]), e.get("snapshot"))
               for e in map(json.loads, sys.stdin)))')
  [ "$rows" = "1:51200000:first 2:5:last" ] || fail "snapshot of a 50 MB value (--snapshot-jobs $jobs): $rows"
  c=$(rss_kb "$T/snap.time")
  [ "$c" -le "$limit" ] ||
    fail "snapshot of a 50 MB value (--snapshot-jobs $jobs): capture peak RSS $c kB, over 2.5x the value + 32 MB ($limit kB)"
  ok "snapshot of a 50 MB value, --snapshot-jobs $jobs: peak RSS capture $((c / 1024)) MB (limit $((limit / 1024)) MB)"
done
