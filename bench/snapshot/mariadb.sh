#!/usr/bin/env bash
# bench/snapshot/mariadb.sh: cdc-capture's initial snapshot of a MariaDB
# table against the mariadb client reading the same table
# (`mariadb -e "SELECT * FROM t" > /dev/null`, the limit: the server's scan
# and the client protocol, nothing done to the rows) in the same run, over
# the same TCP connection settings; and the client with --quick, which
# prints each row as it arrives instead of buffering the result first
# (the stricter limit).
#
#   bench/snapshot/mariadb.sh [--bin build/tools] [--rows 1000000] [--runs 5]
#       [--json bench/results/snapshot_mariadb.json]
#
# The table holds ROWS rows of a BIGINT key and a 256-byte VARCHAR payload
# (the PostgreSQL bench's). Each cdc-capture run copies it durably into a
# fresh log and exits once idle (--exit-when-idle); peak RSS from
# /usr/bin/time. Runs alternate who goes first; medians are compared.
# Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/snapshot_mariadb.json
ROWS=1000000
RUNS=5
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "usage: $0 [--bin DIR] [--rows N] [--runs N] [--json FILE]" >&2; exit 64 ;;
  esac
done
source "$ROOT/scripts/mariadb.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-maria.XXXXXX")
trap 'maria_stop; rm -rf "$T"' EXIT
maria_start "$T/m" >/dev/null
maria_root shop -e "SET GLOBAL innodb_flush_log_at_trx_commit = 0;
  CREATE TABLE t (id BIGINT PRIMARY KEY, payload VARCHAR(256)) ENGINE=InnoDB;
  INSERT INTO t SELECT seq, LEFT(CONCAT(REPEAT(MD5(seq), 2),
    ' order paid shipped customer berlin ', REPEAT('note ', 40)), 256)
    FROM seq_1_to_$ROWS;
  ANALYZE TABLE t" >/dev/null
: > "$T/results.tsv"
now_s() { date +%s.%N; }

run_client() {  # run_client LABEL [--quick]
  local label=$1 t0 t1
  shift
  t0=$(now_s)
  mariadb --no-defaults -h127.0.0.1 -P"$MARIA_PORT" -ucdc "$@" shop \
    -e "SELECT * FROM t" > /dev/null
  t1=$(now_s)
  printf '%s\t%s\t0\n' "$label" "$(python3 -c "print($t1 - $t0)")" >> "$T/results.tsv"
}
run_clients() {
  run_client "mariadb SELECT"
  run_client "mariadb --quick" --quick
}

run_capture() {
  local t0 t1 got
  rm -rf "$T/log"
  t0=$(now_s)
  /usr/bin/time -f %M -o "$T/rss" "$BIN/cdc-capture" --log "$T/log" \
    --dsn "$MARIA_DSN" --table shop.t --exit-when-idle -q
  t1=$(now_s)
  got=$("$BIN/cdc-tail" --log "$T/log" --op r | wc -l)
  [ "$got" = "$ROWS" ] || { echo "cdc-capture wrote $got of $ROWS rows" >&2; exit 1; }
  printf 'cdc-capture\t%s\t%s\n' "$(python3 -c "print($t1 - $t0)")" "$(cat "$T/rss")" >> "$T/results.tsv"
}

for run in $(seq "$RUNS"); do
  if [ $((run % 2)) = 1 ]; then run_clients; run_capture; else run_capture; run_clients; fi
  echo "  run $run done" >&2
done

mkdir -p "$(dirname "$JSON")"
python3 - "$T/results.tsv" "$ROWS" "$JSON" <<'PY'
import json, os, platform, statistics, sys
rows = int(sys.argv[2])
res = {}
for line in open(sys.argv[1]):
    who, secs, rss = line.rstrip("\n").split("\t")
    res.setdefault(who, []).append((float(secs), int(rss)))
mid = {w: statistics.median(s for s, _ in r) for w, r in res.items()}
rate = {w: rows / s for w, s in mid.items()}
ratio = rate["cdc-capture"] / rate["mariadb SELECT"]
ratio_quick = rate["cdc-capture"] / rate["mariadb --quick"]
print(f"{'':15} {'rows/s (median)':>16} {'seconds':>9} {'peak RSS':>10}")
for w in ("mariadb SELECT", "mariadb --quick", "cdc-capture"):
    rss = max(r for _, r in res[w])
    print(f"{w:15} {rate[w]:16,.0f} {mid[w]:9.2f} {(str(rss // 1024) + ' MiB') if rss else '-':>10}")
print(f"cdc-capture / mariadb SELECT: {ratio:.2f} (target >= 0.70)")
print(f"cdc-capture / mariadb --quick: {ratio_quick:.2f}")
out = {"bench": "snapshot_mariadb", "rows": rows, "payload_bytes": 256,
       "host": {"cpus": os.cpu_count(), "machine": platform.machine()},
       "runs": {w: [{"seconds": s, "peak_rss_kib": r} for s, r in v] for w, v in res.items()},
       "rows_per_second": rate, "ratio": ratio, "ratio_quick": ratio_quick,
       "capture_peak_rss_kib": max(r for _, r in res["cdc-capture"])}
json.dump(out, open(sys.argv[3], "w"), indent=2)
print("wrote", sys.argv[3])
PY
