#!/usr/bin/env bash
# bench/backup: cdc-backup create MB/s against `cp -r` of the same log, and
# cdc-backup verify MB/s against `sha256sum` of the same files, in one run.
#
#   bench/backup/run.sh [--bin build/tools] [--json bench/results/backup.json]
#                       [--mb 256] [--runs 3]
#
# The log (cdc-log import, 64 MiB segments, about --mb MiB on disk) is read
# once first so every measure starts from the page cache. create writes a
# directory backup (every file and directory fsynced before the manifest,
# as cp does not) beside the log; cp -r copies the log directory to the
# same file system, and "cp -r + sync" also fsyncs each file and directory
# of the copy (sync FILE...), the durability create gives. Each is
# compared with its like: create against "cp -r + sync", and create
# --no-sync (no fsync, as pg_basebackup --no-sync) against cp -r. verify
# recomputes every SHA-256 of that backup; sha256sum hashes the backup's
# files. The median of --runs is reported. Targets: create >= 0.8x cp,
# verify >= 0.9x sha256sum. Prints a table; writes JSON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/tools
JSON=$ROOT/bench/results/backup.json
MB=256
RUNS=3
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --mb) MB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
export PATH="$BIN:$PATH"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-backup.XXXXXX")
trap 'rm -rf "$T"' EXIT

# Incompressible-ish rows (random hex) so the log is about MB MiB on disk.
python3 - "$MB" <<'PY' | cdc-log import --log "$T/log" --commit-delay 0 -q
import json, os, sys
target = int(sys.argv[1]) << 20
out, size, t = sys.stdout, 0, 0
while size < target:
    t += 1
    for i in range(10):
        ev = {"lsn": "%X/%X" % (t >> 24, (t & 0xFFFFFF) << 8), "xid": t,
              "ts": "2026-12-01T07:00:00.000000Z", "op": "c", "schema": "public",
              "table": "blobs", "key": {"id": i}, "before": None,
              "after": {"id": i, "data": os.urandom(384).hex()}}
        line = json.dumps(ev, separators=(",", ":"))
        size += len(line) // 2
        out.write(line + "\n")
PY
bytes=$(du -sb "$T/log" | cut -f1)
cat "$T/log"/segments/* > /dev/null

now() { date +%s.%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
measure() {  # measure NAME CMD... → seconds for each run, one a line
  local i s e; shift
  for i in $(seq "$RUNS"); do
    rm -rf "$T/out"
    s=$(now); "$@" > /dev/null; e=$(now)
    echo "$e - $s" | bc -l
  done
}
create_s=$(measure create cdc-backup create --log "$T/log" --out "$T/out" -q | median)
create_ns=$(measure create_ns cdc-backup create --log "$T/log" --out "$T/out" -q --no-sync | median)
cp_s=$(measure cp cp -r "$T/log" "$T/out" | median)
cp_sync() { cp -r "$1" "$2" && find "$2" -print0 | xargs -0 sync; }
cps_s=$(measure cp_sync cp_sync "$T/log" "$T/out" | median)
cdc-backup create --log "$T/log" --out "$T/b" -q
verify_s=$(for i in $(seq "$RUNS"); do s=$(now); cdc-backup verify "$T/b" -q; e=$(now); echo "$e - $s" | bc -l; done | median)
sha_s=$(for i in $(seq "$RUNS"); do s=$(now); (cd "$T/b" && find . -type f -print0 | xargs -0 sha256sum > /dev/null); e=$(now); echo "$e - $s" | bc -l; done | median)

mbps() { echo "$bytes / 1048576 / $1" | bc -l; }
c=$(mbps "$create_s") cn=$(mbps "$create_ns") p=$(mbps "$cp_s") ps=$(mbps "$cps_s")
v=$(mbps "$verify_s") h=$(mbps "$sha_s")
rcn=$(echo "$cn / $p" | bc -l) rcs=$(echo "$c / $ps" | bc -l) rv=$(echo "$v / $h" | bc -l)
printf '%-32s %10s %8s\n' measure "MB/s" ratio
printf '%-32s %10.0f %8.2f  (against cp -r + sync; target >= 0.80)\n' "cdc-backup create" "$c" "$rcs"
printf '%-32s %10.0f %8.2f  (against cp -r; target >= 0.80)\n' "cdc-backup create --no-sync" "$cn" "$rcn"
printf '%-32s %10.0f\n' "cp -r" "$p"
printf '%-32s %10.0f\n' "cp -r + sync" "$ps"
printf '%-32s %10.0f %8.2f  (target >= 0.90)\n' "cdc-backup verify" "$v" "$rv"
printf '%-32s %10.0f\n' "sha256sum" "$h"
printf 'log: %d MiB, median of %d runs\n' $((bytes >> 20)) "$RUNS"
mkdir -p "$(dirname "$JSON")"
cat > "$JSON" <<J
{"bench":"backup","log_bytes":$bytes,"runs":$RUNS,
 "create_mb_s":$(printf %.1f "$c"),"create_no_sync_mb_s":$(printf %.1f "$cn"),
 "cp_mb_s":$(printf %.1f "$p"),"create_no_sync_cp_ratio":$(printf %.3f "$rcn"),
 "cp_sync_mb_s":$(printf %.1f "$ps"),"create_cp_sync_ratio":$(printf %.3f "$rcs"),
 "verify_mb_s":$(printf %.1f "$v"),"sha256sum_mb_s":$(printf %.1f "$h"),"verify_ratio":$(printf %.3f "$rv")}
J
echo "wrote $JSON"
