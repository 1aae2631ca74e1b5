#!/usr/bin/env bash
# Incremental snapshots (cdc-log snapshot) taken by a running cdc-capture
# while a writer inserts, updates (keys too) and deletes in the tables:
# three tables of INC_ROWS rows (default 30000; a plain key, a composite
# text key, and REPLICA IDENTITY FULL), one of them with a SIGKILL of
# capture in the middle of its snapshot (INC_KILLS, default 1). Replaying
# the log (the stream, and the snapshot rows as upserts) gives exactly the
# tables. Meanwhile no transaction in pg_stat_activity gets older than a
# few seconds, and commits keep reaching the log (their latency is
# printed). A table without a primary key is refused with exit 65, and the
# watermarks stay out of what readers see unless asked for.
# INC_ROWS=1000000 INC_TXNS=60000 is the long mode.
source "$(dirname "$0")/lib.sh"
source "$HERE/snap.sh"
ROWS=${INC_ROWS:-30000}
TXNS=${INC_TXNS:-3000}
KILLS=${INC_KILLS:-1}
CHUNK=${INC_CHUNK:-500}
pg_start "$T"
snapshot_schema "$ROWS"
psql_q -c "CREATE TABLE nopk (x int)" \
  -c "CREATE TABLE ping (id serial PRIMARY KEY, at timestamptz DEFAULT clock_timestamp())"
TABLES=a,b,c,nopk,ping
as_least_privilege "$TABLES"
# The slot and publication, without an initial snapshot: every row the
# tables hold now reaches the log only through the incremental snapshots.
capture --table "$TABLES" --snapshot never --exit-when-idle
python3 "$HERE/snap_workload.py" "$ROWS" "$TXNS" 17 > "$T/work.sql"

start_capture() {
  capture_bg --table "$TABLES" --metrics-file "$T/cdc.prom" --metrics-interval 0.2
}
start_capture
psql -X -q -f "$T/work.sql" > "$T/work.out" 2>&1 &
work=$!
at_exit "kill $work 2>/dev/null"
# The oldest open transaction, every 0.1 s.
(
  while :; do
    psql_q -c "SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)), 0)
               FROM pg_stat_activity WHERE xact_start IS NOT NULL
               AND backend_type = 'client backend' AND pid <> pg_backend_pid()" || true
    sleep 0.1
  done
) > "$T/ages" 2>/dev/null &
ages=$!
at_exit "kill $ages 2>/dev/null"
# Commit to readable-in-the-log latency, a commit every 0.2 s.
(
  while :; do
    lsn=$(psql_q -c "INSERT INTO ping DEFAULT VALUES" -c "SELECT pg_current_wal_lsn()" | tail -1)
    t0=$(date +%s.%N)
    cdc-log wait --log "$T/log" --lsn "$lsn" --timeout 60s >/dev/null 2>&1 || echo "timeout"
    echo "$t0 $(date +%s.%N)"
    sleep 0.2
  done
) > "$T/latency" 2>/dev/null &
pinger=$!
at_exit "kill $pinger 2>/dev/null"

# No primary key: refused, with capture's reason.
expect_exit 65 cdc-log snapshot --log "$T/log" --table public.nopk -q
grep -q "public.nopk has no primary key" "$T/err" || fail "nopk: $(cat "$T/err")"
expect_exit 64 cdc-log snapshot --log "$T/log" --table nodot
expect_exit 64 cdc-log snapshot --log "$T/log" --table public.a --chunk-rows 0
ok "a table without a primary key is refused (65); bad names and sizes are usage errors"

t0=$(date +%s.%N)
cdc-log snapshot --log "$T/log" --table public.a --chunk-rows "$CHUNK" -q > /dev/null ||
  fail "snapshot of a: $(tail -3 "$T/capture.err")"
cdc-log snapshot --log "$T/log" --table public.b --chunk-rows "$CHUNK" -q > /dev/null ||
  fail "snapshot of b: $(tail -3 "$T/capture.err")"
