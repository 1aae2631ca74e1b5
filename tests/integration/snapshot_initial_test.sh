#!/usr/bin/env bash
# --snapshot initial: the rows of three tables copied while a writer inserts,
# updates and deletes in them, then the stream from the slot's consistent
# point: replaying the log gives exactly the final tables (no gap, no
# duplicate at the seam). The type matrix renders identically read by the
# snapshot and streamed. SNAP_ROWS (default 20000) rows per table.
source "$(dirname "$0")/lib.sh"
source "$HERE/snap.sh"
ROWS=${SNAP_ROWS:-20000}
pg_start "$T"

# The type matrix, streamed into one log and read by a snapshot into another.
psql_q <<'SQL'
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TABLE types (
  id serial PRIMARY KEY, i2 int2, i4 int4, i8 int8, num numeric(20,5),
  f4 float4, f8 float8, b bool, t text, vc varchar(10), ch char(5), by bytea,
  j json, jb jsonb, u uuid, d date, tm time, tmtz timetz, ts timestamp,
  tstz timestamptz, iv interval, ia int4[], ta text[], m mood, dom posint,
  ip inet, jn jsonb, ja jsonb[], big text, tab text);
SQL
cdc-capture -q --dsn "$CDC_TEST_DSN" --log "$T/streamed" --slot s1 --publication p1 --table public.types --exit-when-idle
psql_q >/dev/null <<'SQL'
INSERT INTO types (i2,i4,i8,num,f4,f8,b,t,vc,ch,by,j,jb,u,d,tm,tmtz,ts,tstz,iv,ia,ta,m,dom,ip,jn,ja,big,tab) VALUES
 (-32768, 2147483647, 9223372036854775807, 12345678901234.56789, 1.5, 'NaN', true,
  'hé "quoted"\n', 'var', 'ab', '\x00ff10', '{"a": [1, 2.50]}', '{"b": {"c": null}}',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2026-11-29', '07:41:02.5', '07:41:02+05:30',
  '2026-11-29 07:41:02.123456', '2026-11-29 13:11:02.5+05:30', '1 day 02:03:04',
  '{1,NULL,3}', '{"a b","c,d",NULL,"NULL","q\"x"}', 'happy', 7, '192.168.0.1/24',
  'null', ARRAY['null'::jsonb, NULL, '{"x":1}'], repeat('z', 100000),
  E'tab\there\nnew\\line\r\b\f\x0b end');
INSERT INTO types (f4, f8, num, d, ts, tstz) VALUES ('Infinity', '-Infinity', 'NaN',
  '0044-03-15 BC', 'infinity', '-infinity');
INSERT INTO types DEFAULT VALUES;
SQL
cdc-capture -q --dsn "$CDC_TEST_DSN" --log "$T/streamed" --slot s1 --publication p1 --exit-when-idle
cdc-capture -q --dsn "$CDC_TEST_DSN" --log "$T/snap" --slot s2 --publication p2 --table public.types --exit-when-idle
python3 - "$T" <<'PY'
import json, subprocess, sys
def rows(log, op):
    out = subprocess.run(["cdc-tail", "--log", f"{sys.argv[1]}/{log}", "--op", op],
                         check=True, capture_output=True, text=True).stdout
    evs = [json.loads(l) for l in out.splitlines()]
    return {e["after"]["id"]: e for e in evs}
c, r = rows("streamed", "c"), rows("snap", "r")
assert len(c) == 3 and sorted(c) == sorted(r), (sorted(c), sorted(r))
for i in c:
    for f in ("schema", "table", "key", "before", "after", "json_null", "unchanged"):
        assert c[i].get(f) == r[i].get(f), (i, f, c[i].get(f), r[i].get(f))
assert r[1]["after"]["tab"] == "tab\there\nnew\\line\r\b\f\v end", r[1]["after"]["tab"]
assert r[1]["json_null"] == ["/after/jn", "/after/ja/0"], r[1].get("json_null")
PY
[ $? = 0 ] || fail "type matrix differs between snapshot and stream"
ok "the type matrix renders identically through the snapshot and the stream"

# Each table's rows carry their tags whoever copies them: a table of one
# row "only", the type matrix's three rows "first", none and "last", an
# empty table nothing at all (not even its schema event).
psql_q -c "CREATE TABLE one (id int PRIMARY KEY, v text)" \
       -c "INSERT INTO one VALUES (1, 'x')" -c "CREATE TABLE empty (id int PRIMARY KEY)" \
       -c "CREATE PUBLICATION tags FOR TABLE one, empty, types" >/dev/null
