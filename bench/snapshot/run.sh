#!/usr/bin/env bash
# bench/snapshot: cdc-capture's initial snapshot against psql's
# `COPY t TO STDOUT > /dev/null` (the limit: the server's COPY with nothing
# done to the rows) in the same run, on the same tables.
#
#   bench/snapshot/run.sh [--bin build/tools] [--json bench/results/snapshot.json]
#                         [--rows 1000000] [--runs 3] [--jobs 4]
#
# Each table holds ROWS rows of a bigint key and a 256-byte text payload.
# Two cases:
#   1 table:  cdc-capture against one psql COPY;
#   N tables: cdc-capture --snapshot-jobs N against N psql COPYs run side
#             by side (and, for reference, cdc-capture copying them one
#             after another).
# Each cdc-capture run creates a fresh slot and log, copies the tables
# durably into the log and exits once idle (--exit-when-idle); its peak RSS
# is read from /usr/bin/time. Runs alternate who goes first; the medians
# of the runs are compared; "CPUs busy" is the share of all CPUs' time in
# use during the median run (/proc/stat), which says whether the machine,
# not the tool, was the limit. Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/snapshot.json
ROWS=1000000
RUNS=3
JOBS=4
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
source "$ROOT/scripts/pg.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench.XXXXXX")
trap 'pg_stop; rm -rf "$T"' EXIT
pg_start "$T" >/dev/null
PAYLOAD="left(repeat(md5(g::text), 2) || ' order paid shipped customer berlin ' || repeat('note ', 40), 256)"
all=""
for i in $(seq "$JOBS"); do
  psql_q -c "CREATE TABLE t$i (id bigint PRIMARY KEY, payload text)" \
         -c "INSERT INTO t$i SELECT g, $PAYLOAD FROM generate_series(1, $ROWS) g" >/dev/null
  all="$all${all:+, }t$i"
done
psql_q -c "VACUUM ANALYZE" -c "CHECKPOINT" -c "CREATE PUBLICATION p1 FOR TABLE t1" \
       -c "CREATE PUBLICATION pn FOR TABLE $all" >/dev/null
: > "$T/results.tsv"
now_s() { date +%s.%N; }
# Busy and idle jiffies of all CPUs (/proc/stat), to show how saturated the
# machine was during a run.
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat; }
cpu0=""
cpu_start() { cpu0=$(cpu_ticks); }
cpu_busy() {
  local b0 i0 b1 i1
  read -r b0 i0 <<< "$cpu0"; read -r b1 i1 < <(cpu_ticks)
  python3 -c "print(round(100 * ($b1 - $b0) / max(1, ($b1 - $b0) + ($i1 - $i0))))"
}
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$(python3 -c "print($3 - $2)")" "${4:-0}" "$(cpu_busy)" >> "$T/results.tsv"; }

# N psql COPYs side by side (tables t1..tN).
run_psql() {
  local n=$1 t0 t1 i pids=()
  cpu_start
  t0=$(now_s)
  for i in $(seq "$n"); do psql -X -c "COPY t$i TO STDOUT" > /dev/null & pids+=($!); done
  for i in "${pids[@]}"; do wait "$i"; done
  t1=$(now_s)
  record "psql COPY x$n" "$t0" "$t1"
}

slots=0
# cdc-capture of publication $2 with --snapshot-jobs $3, expecting $4 rows.
run_capture() {
  local who=$1 pub=$2 jobs=$3 want=$4 t0 t1 got
  slots=$((slots + 1))
  rm -rf "$T/log"
  cpu_start
  t0=$(now_s)
  /usr/bin/time -f %M -o "$T/rss" cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" \
    --slot "s$slots" --publication "$pub" --snapshot-jobs "$jobs" --exit-when-idle -q
  t1=$(now_s)
  got=$(cdc-tail --log "$T/log" --op r | wc -l)
  [ "$got" = "$want" ] || { echo "cdc-capture wrote $got of $want rows" >&2; exit 1; }
  psql_q -c "SELECT pg_drop_replication_slot('s$slots')" >/dev/null
  record "$who" "$t0" "$t1" "$(cat "$T/rss")"
}

