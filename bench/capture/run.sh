#!/usr/bin/env bash
# bench/capture: cdc-capture against pg_recvlogical, side by side, in one run.
#
#   bench/capture/run.sh [--bin build/tools] [--json bench/results/capture.json]
#                        [--events 1000000] [--single 200000] [--runs 2]
#                        [--latency-seconds 60] [--latency-rates 50000,5000,100]
#                        [--latency-runs 3] [--latency-transport unix|tcp]
#
# --latency-seconds 0 measures the drains only.
# For each workload, slots are created before the workload is generated, so
# every drainer sees the same WAL. Each slot is drained once: cdc-capture
# into a fresh log (durably, group commit), pg_recvlogical to /dev/null,
# over the unix socket and over TCP on loopback; each drainer's CPU (user +
# system, from getrusage of the finished process and all its threads) is
# recorded beside its rate. Then end-to-end latency at each steady rate:
# commit in PostgreSQL → line on `cdc-tail -f` stdout, with retention
# deleting segments, alternating with the same measure for pg_recvlogical
# and test_decoding (PostgreSQL's own floor on this host). Transactions
# carry rate/500 rows (1 to 100), so every rate commits 100-500 times a
# second and a low rate is not one commit a second. Prints tables; writes
# JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/capture.json
EVENTS=1000000
SINGLE=200000
RUNS=2
LAT_SECONDS=60
LAT_RATES=50000,5000,100
LAT_RUNS=3
LAT_TRANSPORT=unix
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --single) SINGLE=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --latency-seconds) LAT_SECONDS=$2; shift 2 ;;
    --latency-rates) LAT_RATES=$2; shift 2 ;;
    --latency-rate) LAT_RATES=$2; shift 2 ;;  # one rate, the old spelling
    --latency-runs) LAT_RUNS=$2; shift 2 ;;
    --latency-transport) LAT_TRANSPORT=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
source "$ROOT/scripts/pg.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench.XXXXXX")
trap 'pg_stop; rm -rf "$T"' EXIT
PG_TCP=1 pg_start "$T" >/dev/null
TCP_DSN="host=127.0.0.1 port=$PGPORT user=postgres dbname=postgres"
UNIX_DSN=$CDC_TEST_DSN
RECV=$PG_CLIENT_BIN/pg_recvlogical  # Debian 15 client for every server
export PGOPTIONS="-c synchronous_commit=off"  # generating, not measuring
psql_q -c "CREATE TABLE bench (id bigserial PRIMARY KEY, payload text)" \
       -c "CREATE PUBLICATION cdc FOR TABLE bench"
: > "$T/results.tsv"

now_s() { date +%s.%N; }
# cpu_of FILE CMD...: runs CMD; writes the CPU seconds (user + system) it and
# its threads used to FILE.
cpu_of() {
  python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.4f\n" % (r.ru_utime + r.ru_stime))
sys.exit(rc)' "$@"
}

# drain KIND TRANSPORT SLOT EVENTS ENDPOS → appends a result row
drain() {
  local kind=$1 transport=$2 slot=$3 events=$4 endpos=$5 dsn t0 t1
  dsn=$UNIX_DSN; [ "$transport" = tcp ] && dsn=$TCP_DSN
  rm -rf "$T/log"
  t0=$(now_s)
  if [ "$kind" = cdc-capture ]; then
    cpu_of "$T/cpu" cdc-capture --log "$T/log" --dsn "$dsn" --slot "$slot" \
      --publication cdc --exit-when-idle -q
  else
    cpu_of "$T/cpu" "$RECV" -d "$dsn" --slot "$slot" --start --no-loop \
      --endpos "$endpos" -o proto_version=1 -o publication_names=cdc -f /dev/null
  fi
  t1=$(now_s)
  if [ "$kind" = cdc-capture ]; then  # checked outside the timed part
    local got; got=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
    [ "$got" -ge "$events" ] || { echo "cdc-capture wrote $got of $events events" >&2; exit 1; }
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$WORKLOAD" "$kind" "$transport" "$events" \
    "$(python3 -c "print($t1 - $t0)")" "$(cat "$T/cpu")" >> "$T/results.tsv"
  echo "  $WORKLOAD $kind over $transport: $(python3 -c "print(round($events / ($t1 - $t0)))") events/s, $(python3 -c "print(round(1e6 * $(cat "$T/cpu") / $events, 2))") µs CPU/event" >&2
}