for jobs in 1 3; do
  cdc-capture -q --dsn "$CDC_TEST_DSN" --log "$T/tags$jobs" --slot "tags$jobs" \
    --publication tags --snapshot-jobs "$jobs" --exit-when-idle
  tags=$(cdc-tail --log "$T/tags$jobs" --schema-changes | python3 -c '
import json, sys
print(" ".join(sorted(e["table"] + ":" + (str(e["after"]["id"]) + ":" + str(e.get("snapshot")) if e["op"] == "r" else e["op"])
                      for e in map(json.loads, sys.stdin))))')
  [ "$tags" = "one:1:only one:s types:1:first types:2:None types:3:last types:s" ] ||
    fail "snapshot tags with --snapshot-jobs $jobs: $tags"
done
ok "snapshot tags, one job and three: a table of one row 'only', first and last of three, an empty table silent"

# Three tables, a writer busy in all of them while the snapshot runs.
snapshot_schema "$ROWS"
python3 "$HERE/snap_workload.py" "$ROWS" "${SNAP_TXNS:-1000}" 11 > "$T/work.sql"
psql -X -q -f "$T/work.sql" > "$T/work.out" 2>&1 &
work=$!
at_exit "kill $work 2>/dev/null"
sleep 0.3
cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --table a,b,c \
  --metrics-file "$T/cdc.prom" --metrics-interval 0.2 2> "$T/capture.err" &
CAP=$!
wait "$work" || fail "workload: $(tail -3 "$T/work.out")"
kill -0 "$CAP" 2>/dev/null || fail "capture exited: $(cat "$T/capture.err")"
wait_marker done
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"
[ ! -e "$T/log/snapshot.pending" ] || fail "the snapshot marker is left behind"
snapshot_check "$T/log" || fail "replay differs"
copied=$(sed -n 's/.*initial snapshot copied \([0-9]*\) rows of 3 tables$/\1/p' "$T/capture.err")
grep -q "initial snapshot of 3 tables (~$((3 * ROWS)) rows)" "$T/capture.err" &&
  grep -Eq "snapshot: table 3/3 public.c [0-9]+ rows \(~$ROWS\); $copied of ~$((3 * ROWS)) rows, [0-9]+ rows/s" "$T/capture.err" &&
  [ "$copied" -ge $((3 * ROWS)) ] || fail "progress: $(cat "$T/capture.err")"
[ "$(metric cdc_capture_snapshot_rows_total "$T/cdc.prom")" = "$copied" ] &&
  [ "$(metric cdc_capture_snapshot_tables_done "$T/cdc.prom")" = 3 ] &&
  [ "$(metric cdc_capture_snapshot_running "$T/cdc.prom")" = 0 ] || fail "metrics: $(grep snapshot "$T/cdc.prom")"
busy=$(python3 -c "
import json
ev=[json.loads(l) for l in open('$T/events.ndjson')]
print(sum(1 for e in ev if e['op'] in 'cud'))")
ok "snapshot of 3x$ROWS rows under a writer, then $busy streamed changes: replay equals the tables"

# The same with --snapshot-jobs 3: three connections import the slot's
# snapshot and copy the tables side by side, their rows interleaved in the
# one transaction (check_snapshot.py --interleaved fails if they were not).
# The tables are larger here: the first worker starts on the connection that
# listed them while the others still connect, and a table copied before
# they are ready would leave nothing to interleave.
JOB_ROWS=$((5 * ROWS))
psql_q -c "DROP TABLE a, b, c" >/dev/null
snapshot_schema "$JOB_ROWS"
python3 "$HERE/snap_workload.py" "$JOB_ROWS" "${SNAP_TXNS:-1000}" 12 > "$T/work.sql"
mv "$T/log" "$T/log.serial"
psql -X -q -f "$T/work.sql" > "$T/work.out" 2>&1 &
work=$!
sleep 0.3
cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --slot jobs --publication jobs \
  --table a,b,c --snapshot-jobs 3 2> "$T/capture.err" &
CAP=$!
wait "$work" || fail "workload: $(tail -3 "$T/work.out")"
kill -0 "$CAP" 2>/dev/null || fail "capture exited: $(cat "$T/capture.err")"
wait_marker done-jobs
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"
grep -q "initial snapshot of 3 tables (~$((3 * JOB_ROWS)) rows) at [0-9A-F/]*, 3 at a time" "$T/capture.err" ||
  fail "no parallel snapshot: $(cat "$T/capture.err")"
snapshot_check "$T/log" --interleaved || fail "replay differs (--snapshot-jobs 3)"
# One line per table done, each naming its table once with all its rows:
# their counts add up to the rows copied.
copied=$(sed -n 's/.*initial snapshot copied \([0-9]*\) rows of 3 tables$/\1/p' "$T/capture.err")
done_lines=$(sed -En 's/.*snapshot: table ([0-9])\/3 public\.([a-c]) ([0-9]+) rows .*/\1 \2 \3/p' "$T/capture.err")
[ "$(cut -d' ' -f1 <<< "$done_lines" | sort | tr -d '\n')" = 123 ] &&
  [ "$(cut -d' ' -f2 <<< "$done_lines" | sort | tr -d '\n')" = abc ] &&
  [ "$(awk '{s += $3} END {print s}' <<< "$done_lines")" = "$copied" ] ||
  fail "progress of the tables done: $(cat "$T/capture.err")"
ok "--snapshot-jobs 3, 3x$JOB_ROWS rows under a writer: the tables copied side by side, replay equals the tables"

# A job's connection refused: a role allowed one ordinary connection (a
# walsender is not counted against the limit) asks for four jobs. The
# first snapshot connection lists the tables; the others are refused. The
# snapshot fails with the server's reason and which connection it was, and
# commits nothing. Allowed three, the role then takes the snapshot whole on
# a new slot with eight jobs: for three tables, three connections.
psql_q -c "CREATE ROLE lim LOGIN REPLICATION CONNECTION LIMIT 1" \
       -c "GRANT SELECT ON a, b, c TO lim" >/dev/null
LIM_DSN=${CDC_TEST_DSN/user=postgres/user=lim}
[[ $LIM_DSN == *user=lim* ]] || fail "no user in $CDC_TEST_DSN"
expect_exit 69 cdc-capture --log "$T/lim" --dsn "$LIM_DSN" --slot lim \
  --publication jobs --snapshot-jobs 4 --exit-when-idle --reconnect-max 1
grep -Eq "^cdc-capture: gave up after 1 s of failures: snapshot connection [2-4] \(--snapshot-jobs 4\): .*too many connections for role \"lim\"" "$T/err" ||
  fail "the refused connection: $(cat "$T/err")"
[ -e "$T/lim/snapshot.pending" ] || fail "no snapshot marker after the failed snapshot"
[ -z "$(cdc-tail --log "$T/lim")" ] || fail "the failed snapshot left events"
psql_q -c "ALTER ROLE lim CONNECTION LIMIT 3" >/dev/null
for i in $(seq 51); do  # the failed run's sessions end
  [ "$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'lim'")" = 0 ] && break
  [ "$i" -lt 51 ] || fail "the failed run's sessions linger"
  sleep 0.1
done
cdc-capture --log "$T/lim" --dsn "$LIM_DSN" --slot lim --publication jobs \
  --snapshot-jobs 8 --exit-when-idle 2> "$T/lim.err" || fail "eight jobs: $(cat "$T/lim.err")"
grep -q "initial snapshot of 3 tables .*, 3 at a time$" "$T/lim.err" || fail "eight jobs: $(cat "$T/lim.err")"
[ ! -e "$T/lim/snapshot.pending" ] || fail "the snapshot marker is left behind"
cdc-log verify --log "$T/lim" > /dev/null || fail "verify after the retaken snapshot"
want=$(psql_q -c "SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c)")
got=$(cdc-tail --log "$T/lim" --op r | wc -l)
[ "$got" = "$want" ] || fail "the retaken snapshot has $got rows, the tables $want"
ok "a job's connection refused: exit 69 naming it, nothing committed; then 8 jobs take the snapshot of 3 tables whole over 3 connections ($got rows)"

# The stream's catalog lookups keep a snapshot connection, out of its
# transaction, rather than open another: right after the snapshot the
# capture's one ordinary session last ran RESET ALL. A table made after the
# snapshot then has its generated column named, which a connection still in
# the snapshot's transaction could not see.
psql_q -c "CREATE PUBLICATION allp FOR ALL TABLES" >/dev/null
cdc-capture --log "$T/kept" --dsn "$CDC_TEST_DSN" --slot kept --publication allp \
  --snapshot-jobs 2 2> "$T/kept.err" &
CAP=$!
at_exit "kill $CAP 2>/dev/null"
for _ in $(seq 300); do
  grep -q "streaming from slot kept" "$T/kept.err" && break
  kill -0 "$CAP" 2>/dev/null || fail "capture exited: $(cat "$T/kept.err")"
  sleep 0.1
done
grep -q "streaming from slot kept" "$T/kept.err" || fail "no stream: $(cat "$T/kept.err")"
sessions=$(psql_q -c "SELECT string_agg(query, '|') FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
[ "$sessions" = "RESET ALL" ] || fail "capture's ordinary sessions after the snapshot: '$sessions'"
psql_q -c "CREATE TABLE gen (id int PRIMARY KEY, a int, g int GENERATED ALWAYS AS (a * 2) STORED)" \
       -c "INSERT INTO gen VALUES (1, 5)" >/dev/null
psql_q -c "SELECT pg_logical_emit_message(true, 'cdc-test', 'done-kept')" >/dev/null
for i in $(seq 301); do
  cdc-tail --log "$T/kept" --op m 2>/dev/null | grep -q '"content":"done-kept"' && break
  [ "$i" -lt 301 ] || fail "marker done-kept never reached the log"
  sleep 0.1
done
gen=$(cdc-tail --log "$T/kept" --schema-changes --table gen | python3 -c '
import json, sys
print([e.get("generated") for e in map(json.loads, sys.stdin) if e["op"] == "s"])')
[ "$gen" = "[['g']]" ] || fail "the new table's generated column through the kept connection: $gen"
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/kept.err")"
ok "the stream's lookups keep a snapshot connection (RESET, out of its transaction): a later table's generated column is named"