one_round() {
  run_psql 1
  run_capture "cdc-capture" p1 1 "$ROWS"
  run_psql "$JOBS"
  run_capture "cdc-capture x$JOBS" pn "$JOBS" $((ROWS * JOBS))
  run_capture "cdc-capture x$JOBS serial" pn 1 $((ROWS * JOBS))
}
for run in $(seq "$RUNS"); do
  if [ $((run % 2)) = 1 ]; then
    one_round
  else
    run_capture "cdc-capture x$JOBS serial" pn 1 $((ROWS * JOBS))
    run_capture "cdc-capture x$JOBS" pn "$JOBS" $((ROWS * JOBS))
    run_psql "$JOBS"
    run_capture "cdc-capture" p1 1 "$ROWS"
    run_psql 1
  fi
  echo "  run $run done" >&2
done

mkdir -p "$(dirname "$JSON")"
python3 - "$T/results.tsv" "$ROWS" "$JOBS" "$JSON" <<'PY'
import json, sys, platform, os
rows, jobs = int(sys.argv[2]), int(sys.argv[3])
res = {}
for line in open(sys.argv[1]):
    who, secs, rss, busy = line.rstrip("\n").split("\t")
    res.setdefault(who, []).append((float(secs), int(rss), int(busy)))
def median(v):
    v = sorted(v, key=lambda x: x[0])
    return v[len(v) // 2]
n = jobs
cases = [("psql COPY x1", 1), ("cdc-capture", 1), (f"psql COPY x{n}", n),
         (f"cdc-capture x{n}", n), (f"cdc-capture x{n} serial", n)]
mid = {w: median(res[w]) for w, _ in cases}
rate = {w: rows * k / mid[w][0] for w, k in cases}
ratio1 = rate["cdc-capture"] / rate["psql COPY x1"]
ration = rate[f"cdc-capture x{n}"] / rate[f"psql COPY x{n}"]
serial = rate[f"cdc-capture x{n} serial"] / rate[f"psql COPY x{n}"]
print(f"{'':30} {'tables':>6} {'rows/s (median)':>16} {'seconds':>9} {'peak RSS':>10} {'CPUs busy':>10}")
labels = {"psql COPY x1": "psql COPY", "cdc-capture": "cdc-capture",
          f"psql COPY x{n}": f"{n} psql COPYs side by side",
          f"cdc-capture x{n}": f"cdc-capture --snapshot-jobs {n}",
          f"cdc-capture x{n} serial": "cdc-capture (one at a time)"}
for w, k in cases:
    s, r, b = mid[w]
    print(f"{labels[w]:30} {k:6} {rate[w]:16,.0f} {s:9.2f} {(str(r // 1024) + ' MiB') if r else '-':>10} {str(b) + '%':>10}")
print(f"1 table:  cdc-capture / psql COPY: {ratio1:.2f} (target >= 0.85)")
print(f"{n} tables: cdc-capture --snapshot-jobs {n} / {n} psql COPYs: {ration:.2f} (target >= 0.85); one at a time: {serial:.2f}")
out = {"bench": "snapshot", "rows_per_table": rows, "tables": [1, n], "payload_bytes": 256,
       "host": {"cpus": os.cpu_count(), "machine": platform.machine()},
       "runs": {w: [{"seconds": s, "peak_rss_kib": r, "cpus_busy_percent": b} for s, r, b in v] for w, v in res.items()},
       "rows_per_second": rate, "ratio_1_table": ratio1, f"ratio_{n}_tables": ration,
       f"ratio_{n}_tables_one_at_a_time": serial,
       "capture_peak_rss_kib": max(r for w, v in res.items() if w.startswith("cdc") for _, r, _ in v)}
json.dump(out, open(sys.argv[4], "w"), indent=2)
print("wrote", sys.argv[4])
PY