# workload NAME EVENTS SQL-GENERATOR-CMD
workload() {
  WORKLOAD=$1
  local events=$2 gen=$3 run slots=()
  for run in $(seq "$RUNS"); do
    for s in cdc_u cdc_t recv_u recv_t; do
      psql_q -c "SELECT pg_create_logical_replication_slot('${s}_$run', 'pgoutput')" >/dev/null
    done
  done
  psql_q -c "TRUNCATE bench" >/dev/null
  eval "$gen"
  local endpos; endpos=$(psql_q -c "SELECT pg_current_wal_flush_lsn()")
  psql_q -c "CHECKPOINT" >/dev/null
  for run in $(seq "$RUNS"); do
    # Alternate who goes first, so neither always gets a warm cache.
    if [ $((run % 2)) = 1 ]; then order="cdc recv"; else order="recv cdc"; fi
    for who in $order; do
      for tr in unix tcp; do
        local slot=${who}_${tr:0:1}_$run kind=cdc-capture
        [ "$who" = recv ] && kind=pg_recvlogical
        drain "$kind" "$tr" "$slot" "$events" "$endpos"
        psql_q -c "SELECT pg_drop_replication_slot('$slot')" >/dev/null
      done
    done
  done
}

PAYLOAD="left(repeat(md5(random()::text), 2) || ' order paid shipped customer berlin ' || repeat('note ', 40), 256)"
echo "INSERT INTO bench (payload) SELECT $PAYLOAD FROM generate_series(1, 100);" > "$T/a.sql"
echo "INSERT INTO bench (payload) VALUES ($PAYLOAD);" > "$T/b.sql"
echo "workload a: $EVENTS events in 100-row transactions" >&2
workload "a:100-row-txns" "$EVENTS" \
  "pgbench -n -c 2 -j 2 -t $((EVENTS / 200)) -f '$T/a.sql' >/dev/null"
echo "workload b: $SINGLE single-row transactions" >&2
workload "b:1-row-txns" "$SINGLE" \
  "pgbench -n -c 4 -j 2 -t $((SINGLE / 4)) -f '$T/b.sql' >/dev/null"