# c: killed after a few chunks, then capture starts again and goes on. Its
# chunks are smaller and its progress is read without starting a process,
# so that it is still going when the kills come (at CHUNK rows, on a busy
# machine, it can finish before a python3 has started).
C_CHUNK=$(( CHUNK / 10 > 20 ? CHUNK / 10 : 20 ))
id=$(cdc-log snapshot --log "$T/log" --table public.c --chunk-rows "$C_CHUNK" --no-wait)
field() {  # field NAME: the value of "NAME" in c's request file
  local j
  j=$(<"$T/log/snapshots/$id.json")
  if [[ $j =~ \"$1\":\"?([a-z0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; else echo 0; fi
}
chunks() { field chunks; }
state() { field state; }
for k in $(seq "$KILLS"); do
  want=$(( $(chunks) + 3 ))
  for _ in $(seq 3000); do
    [ "$(chunks)" -ge "$want" ] && break
    sleep 0.01
  done
  [ "$(state)" != done ] || fail "kill $k: the snapshot of c finished before it ($(chunks) chunks)"
  [ "$(chunks)" -ge "$want" ] || fail "kill $k: the snapshot of c did not get going"
  kill -9 "$CAP"
  wait "$CAP" 2>/dev/null || true
  start_capture
done
cdc-log snapshot --log "$T/log" --table public.c --chunk-rows "$CHUNK" --no-wait > /dev/null  # again, after the first
for _ in $(seq 1200); do
  done_n=$(cdc-log snapshots --log "$T/log" --json | python3 -c "
import json, sys
print(sum(1 for l in sys.stdin if json.loads(l)['state'] == 'done'))")
  [ "$done_n" = 4 ] && break
  sleep 0.1
done
[ "$done_n" = 4 ] || fail "snapshots: $(cdc-log snapshots --log "$T/log")"
t1=$(date +%s.%N)
wait "$work" || fail "workload: $(tail -3 "$T/work.out")"
kill "$ages" "$pinger" 2>/dev/null || true
wait_marker done
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"

snapshot_check "$T/log" --incremental || fail "replay differs"
python3 - "$T/events.ndjson" "$ROWS" <<'PY' || fail "snapshot rows and stream"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
rows = int(sys.argv[2])
r = [i for i, e in enumerate(ev) if e["op"] == "r"]
between = [e for e in ev[r[0]:r[-1]] if e["op"] in "cud"]
assert between, "no streamed change while the snapshots ran"
assert len(r) >= 3 * rows * 0.8, (len(r), rows)
print(f"{len(r)} snapshot rows, {len(between)} streamed changes among them")
PY
[ "$(cdc-tail --log "$T/log" --watermarks --op m | grep -c '"prefix":"cdc.snapshot"')" -ge 4 ] ||
  fail "--watermarks shows no watermark"
[ "$(cdc-tail --log "$T/log" --op m | grep -c '"prefix":"cdc.snapshot"')" = 0 ] ||
  fail "watermarks are shown without --watermarks"
# --format debezium marks the rows as the connector does: "incremental",
# no txId, lsn or transaction block.
cdc-tail --log "$T/log" --format debezium --op r | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
assert ev, "no snapshot rows"
for e in ev:
    s = e["source"]
    assert s["snapshot"] == "incremental", s
    assert s["txId"] is None and s["lsn"] is None and s["xmin"] is None, s
    assert e["transaction"] is None, e
' || fail "--format debezium: incremental snapshot rows are not marked as the connector marks them"
grep -q '^cdc_capture_incremental_snapshot_rows_total{[^}]*} [1-9]' "$T/cdc.prom" ||
  fail "metrics: $(grep incremental "$T/cdc.prom")"
python3 - "$T/ages" "$T/latency" "$t0" "$t1" <<'PY' || fail "long transactions or a stalled stream"
import sys
ages = [float(l) for l in open(sys.argv[1]) if l.strip()]
t0, t1 = float(sys.argv[3]), float(sys.argv[4])
lat = []
for l in open(sys.argv[2]):
    if l.strip() == "timeout":
        raise AssertionError("a commit did not reach the log within 60 s")
    a, b = map(float, l.split())
    if t0 <= a <= t1:
        lat.append(b - a)
lat.sort()
assert ages and lat, (len(ages), len(lat))
print(f"oldest transaction during the run: {max(ages):.2f} s ({len(ages)} samples); "
      f"commit to log during the snapshots: p50 {lat[len(lat) // 2] * 1000:.0f} ms, "
      f"max {lat[-1] * 1000:.0f} ms ({len(lat)} commits)")
assert max(ages) < 5, max(ages)
assert lat[-1] < 10, lat[-1]
PY
ok "incremental snapshots of 3x$ROWS rows under a writer, $KILLS SIGKILL(s): replay equals the tables"
