#!/usr/bin/env bash
# A slow disk for real: the log lives on an ext4 file system on a loop
# device, and capture runs in a blkio cgroup that lets it write 4 I/Os a
# second there, so each fdatasync takes about half a second (no FUSE, no
# shim: the kernel's own throttle). While a workload commits:
#  - capture keeps going, more slowly (group commit: one fsync carries
#    many transactions), and never acknowledges past what is durable;
#  - its metrics show it: the fsync histogram counts fsyncs over 0.25 s,
#    and the lag in bytes grows;
# then the throttle is lifted, capture catches up, and every committed
# transaction is in the log once, in commit order, the tables replayed
# exactly. Throughput with and without the throttle is reported, not
# asserted.
#
# Needs root, a loop device and cgroup v1's blkio controller (or v2's io);
# says SKIP otherwise.
source "$(dirname "$0")/../integration/lib.sh"
source "$HERE/wl.sh"
skip() { echo "SKIP: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "a loop device and a cgroup need root"
command -v losetup > /dev/null && command -v mkfs.ext4 > /dev/null || skip "no losetup or mkfs.ext4"
truncate -s 512M "$T/disk.img"
DEV=$(losetup -f --show "$T/disk.img" 2>/dev/null) || skip "no loop device"
CAP= CG=
# In this order: capture out of the cgroup and off the file system first.
cleanup_slow() {
  [ -n "$CAP" ] && kill -9 "$CAP" 2>/dev/null && sleep 0.2
  umount -l "$T/log" 2>/dev/null
  losetup -d "$DEV"
  [ -n "$CG" ] && rmdir "$CG"
}
at_exit cleanup_slow
mkfs.ext4 -q "$DEV"
mkdir "$T/log"
mount "$DEV" "$T/log"
rmdir "$T/log/lost+found"
MM=$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ')
# throttle IOPS: capture's cgroup may write IOPS I/Os a second to the
# device (0: no limit).
if [ -d /sys/fs/cgroup/blkio ]; then
  CG=/sys/fs/cgroup/blkio/cdcslow$$
  mkdir "$CG"
  throttle() { echo "$MM $1" > "$CG/blkio.throttle.write_iops_device"; }
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw io /sys/fs/cgroup/cgroup.controllers; then
  CG=/sys/fs/cgroup/cdcslow$$
  echo +io > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  mkdir "$CG"
  throttle() { if [ "$1" = 0 ]; then echo "$MM wiops=max" > "$CG/io.max"; else echo "$MM wiops=$1" > "$CG/io.max"; fi; }
else
  skip "no blkio or io cgroup controller"
fi
pg_start "$T"
wl_schema
PROM=$T/cdc.prom
cap_slow() {
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
    cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --table a,b,c \
    --metrics-file "$PROM" --metrics-interval 0.2 --min-free-disk 0 2>>"$T/capture.err" &
  CAP=$!
}
cap_slow
for _ in $(seq 600); do
  grep -q "streaming from slot" "$T/capture.err" 2>/dev/null && break
  sleep 0.1
done
grep -q "streaming from slot" "$T/capture.err" || fail "capture did not start: $(cat "$T/capture.err")"
N=${TXNS:-1500}
# run_batch FIRST: N workload transactions; prints how long until the log
# holds them all (seconds).
run_batch() {
  local t0
  t0=$(date +%s.%N)
  python3 "$HERE/workload.py" "$1" "$N" "$1" | psql -X -q > /dev/null 2>&1
  wait_marker "batch-$1"
  python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)"
}
fast=$(run_batch 1)
slow_fsyncs() {  # fsyncs slower than 0.25 s so far
  python3 - "$PROM" <<'PY'
import re, sys
b, n = 0, 0
for l in open(sys.argv[1]):
    m = re.match(r'cdc_capture_fsync_seconds_bucket\{.*le="0\.25".*\} (\S+)', l)
    if m: b = float(m.group(1))
    m = re.match(r'cdc_capture_fsync_seconds_count(\{.*\})? (\S+)', l)
    if m: n = float(m.group(2))
print(int(n - b))
PY
}
before=$(slow_fsyncs)
throttle 4
# Lag while throttled: the highest cdc_capture_lag_bytes seen.
(
  while :; do metric cdc_capture_lag_bytes "$PROM" 2>/dev/null || true; sleep 0.2; done
) > "$T/lag" &
lagger=$!
at_exit "kill $lagger 2>/dev/null"
slow=$(run_batch 100001)
kill "$lagger"
kill -0 "$CAP" 2>/dev/null || fail "capture died on a slow disk: $(tail -3 "$T/capture.err")"
check_acked "on a slow disk"
after=$(slow_fsyncs)
[ "$after" -gt "$before" ] || fail "no fsync over 0.25 s in the metrics ($before, then $after): is the throttle working?"
maxlag=$(sort -n "$T/lag" | tail -1)
[ "${maxlag%.*}" -gt 0 ] 2>/dev/null || fail "the lag never rose while the disk was slow: $(sort -n "$T/lag" | tail -3 | tr '\n' ' ')"
grep -qi "error" "$T/capture.err" && fail "capture reported an error: $(grep -i error "$T/capture.err" | head -2)"
# (How much longer the throttled batch took is reported, not asserted:
# group commit carries it in a few fsyncs, so its time is mostly the
# workload's own and moves with the machine's speed. The slow fsyncs
# counted above are what shows the throttle worked.)
ok "fsync at 4 writes/s: $N transactions in $slow s (unthrottled $fast s), $((after - before)) fsyncs over 0.25 s, lag up to $maxlag bytes, nothing acknowledged past the log"
throttle 0
run_batch 200001 > /dev/null
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(tail -3 "$T/capture.err")"
wl_check
ok "the throttle lifted: every committed transaction once, in order, tables reproduced"
