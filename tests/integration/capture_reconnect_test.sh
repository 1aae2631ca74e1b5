#!/usr/bin/env bash
# The first capture process of a new log (it creates the slot, takes the
# snapshot, records the source in log.json and streams) lives through
# PostgreSQL restarts (-m fast and -m immediate) and a dropped connection,
# and keeps streaming: every check a reconnect makes reads the log as it is
# on disk now. Around it, what a reconnect must not change: stored
# generated columns are still looked up after an immediate restart, the
# server's own warnings reach stderr with the program's name, and a role's
# search_path does not change how reg* values render. A table never
# analysed has its estimate called unknown in the snapshot's progress.
source "$(dirname "$0")/lib.sh"
source "$HERE/wl.sh"
pg_start "$T"
wl_schema
psql_q <<'SQL'
CREATE SCHEMA fid;
CREATE TYPE fid.comp AS (x int);
CREATE TABLE rt (id int PRIMARY KEY, t regtype);
INSERT INTO rt VALUES (1, 'fid.comp'), (2, 'int4');
CREATE TABLE fresh (id int PRIMARY KEY);
INSERT INTO fresh VALUES (1), (2);
SQL
as_least_privilege
psql_q -c "GRANT USAGE ON SCHEMA fid TO cdc_least; ALTER ROLE cdc_least SET search_path = 'fid'"
[ -z "$(ls -A "$T/log" 2>/dev/null)" ] || fail "the log is not new"
# Not -q: the snapshot's progress is checked below.
cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --reconnect-max 60 \
  --status-interval 1 2> "$T/capture.err" &
CAP=$!
at_exit "kill -9 $CAP 2>/dev/null"
for _ in $(seq 300); do
  grep -q "streaming from slot" "$T/capture.err" && break
  sleep 0.1
done
wait_marker started
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["source"]["slot"] == "cdc"' "$T/log/log.json" ||
  fail "the first process did not record its source: $(cat "$T/log/log.json")"
grep -q "snapshot: table [0-9]/[0-9] public.fresh 2 rows (estimate unknown)" "$T/capture.err" ||
  fail "an unanalysed table's estimate: $(grep snapshot "$T/capture.err")"
ok "a table never analysed: its estimate is unknown, not ~0"

n=1
work() {  # a batch of workload transactions, committed
  python3 "$HERE/workload.py" "$n" 300 "$n" | psql -X -q > /dev/null
  n=$((n + 300))
}
work
for how in fast immediate terminate; do
  case $how in
    terminate)
      psql_q -c "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'cdc'" > /dev/null ;;
    *) pg_restart "$how" ;;
  esac
  work
  wait_marker "after-$how"
  kill -0 "$CAP" 2>/dev/null || { wait "$CAP"; fail "capture exited $? after $how: $(cat "$T/capture.err")"; }
  ok "the first capture process lives through $how and keeps streaming"
done
! grep -q "holds imported events" "$T/capture.err" || fail "a reconnect read a stale identity: $(cat "$T/capture.err")"

# After the immediate restart: a new table's generated column is named.
psql_q <<'SQL'
CREATE TABLE gen (id int PRIMARY KEY, a int, g int GENERATED ALWAYS AS (a * 2) STORED);
GRANT SELECT ON gen TO cdc_least;
INSERT INTO gen (id, a) VALUES (1, 5);
INSERT INTO rt VALUES (3, 'fid.comp'), (4, 'int4');
SQL
wait_marker after-gen
! grep -q "cannot look up generated columns" "$T/capture.err" ||
  fail "a transient error turned the lookup off: $(cat "$T/capture.err")"
cdc-tail --log "$T/log" --table public.gen --schema-changes |
  python3 -c '
import json, sys
s = [e for e in map(json.loads, sys.stdin) if e["op"] == "s"]
assert s and s[-1]["generated"] == ["g"], s' || fail "the generated column is not named"
ok "generated columns are still looked up after an immediate restart"

# Snapshot (1, 2) and stream (3, 4) render reg* values alike, qualified
# unless in pg_catalog, whatever the role's search_path.
got=$(cdc-tail --log "$T/log" --table public.rt | python3 -c '
import json, sys
print(" ".join("%s:%s" % (e["after"]["id"], e["after"]["t"]) for e in map(json.loads, sys.stdin)))')
[ "$got" = "1:fid.comp 2:integer 3:fid.comp 4:integer" ] || fail "regtype values: $got"
ok "a role's search_path does not change regtype values (snapshot and stream alike)"

# Every line on stderr is capture's own, the server's warnings included.
! grep -v "^cdc-capture: " "$T/capture.err" | grep -q . ||
  fail "lines without the program's name: $(grep -v "^cdc-capture: " "$T/capture.err")"
ok "every line on stderr starts with cdc-capture:"

kill -TERM "$CAP"; wait "$CAP" || fail "capture did not exit 0 on SIGTERM: $(tail -3 "$T/capture.err")"
# The workload's transactions, each once, in order, and the tables they
# made (the other tables' events left out, seqs renumbered).
cdc-log verify --log "$T/log" -q || fail "verify"
cdc-tail --log "$T/log" --schema-changes | python3 -c '
import json, sys
n = 0
for e in map(json.loads, sys.stdin):
    if e["op"] == "m" or e.get("table") in ("a", "b", "c"):
        n += 1
        e["seq"] = n
        print(json.dumps(e))' > "$T/events.ndjson"
psql_q -F $'\t' -c "SELECT n, xid FROM wl" > "$T/wl.tsv"
for t in a b c; do psql_q -F $'\t' -c "SELECT id, v, note FROM $t" > "$T/$t.tsv"; done
python3 "$HERE/check_workload.py" "$T/events.ndjson" "$T/wl.tsv" "$T/a.tsv" "$T/b.tsv" "$T/c.tsv" ||
  fail "the log differs from what committed"
ok "every committed transaction once, in order, across the reconnects"
