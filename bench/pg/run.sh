#!/usr/bin/env bash
# bench/pg: rows/s that cdc-pg applies to a PostgreSQL database, against
# psql's COPY FROM STDIN of the same rows into the same server, in one run.
#
#   bench/pg/run.sh [--bin build/tools] [--json bench/results/pg.json]
#                   [--events 1000000] [--batch 5000] [--runs 3]
#
# One throwaway PostgreSQL (scripts/pg.sh; fsync and synchronous_commit on)
# is the target of every measure. Two logs hold --events inserts into one
# table (id int primary key, status text, total numeric(10,2), note text:
# about 150 bytes of event), one in 100-row transactions and one in 1-row
# transactions; cdc-pg applies each whole into an empty table (time from
# start to exit, connecting and reading the log included; --batch events
# per target transaction). The limit is `psql -c "COPY orders FROM STDIN"`
# of the same rows as text into the same empty table, one transaction. The
# median of --runs is reported for each; prints a table, writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/pg.json
EVENTS=1000000
BATCH=5000
RUNS=3
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
case "$EVENTS$BATCH$RUNS" in
  *[!0-9]* | "") echo "run.sh: --events, --batch and --runs are numbers" >&2; exit 64 ;;
esac
export PATH="$BIN:$PATH"
source "$ROOT/scripts/pg.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-pg.XXXXXX")
trap 'pg_stop; rm -rf "$T"' EXIT
pg_start "$T"
psql -X -q -c "SET client_min_messages = warning" -c "CREATE TABLE orders (id int PRIMARY KEY, status text, total numeric(10,2), note text)"

# The logs (cdc-log import) and the same rows as COPY text.
for per in 100 1; do
  python3 - "$EVENTS" "$per" > "$T/in$per.ndjson" <<'PY'
import sys
n, per = int(sys.argv[1]), int(sys.argv[2])
w = sys.stdout.write
for i in range(n):
    t = i // per + 1
    last = ',"last":true' if (i + 1) % per == 0 or i + 1 == n else ''
    w('{"lsn":"0/%X","xid":%d,"ts":"2026-11-29T07:41:02.123456Z","op":"c",'
      '"schema":"public","table":"orders","key":{"id":%d},"before":null,'
      '"after":{"id":%d,"status":"paid","total":"%d.50","note":"order note %d"}%s}\n'
      % (t * 256, t, i, i, i % 1000, i, last))
PY
  cdc-log import --log "$T/log$per" -q < "$T/in$per.ndjson"
done
python3 - "$EVENTS" > "$T/rows.tsv" <<'PY'
import sys
w = sys.stdout.write
for i in range(int(sys.argv[1])):
    w("%d\tpaid\t%d.50\torder note %d\n" % (i, i % 1000, i))
PY

now() { date +%s.%N; }
median() { python3 -c "import sys, statistics; print(int(statistics.median(map(int, sys.argv[1:]))))" "$@"; }
fresh() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -c "TRUNCATE orders" -c "DROP SCHEMA IF EXISTS cdc CASCADE" -c "CHECKPOINT"; }
count_ok() {
  [ "$(psql -X -At -c "SELECT count(*) FROM orders")" = "$EVENTS" ] ||
    { echo "run.sh: $1: the table does not hold $EVENTS rows" >&2; exit 1; }
}
sink_rate() {  # sink_rate PER -> rows/s (median of RUNS)
  local rates=() s e
  for i in $(seq "$RUNS"); do
    fresh
    s=$(now)
    cdc-pg --log "$T/log$1" -c "b$i" --dsn "$CDC_TEST_DSN" --batch "$BATCH" -q
    e=$(now)
    count_ok "cdc-pg ($1-row transactions)"
    rates+=("$(python3 -c "print(int($EVENTS / ($e - $s)))")")
  done
  median "${rates[@]}"
}
copy_rate() {
  local rates=() s e
  for i in $(seq "$RUNS"); do
    fresh
    s=$(now)
    psql -X -q -c "COPY orders FROM STDIN" < "$T/rows.tsv"
    e=$(now)
    count_ok "COPY"
    rates+=("$(python3 -c "print(int($EVENTS / ($e - $s)))")")
  done
  median "${rates[@]}"
}

copy=$(copy_rate)
r100=$(sink_rate 100)
r1=$(sink_rate 1)
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
printf '%-48s %12s %7s\n' "measure ($EVENTS rows, batch $BATCH)" "rows/s" "ratio"
printf '%-48s %12s %7s\n' "psql COPY orders FROM STDIN (the limit)" "$copy" "1.00"
printf '%-48s %12s %7s\n' "cdc-pg, 100-row transactions" "$r100" "$(ratio "$r100" "$copy")"
printf '%-48s %12s %7s\n' "cdc-pg, 1-row transactions" "$r1" "$(ratio "$r1" "$copy")"
mkdir -p "$(dirname "$JSON")"
cat > "$JSON" <<J
{"events":$EVENTS,"batch":$BATCH,"runs":$RUNS,"host_cpus":$(nproc),"server":$PG_MAJOR,
 "copy_rows_per_s":$copy,
 "cdc_pg_100_row_txn_rows_per_s":$r100,"ratio_100_row":$(ratio "$r100" "$copy"),
 "cdc_pg_1_row_txn_rows_per_s":$r1,"ratio_1_row":$(ratio "$r1" "$copy")}
J
echo "wrote $JSON"
