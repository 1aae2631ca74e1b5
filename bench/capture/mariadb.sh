#!/usr/bin/env bash
# bench/capture/mariadb.sh: cdc-capture reading a MariaDB binlog against
# mariadb-binlog --read-from-remote-server reading the same binlog to
# /dev/null (the limit: the server's dump thread and the client protocol),
# side by side in one run.
#
#   bench/capture/mariadb.sh [--bin build/tools] [--events 1000000]
#       [--single 100000] [--runs 5] [--json bench/results/capture_mariadb.json]
#
# A throwaway server (scripts/mariadb.sh) gets a log bound to it first, then
# the workload: --events rows in 100-row transactions (INSERT ... SELECT from
# MariaDB's sequence engine; a 120-byte payload per row), and --single rows
# in 1-row transactions. For each workload, each reader drains the same
# binlog --runs times, alternating: cdc-capture --exit-when-idle into a
# fresh copy of the bound log (durably, group commit), and mariadb-binlog
# over TCP to /dev/null. Wall time and CPU (user + system, /usr/bin/time)
# of each; the table shows medians and the ratio of rates.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
EVENTS=1000000
SINGLE=100000
RUNS=5
JSON=$ROOT/bench/results/capture_mariadb.json
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --single) SINGLE=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "usage: $0 [--bin DIR] [--events N] [--single N] [--runs N] [--json FILE]" >&2; exit 64 ;;
  esac
done
source "$ROOT/scripts/mariadb.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-maria.XXXXXX")
trap 'maria_stop; rm -rf "$W"' EXIT

# measure OUT CMD...: wall, user and system seconds of CMD into OUT.
measure() {
  local out=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$out" "$@" > /dev/null
}

run_workload() {  # run_workload NAME ROWS PER_TXN
  local name=$1 rows=$2 per=$3
  maria_start "$W/$name"
  maria_root -e "CREATE TABLE shop.t (id BIGINT PRIMARY KEY, n INT,
    payload VARCHAR(200)) ENGINE=InnoDB"
  "$BIN/cdc-capture" --log "$W/$name.bound" --dsn "$MARIA_DSN" -q \
    --exit-when-idle 2>/dev/null
  python3 - "$rows" "$per" > "$W/$name.sql" <<'PY'
import sys
rows, per = int(sys.argv[1]), int(sys.argv[2])
if per == 1:
    for i in range(rows):
        print("INSERT INTO shop.t VALUES (%d, %d, REPEAT('x', 120));" % (i, i))
else:
    for b in range(rows // per):
        print("INSERT INTO shop.t SELECT %d + seq, seq, REPEAT('x', 120) "
              "FROM seq_0_to_%d;" % (b * per, per - 1))
PY
  # Loading fast: the readers measured read the binlog afterwards.
  maria_root -e "SET GLOBAL innodb_flush_log_at_trx_commit = 0; SET GLOBAL sync_binlog = 0"
  maria_root shop < "$W/$name.sql"
  local files
  files=$(maria_root -N -e "SHOW BINARY LOGS" | cut -f1 | tr '\n' ' ')
  local i
  for i in $(seq 1 "$RUNS"); do
    rm -rf "$W/$name.log"
    cp -a "$W/$name.bound" "$W/$name.log"
    measure "$W/$name.cap.$i" "$BIN/cdc-capture" --log "$W/$name.log" \
      --dsn "$MARIA_DSN" -q --exit-when-idle
    # shellcheck disable=SC2086
    measure "$W/$name.peer.$i" mariadb-binlog --no-defaults \
      --read-from-remote-server -h127.0.0.1 -P"$MARIA_PORT" -ucdc \
      -p"$MARIA_PASSWORD" $files
  done
  local got
  got=$("$BIN/cdc-log" info --log "$W/$name.log" | awk '$1 == "events:" {print $2}')
  [ "$got" -ge "$rows" ] || { echo "capture wrote $got events, not $rows" >&2; exit 1; }
  maria_shutdown "$W/$name" kill
}

run_workload txn100 "$EVENTS" 100
run_workload txn1 "$SINGLE" 1

python3 - "$W" "$EVENTS" "$SINGLE" "$RUNS" "$JSON" <<'PY'
import json, statistics, sys
w, events, single, runs, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
res = {}
print("%-8s %-22s %10s %12s %14s" % ("txn", "reader", "wall s", "events/s", "CPU us/event"))
for name, rows in (("txn100", events), ("txn1", single)):
    res[name] = {}
    for who, label in (("cap", "cdc-capture"), ("peer", "mariadb-binlog")):
        walls, cpus = [], []
        for i in range(1, runs + 1):
            e, u, s = map(float, open("%s/%s.%s.%d" % (w, name, who, i)).read().split()[-3:])
            walls.append(e)
            cpus.append(u + s)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        res[name][label] = {"rows": rows, "wall_s": wall, "events_per_s": rows / wall,
                            "cpu_us_per_event": cpu / rows * 1e6, "walls": walls, "cpus": cpus}
        print("%-8s %-22s %10.2f %12.0f %14.2f" % (name, label, wall, rows / wall, cpu / rows * 1e6))
    r = res[name]["cdc-capture"]["events_per_s"] / res[name]["mariadb-binlog"]["events_per_s"]
    res[name]["rate_ratio"] = r
    print("%-8s capture/mariadb-binlog rate: %.2fx" % (name, r))
json.dump(res, open(out, "w"), indent=2)
print("wrote", out)
PY