# End-to-end latency at a steady rate, with retention deleting segments.
# Commits are synchronous here: with synchronous_commit=off the walsender
# would see WAL only after wal_writer_delay, which is not what we measure.
# The reference is the floor PostgreSQL sets on this host: pg_recvlogical
# with test_decoding, commit -> its COMMIT line, at the same rate. Runs
# alternate between the two so that neither always gets the quieter minute.
unset PGOPTIONS
BENCH_LOG=${BENCH_LOG:-$(dirname "$BIN")/bench/cdc-bench-log}
# steady_load RATE: RATE events/s for LAT_SECONDS, in transactions of
# RATE/500 rows (1 to 100).
steady_load() {
  local rate=$1 rows
  rows=$((rate / 500)); [ "$rows" -lt 1 ] && rows=1; [ "$rows" -gt 100 ] && rows=100
  echo "INSERT INTO bench (payload) SELECT $PAYLOAD FROM generate_series(1, $rows);" > "$T/lat.sql"
  sleep 1
  pgbench -n -c 4 -j 2 -R $((rate / rows)) -T "$LAT_SECONDS" -f "$T/lat.sql" >/dev/null
  sleep 2
}
# latency_cdc OUT RATE: commit -> line on `cdc-tail -f` stdout
latency_cdc() {
  local out=$1 rate=$2 cap reader
  rm -rf "$T/log"
  psql_q -c "SELECT pg_create_logical_replication_slot('lat', 'pgoutput')" >/dev/null
  cdc-capture --log "$T/log" --dsn "$LAT_DSN" --slot lat --publication cdc -q \
    --segment-size 8M --retain-segments 4 &
  cap=$!
  for _ in $(seq 100); do [ -f "$T/log/log.json" ] && break; sleep 0.1; done
  ( cdc-tail --log "$T/log" -f --from latest | "$BENCH_LOG" --stdin-latency > "$out" ) 2>>"$T/latency.err" &
  reader=$!
  steady_load "$rate"
  pkill -f "cdc-tail --log $T/log -f" || true
  wait "$reader" 2>/dev/null || true
  cdc-log segments --log "$T/log" --json | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["first_seq"] > 1)' > "$out.segs"
  kill "$cap"; wait "$cap" || true
  psql_q -c "SELECT pg_drop_replication_slot('lat')" -c "TRUNCATE bench" >/dev/null
}
# latency_ref OUT RATE: commit -> COMMIT line on pg_recvlogical's stdout
latency_ref() {
  local out=$1 rate=$2 reader
  psql_q -c "SELECT pg_create_logical_replication_slot('ref', 'test_decoding')" >/dev/null
  ( "$RECV" -d "$LAT_DSN" --slot ref --start -o include-timestamp=1 -f - |
      "$BENCH_LOG" --stdin-latency > "$out" ) 2>>"$T/latency.err" &
  reader=$!
  steady_load "$rate"
  pkill -f "pg_recvlogical -d $LAT_DSN --slot ref" || true
  wait "$reader" 2>/dev/null || true
  psql_q -c "SELECT pg_drop_replication_slot('ref')" -c "TRUNCATE bench" >/dev/null
}
LAT_DSN=$UNIX_DSN; [ "$LAT_TRANSPORT" = tcp ] && LAT_DSN=$TCP_DSN
psql_q -c "TRUNCATE bench" >/dev/null
[ "$LAT_SECONDS" = 0 ] && LAT_RATES=""
for rate in ${LAT_RATES//,/ }; do
  echo "latency: $rate events/s for $LAT_SECONDS s, $LAT_RUNS run(s) each" >&2
  for run in $(seq "$LAT_RUNS"); do
    if [ $((run % 2)) = 1 ]; then order="cdc ref"; else order="ref cdc"; fi
    for who in $order; do
      "latency_$who" "$T/lat_${rate}_${who}_$run.json" "$rate"
      echo "  $who: $(head -c 200 "$T/lat_${rate}_${who}_$run.json")" >&2
    done
  done
done

python3 - "$T/results.tsv" "$T" "$JSON" "$LAT_RATES" "$LAT_SECONDS" "$LAT_RUNS" "$LAT_TRANSPORT" <<'PY'
import json, statistics, sys, os, collections
tsv, tmp, out_path, lat_rates, lat_seconds, lat_n, lat_transport = sys.argv[1:8]
rows = [l.rstrip("\n").split("\t") for l in open(tsv)]
rates, cpus = collections.defaultdict(list), collections.defaultdict(list)
for wl, kind, tr, ev, sec, cpu in rows:
    rates[(wl, tr, kind)].append(int(ev) / float(sec))
    cpus[(wl, tr, kind)].append(1e6 * float(cpu) / int(ev))  # µs per event
out = {"drain": [], "latency_by_rate": [], "latency_transport": lat_transport}
med = statistics.median
# ratio: of the medians. paired: the median of each run's ratio (a run
# drains both slots back to back, so the two share that moment's noise).
print(f"{'workload':16} {'transport':9} {'cdc-capture ev/s':>17} {'pg_recvlogical ev/s':>20} {'ratio':>6} {'paired':>6} {'target':>7}")
for (wl, tr) in sorted({(k[0], k[1]) for k in rates}):
    cr, rr = rates[(wl, tr, "cdc-capture")], rates[(wl, tr, "pg_recvlogical")]
    cc, rc = cpus[(wl, tr, "cdc-capture")], cpus[(wl, tr, "pg_recvlogical")]
    c, r = med(cr), med(rr)
    paired = med(a / b for a, b in zip(cr, rr))
    print(f"{wl:16} {tr:9} {c:17.0f} {r:20.0f} {c / r:6.2f} {paired:6.2f} {'>= 0.9':>7}")
    out["drain"].append({"workload": wl, "transport": tr, "cdc_capture_eps": c,
                         "pg_recvlogical_eps": r, "ratio": c / r,
                         "paired_ratio": paired, "cdc_capture_runs": cr,
                         "pg_recvlogical_runs": rr,
                         "cdc_capture_cpu_us_per_event": med(cc),
                         "pg_recvlogical_cpu_us_per_event": med(rc),
                         "cpu_ratio": med(cc) / med(rc),
                         "cpu_paired_ratio": med(a / b for a, b in zip(cc, rc)),
                         "cdc_capture_cpu_runs": cc, "pg_recvlogical_cpu_runs": rc})
print("\nCPU per event (user + system, µs), medians; lower is better:")
print(f"{'workload':16} {'transport':9} {'cdc-capture':>12} {'pg_recvlogical':>15} {'ratio':>6} {'paired':>6} {'target':>7}")
for d in out["drain"]:
    print(f"{d['workload']:16} {d['transport']:9} {d['cdc_capture_cpu_us_per_event']:12.2f} "
          f"{d['pg_recvlogical_cpu_us_per_event']:15.2f} {d['cpu_ratio']:6.2f} "
          f"{d['cpu_paired_ratio']:6.2f} {'<= 1.1':>7}")

def lat_runs(rate, who):
    return [json.load(open(f"{tmp}/lat_{rate}_{who}_{r}.json"))
            for r in range(1, int(lat_n) + 1)]
def lat_summary(runs):
    return {"events": sum(r["events"] for r in runs),
            "p50_ms": med(r["p50_ms"] for r in runs),
            "p99_ms": med(r["p99_ms"] for r in runs),
            "max_ms": max(r["max_ms"] for r in runs), "runs": runs}
if lat_rates:
  print(f"\ncommit -> reader latency over {lat_transport}, {lat_seconds} s per run, medians of {lat_n} run(s):")
  print(f"{'events/s':>9} {'rows/txn':>8} {'cdc p50':>8} {'cdc p99':>8} {'floor p50':>9} {'floor p99':>9} {'added p99':>9} {'target':>7}")
for rate in [int(x) for x in lat_rates.split(",") if x]:
    lat, ref = lat_summary(lat_runs(rate, "cdc")), lat_summary(lat_runs(rate, "ref"))
    removed = [open(f"{tmp}/lat_{rate}_cdc_{r}.json.segs").read().strip() == "True"
               for r in range(1, int(lat_n) + 1)]
    added = med(c["p99_ms"] - f["p99_ms"] for c, f in zip(lat["runs"], ref["runs"]))
    lat.update({"rate": rate, "rows_per_txn": max(1, min(100, rate // 500)),
                "seconds": int(lat_seconds),
                "retention_removed_segments": any(removed),
                "added_p99_ms": lat["p99_ms"] - ref["p99_ms"],
                "added_p99_ms_paired": added,
                "reference_pg_recvlogical_test_decoding": ref})
    out["latency_by_rate"].append(lat)
    print(f"{rate:9} {lat['rows_per_txn']:8} {lat['p50_ms']:8.1f} {lat['p99_ms']:8.1f} "
          f"{ref['p50_ms']:9.1f} {ref['p99_ms']:9.1f} {lat['p99_ms'] - ref['p99_ms']:9.1f} {'<= 2':>7}")
# "latency": the highest rate, as before (the chart of latency over time).
if out["latency_by_rate"]:
    out["latency"] = max(out["latency_by_rate"], key=lambda l: l["rate"])
    print(f"retention removed segments at {out['latency']['rate']} events/s: "
          f"{out['latency']['retention_removed_segments']}")
os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
json.dump(out, open(out_path, "w"), indent=2)
PY
