#!/usr/bin/env bash
# bench/snapshot: cdc-capture's initial snapshot against psql's
# `COPY t TO STDOUT > /dev/null` (the limit: the server's COPY with nothing
# done to the rows) in the same run, on the same table.
#
#   bench/snapshot/run.sh [--bin build/tools] [--json bench/results/snapshot.json]
#                         [--rows 1000000] [--runs 3]
#
# The table holds ROWS rows of a bigint key and a 256-byte text payload.
# Each cdc-capture run creates a fresh slot and log, copies the table
# durably into the log and exits once idle (--exit-when-idle); its peak RSS
# is read from /usr/bin/time. Runs alternate who goes first; the medians
# of the runs are compared. Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/snapshot.json
ROWS=1000000
RUNS=3
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
source "$ROOT/scripts/pg.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench.XXXXXX")
trap 'pg_stop; rm -rf "$T"' EXIT
pg_start "$T" >/dev/null
PAYLOAD="left(repeat(md5(g::text), 2) || ' order paid shipped customer berlin ' || repeat('note ', 40), 256)"
psql_q -c "CREATE TABLE t (id bigint PRIMARY KEY, payload text)" \
       -c "INSERT INTO t SELECT g, $PAYLOAD FROM generate_series(1, $ROWS) g" \
       -c "VACUUM ANALYZE t" -c "CHECKPOINT" -c "CREATE PUBLICATION p FOR TABLE t" >/dev/null
: > "$T/results.tsv"
now_s() { date +%s.%N; }

run_psql() {
  local t0 t1
  t0=$(now_s)
  psql -X -c "COPY t TO STDOUT" > /dev/null
  t1=$(now_s)
  printf 'psql COPY\t%s\t0\n' "$(python3 -c "print($t1 - $t0)")" >> "$T/results.tsv"
}

run_capture() {
  local n=$1 t0 t1 got rss
  rm -rf "$T/log"
  t0=$(now_s)
  /usr/bin/time -f %M -o "$T/rss" cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" \
    --slot "s$n" --publication p --exit-when-idle -q
  t1=$(now_s)
  got=$(cdc-tail --log "$T/log" --op r | wc -l)
  [ "$got" = "$ROWS" ] || { echo "cdc-capture wrote $got of $ROWS rows" >&2; exit 1; }
  rss=$(cat "$T/rss")
  psql_q -c "SELECT pg_drop_replication_slot('s$n')" >/dev/null
  printf 'cdc-capture\t%s\t%s\n' "$(python3 -c "print($t1 - $t0)")" "$rss" >> "$T/results.tsv"
}

for run in $(seq "$RUNS"); do
  if [ $((run % 2)) = 1 ]; then run_psql; run_capture "$run"; else run_capture "$run"; run_psql; fi
  echo "  run $run done" >&2
done

mkdir -p "$(dirname "$JSON")"
python3 - "$T/results.tsv" "$ROWS" "$JSON" <<'PY'
import json, sys, platform, os
rows = int(sys.argv[2])
res = {}
for line in open(sys.argv[1]):
    who, secs, rss = line.rstrip("\n").split("\t")
    res.setdefault(who, []).append((float(secs), int(rss)))
def median(v):
    v = sorted(v, key=lambda x: x[0])
    return v[len(v) // 2]
mid = {w: median(r) for w, r in res.items()}
rate = {w: rows / b[0] for w, b in mid.items()}
ratio = rate["cdc-capture"] / rate["psql COPY"]
print(f"{'':14} {'rows/s (median)':>16} {'seconds':>9} {'peak RSS':>10}")
for w in ("psql COPY", "cdc-capture"):
    s, r = mid[w]
    print(f"{w:14} {rate[w]:16,.0f} {s:9.2f} {(str(r // 1024) + ' MiB') if r else '-':>10}")
print(f"cdc-capture / psql COPY: {ratio:.2f} (target >= 0.70)")
out = {"bench": "snapshot", "rows": rows, "payload_bytes": 256,
       "host": {"cpus": os.cpu_count(), "machine": platform.machine()},
       "runs": {w: [{"seconds": s, "peak_rss_kib": r} for s, r in v] for w, v in res.items()},
       "rows_per_second": rate, "ratio": ratio,
       "capture_peak_rss_kib": max(r for _, r in res["cdc-capture"])}
json.dump(out, open(sys.argv[3], "w"), indent=2)
print("wrote", sys.argv[3])
PY
