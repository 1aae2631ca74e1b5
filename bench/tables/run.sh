#!/usr/bin/env bash
# bench/tables: what the number of published tables costs cdc-capture.
#
#   bench/tables/run.sh [--bin build/tools] [--json bench/results/tables.json]
#                       [--tables 10,1000,10000] [--rows 100] [--events 100000]
#
# For each count N, in a fresh schema: N tables of (id int primary key,
# note text) holding --rows rows each, all in one publication. Then, each
# a cdc-capture run that exits once idle (--exit-when-idle), with its wall
# time, CPU (user + system) and peak RSS:
#   snapshot     creates the slot and copies the N tables (the initial
#                snapshot), N x --rows events;
#   start        nothing to do: connecting, checking the publication's
#                tables and the slot, reading the log's schemas;
#   first touch  one transaction writing one row in every table: the first
#                change of each table since capture started also writes the
#                table's schema event;
#   again        the same again, schemas known;
#   one table    --events events in 100-row transactions into one of the N
#                tables: CPU per event, which must not grow with N.
# PostgreSQL's lock table must hold a lock per table in one transaction
# (the snapshot's); max_locks_per_transaction is raised to fit, as the
# operator of a database of many thousands of tables must (cdc-capture(1),
# Initial snapshot).
# Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/tables.json
COUNTS=10,1000,10000
ROWS=100
EVENTS=100000
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --tables) COUNTS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
source "$ROOT/scripts/pg.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench.XXXXXX")
trap 'pg_stop; rm -rf "$T"' EXIT
pg_start "$T" >/dev/null
MAX=$(echo "$COUNTS" | tr , '\n' | sort -n | tail -1)
# Locks for every table, its primary key index and TOAST table, in the
# snapshot's (and the set-up's) single transaction.
echo "max_locks_per_transaction = $(( (MAX * 3) / 100 + 64 ))" >> "$T/pg/postgresql.conf"
pg_restart
: > "$T/results.tsv"

# measure STEP N CMD...: runs CMD; appends N, STEP, wall s, CPU s, peak KiB.
measure() {
  local step=$1 n=$2; shift 2
  python3 - "$step" "$n" "$T/results.tsv" "$@" <<'PY'
import resource, subprocess, sys, time
step, n, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
t = time.monotonic()
rc = subprocess.call(cmd)
wall = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit(f"{step} at {n} tables: {' '.join(cmd)} exited {rc}")
open(out, "a").write(f"{n}\t{step}\t{wall:.4f}\t{r.ru_utime + r.ru_stime:.4f}\t{r.ru_maxrss}\n")
PY
}

for n in ${COUNTS//,/ }; do
  echo "$n tables of $ROWS rows" >&2
  psql_q -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS b CASCADE" \
    -c "CREATE SCHEMA b" >/dev/null
  psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
BEGIN;
SELECT format('CREATE TABLE b.t%s (id int PRIMARY KEY, note text)', g)
  FROM generate_series(1, $n) g \gexec
SELECT format('INSERT INTO b.t%s SELECT i, %L || i FROM generate_series(1, $ROWS) i',
              g, 'row of the table bench ') FROM generate_series(1, $n) g \gexec
COMMIT;
CREATE PUBLICATION p$n FOR TABLES IN SCHEMA b;
CHECKPOINT;
SQL
  L=$T/log$n
  cap=(cdc-capture --log "$L" --dsn "$CDC_TEST_DSN" --slot "s$n" --publication "p$n" --exit-when-idle -q)
  measure snapshot "$n" "${cap[@]}"
  got=$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
  [ "$got" -ge $((n * ROWS)) ] || { echo "snapshot wrote $got of $((n * ROWS)) events" >&2; exit 1; }
  measure start "$n" "${cap[@]}"
  # touch K: one transaction writing row ROWS+1+K of every table.
  touch() {
    psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
BEGIN;
SELECT format('INSERT INTO b.t%s VALUES (%s, ''touched'')', g, $ROWS + 1 + $1)
  FROM generate_series(1, $n) g \gexec
COMMIT;
SQL
  }
  touch 0
  measure "first touch" "$n" "${cap[@]}"
  touch 1
  measure again "$n" "${cap[@]}"
  echo "INSERT INTO b.t1 (id, note) SELECT nextval('ids'), 'one table of many' FROM generate_series(1, 100);" > "$T/one.sql"
  psql_q -c "SET client_min_messages = warning" -c "DROP SEQUENCE IF EXISTS ids" \
    -c "CREATE SEQUENCE ids START 1000000" >/dev/null
  PGOPTIONS="-c synchronous_commit=off" pgbench -n -c 2 -j 2 -t $((EVENTS / 200)) -f "$T/one.sql" >/dev/null
  measure "one table" "$n" "${cap[@]}"
  psql_q -c "SELECT pg_drop_replication_slot('s$n')" -c "DROP PUBLICATION p$n" >/dev/null
  rm -rf "$L"
done

mkdir -p "$(dirname "$JSON")"
python3 - "$T/results.tsv" "$ROWS" "$EVENTS" "$JSON" <<'PY'
import json, sys, collections
tsv, rows, events, out_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
res = collections.defaultdict(dict)
for line in open(tsv):
    n, step, wall, cpu, rss = line.rstrip("\n").split("\t")
    res[int(n)][step] = {"wall_s": float(wall), "cpu_s": float(cpu), "peak_rss_kib": int(rss)}
print(f"{'tables':>7} {'snapshot s':>10} {'ms/table':>8} {'start s':>8} {'start MiB':>9} "
      f"{'1st touch s':>11} {'again s':>8} {'snap MiB':>8} {'µs CPU/ev 1 table':>17}")
out = []
for n in sorted(res):
    r = res[n]
    per_event = 1e6 * r["one table"]["cpu_s"] / events
    row = {"tables": n, "rows_per_table": rows, **r,
           "snapshot_ms_per_table": 1000 * r["snapshot"]["wall_s"] / n,
           "one_table_cpu_us_per_event": per_event}
    out.append(row)
    print(f"{n:7} {r['snapshot']['wall_s']:10.2f} {row['snapshot_ms_per_table']:8.2f} "
          f"{r['start']['wall_s']:8.2f} {r['start']['peak_rss_kib'] / 1024:9.1f} "
          f"{r['first touch']['wall_s']:11.2f} {r['again']['wall_s']:8.2f} "
          f"{r['snapshot']['peak_rss_kib'] / 1024:8.1f} {per_event:17.2f}")
json.dump({"bench": "tables", "events_one_table": events, "results": out},
          open(out_path, "w"), indent=2)
print("wrote", out_path)
PY
