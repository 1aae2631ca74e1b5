#!/usr/bin/env bash
# Runs every benchmark the issues define, side by side with its peer or
# its limit, and writes the figures and charts the README quotes:
#   bench/report/*.json      each bench's figures (medians of its runs)
#   bench/report/throughput.png   each measure as a ratio to its peer or
#                                 limit, with the target
#   bench/report/latency.png      commit-to-reader latency, p50 and p99 per
#                                 second, cdc-capture beside pg_recvlogical
#   bench/report/growth.png       cost against size: followers, log size
#                                 (seeks), published tables
#
#   bench/run.sh [--bin build/tools] [--quick]
#
# --quick runs each bench small (a minute or two in all) to see that they
# work; the figures worth quoting come from a full run on a quiet machine
# (about 40 minutes on 2 cores, and 42 GB of disk for the 40 GB log of
# the seek bench). Needs the build (cmake --build build) and
# gnuplot (scripts/deps.sh installs gnuplot-nox).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=$ROOT/build/tools
QUICK=0
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$(cd "$2" && pwd); shift 2 ;;
    --quick) QUICK=1; shift ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
command -v gnuplot > /dev/null ||
  { echo "run.sh: gnuplot missing: apt-get install -y gnuplot-nox" >&2; exit 1; }
R=$ROOT/bench/report
mkdir -p "$R"
W=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-all.XXXXXX")
trap 'rm -rf "$W"' EXIT
step() { echo; echo "=== $*"; }
if [ "$QUICK" = 1 ]; then
  step log; "$BIN/../bench/cdc-bench-log" --bin "$BIN" --dir "$W" --events 100000 --runs 1 \
    --follow-seconds 2 --workload-events 50000 --workload-follow-seconds 1 --json "$R/log.json"
  step tail; "$BIN/../bench/cdc-bench-log" --tail-vs-cat --bin "$BIN" --dir "$W" \
    --events 100000 --runs 1 --json "$R/tail.json"
  step capture; bench/capture/run.sh --bin "$BIN" --events 100000 --single 20000 --runs 1 \
    --latency-seconds 5 --latency-runs 1 --json "$R/capture.json"
  step capture-mariadb; bench/capture/mariadb.sh --bin "$BIN" --events 100000 --single 20000 \
    --runs 1 --json "$R/capture_mariadb.json"
  step redis; bench/redis/run.sh --bin "$BIN" --events 50000 --runs 1 --json "$R/redis.json"
  step pg; bench/pg/run.sh --bin "$BIN" --events 50000 --runs 1 --json "$R/pg.json"
  step nats; bench/nats/run.sh --bin "$BIN" --events 20000 --runs 1 --json "$R/nats.json"
  step backup; bench/backup/run.sh --bin "$BIN" --mb 32 --runs 1 --json "$R/backup.json"
  step snapshot; bench/snapshot/run.sh --bin "$BIN" --rows 100000 --runs 1 --json "$R/snapshot.json"
  step consumers; "$BIN/../bench/cdc-bench-consumers" --bin "$BIN" --dir "$W" --consumers 1000 \
    --events 100000 --runs 1 --json "$R/consumers.json"
  step followers; "$BIN/../bench/cdc-bench-followers" --bin "$BIN" --dir "$W" \
    --followers 1,10 --seconds 2 --json "$R/followers.json"
  step seek; "$BIN/../bench/cdc-bench-seek" --bin "$BIN" --dir "$W" --gb 0.05,0.2 --runs 1 \
    --json "$R/seek.json"
  step tables; bench/tables/run.sh --bin "$BIN" --tables 10,100 --rows 10 --events 20000 \
    --json "$R/tables.json"
else
  step log; "$BIN/../bench/cdc-bench-log" --bin "$BIN" --dir "$W" --events 1000000 --runs 3 \
    --follow-seconds 5 --workload-events 300000 --workload-follow-seconds 5 --json "$R/log.json"
  step tail; "$BIN/../bench/cdc-bench-log" --tail-vs-cat --bin "$BIN" --dir "$W" \
    --events 1000000 --runs 7 --json "$R/tail.json"
  step capture; bench/capture/run.sh --bin "$BIN" --events 500000 --single 100000 --runs 3 \
    --latency-seconds 30 --latency-runs 1 --json "$R/capture.json"
  step capture-mariadb; bench/capture/mariadb.sh --bin "$BIN" --events 500000 --single 100000 \
    --runs 3 --json "$R/capture_mariadb.json"
  step redis; bench/redis/run.sh --bin "$BIN" --events 300000 --runs 3 --json "$R/redis.json"
  step pg; bench/pg/run.sh --bin "$BIN" --events 1000000 --runs 3 --json "$R/pg.json"
  step nats; bench/nats/run.sh --bin "$BIN" --events 100000 --runs 5 --json "$R/nats.json"
  step backup; bench/backup/run.sh --bin "$BIN" --mb 256 --runs 3 --json "$R/backup.json"
  step snapshot; bench/snapshot/run.sh --bin "$BIN" --rows 1000000 --runs 5 --json "$R/snapshot.json"
  step consumers; "$BIN/../bench/cdc-bench-consumers" --bin "$BIN" --dir "$W" --consumers 10000 \
    --events 1000000 --runs 5 --json "$R/consumers.json"
  step followers; "$BIN/../bench/cdc-bench-followers" --bin "$BIN" --dir "$W" \
    --followers 1,10,100,500 --seconds 5 --json "$R/followers.json"
  step seek; "$BIN/../bench/cdc-bench-seek" --bin "$BIN" --dir "$W" --gb 1,10,40 --runs 5 \
    --json "$R/seek.json"
  step tables; bench/tables/run.sh --bin "$BIN" --tables 10,1000,10000 --json "$R/tables.json"
fi
step charts
python3 bench/plot.py "$R"
python3 bench/plot_growth.py "$R"
echo "wrote $R"
