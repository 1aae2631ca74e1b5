#!/usr/bin/env bash
# A disk that really fills: the log lives on a small tmpfs of its own while
# a workload commits, capture writes it and cdc-redis follows it (Redis and
# PostgreSQL live elsewhere). A file fills what is left of the tmpfs:
#  - with the free-disk floor off (--min-free-disk 0) capture stops with
#    exit 74 and one line naming the full disk; the slot is acknowledged no
#    further than the log reaches; the log verifies; a second start on the
#    full disk fails the same way and leaves the log whole;
#  - with a floor (--min-free-disk, 256M by default) capture instead pauses
#    reading before the disk is full, says so, shows it in its metrics,
#    acknowledges nothing new, and goes on by itself once space is freed;
#  - cdc-redis, which writes only its cursor there, is never left wrong;
#  - at the end every committed transaction is in the log once, in commit
#    order, replaying it reproduces the tables, and the mirror equals the
#    log.
#
# The LD_PRELOAD shim of tests/integration/capture_disk_fault_test.sh
# injects ENOSPC and EIO at chosen calls without root; this one needs root
# (mount) and says SKIP otherwise.
source "$(dirname "$0")/../integration/lib.sh"
source "$HERE/wl.sh"
source "$HERE/../../scripts/redis.sh"
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: a tmpfs of its own needs root (mount)"
  exit 0
fi
MODEL="$HERE/../e2e/redis_model.py"
D=$T/small
mkdir -p "$D"
mount -t tmpfs -o size=48m,mode=0755 cdc-full "$D"
at_exit "umount -l $D"
pg_start "$T"
wl_schema
redis_start "$T"
at_exit redis_stop
# The log is a directory of the tmpfs, bound where the integration
# library's helpers look ($T/log); the filler goes beside it.
mkdir "$D/log" "$T/log"
mount --bind "$D/log" "$T/log"
at_exit "umount -l $T/log"
L=$T/log

capture_on() {  # capture_on FLOOR
  cdc-capture --log "$L" --dsn "$CDC_TEST_DSN" --table a,b,c --commit-delay 2 \
    --min-free-disk "$1" --metrics-file "$T/cdc.prom" --metrics-interval 0.2 2>>"$T/capture.err" &
  CAP=$!
}
redis_on() {
  cdc-redis --log "$L" -c redis --redis "$REDIS_URL" --mode hash --prefix h: \
    --reconnect-max 10m -f 2>>"$T/redis.err" &
  RS=$!
}
capture_on 0
at_exit "kill -9 \$CAP \$RS 2>/dev/null"
wait_more() {  # wait_more PATTERN FILE SECS
  for _ in $(seq $(($3 * 10))); do
    grep -q -- "$1" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
wait_more "streaming from slot" "$T/capture.err" 60 || fail "capture did not start: $(cat "$T/capture.err")"
redis_on
# A workload with fat notes, so the disk fills in seconds.
python3 "$HERE/workload.py" 1 "${TXNS:-20000}" 5 | sed "s/'n\([0-9]*\)'/'n\1-$(printf 'x%.0s' $(seq 400))'/" > "$T/work.sql"
psql -X -q -f "$T/work.sql" > /dev/null 2>&1 &
work=$!
at_exit "kill $work 2>/dev/null"
sleep 2
kill -0 "$CAP" || fail "capture died early: $(cat "$T/capture.err")"

# fill LEAVE: a file takes all but LEAVE bytes of the tmpfs (0: all).
fill() {
  if [ "$1" = 0 ]; then
    dd if=/dev/zero of="$D/filler" bs=64k status=none 2>/dev/null || true
    [ "$(df --output=avail -B1 "$D" | tail -1)" -lt 65536 ] || fail "cannot fill the tmpfs"
  else
    fallocate -l "$(($(df --output=avail -B1 "$D" | tail -1) - $1))" "$D/filler" ||
      fail "cannot fill the tmpfs"
  fi
}
# Capture must stop with 74, whatever it was writing (a segment, its
# schema history, a preallocation).
fill 0
rc=0
for _ in $(seq 600); do
  kill -0 "$CAP" 2>/dev/null || break
  psql_q -c "SELECT pg_logical_emit_message(false, 'fill', 'x')" > /dev/null 2>&1 || true
  sleep 0.1
done
kill -0 "$CAP" 2>/dev/null && fail "capture still runs on a full disk"
wait "$CAP" || rc=$?
[ "$rc" = 74 ] || fail "a full disk: capture exited $rc, not 74: $(tail -3 "$T/capture.err")"
line=$(tail -1 "$T/capture.err")
case $line in
  *"No space left on device"*) ;;
  *) fail "a full disk: the last line does not say so: $line" ;;
esac
check_acked "on a full disk"
cdc-log verify --log "$L" -q || fail "the log does not verify on a full disk"
ok "a full tmpfs: capture exits 74 ($line), the slot no further than the log, the log verifies"

# The sink: it may have stopped (74) or still run; either way it must not
# have moved its cursor past what it applied.
sleep 2
if kill -0 "$RS" 2>/dev/null; then
  sink="still running"
else
  src=0; wait "$RS" || src=$?
  sink="exited $src"
  [ "$src" = 74 ] || fail "cdc-redis on a full disk exited $src: $(tail -2 "$T/redis.err")"
fi

# A second start while the disk is still full: 74, never a half-made log.
src=0
cdc-capture --log "$L" --dsn "$CDC_TEST_DSN" --table a,b,c -q --exit-when-idle --min-free-disk 0 2>"$T/again.err" || src=$?
[ "$src" = 74 ] || [ "$src" = 0 ] || fail "a start on a full disk exited $src: $(cat "$T/again.err")"
cdc-log verify --log "$L" -q || fail "the log does not verify after a start on a full disk"
check_acked "after a start on a full disk"

# Space comes back; capture with a floor of 16 MiB. Filled to 4 MiB
# short of the end it pauses, stays up and acknowledges nothing new; freed,
# it goes on.
rm -f "$D/filler" "$T/cdc.prom"
capture_on 16M
kill -0 "$RS" 2>/dev/null || redis_on
paused() { [ "$(metric cdc_capture_paused "$T/cdc.prom" 2>/dev/null)" = "$1" ]; }
for _ in $(seq 100); do
  paused 0 && break
  sleep 0.1
done
paused 0 || fail "capture did not start again: $(tail -3 "$T/capture.err")"
kill -0 "$work" 2>/dev/null || fail "the workload ended before the second fill (make TXNS larger)"
fill $((4 << 20))
wait_more "below the floor; pausing" "$T/capture.err" 10 || fail "capture did not pause: $(tail -3 "$T/capture.err")"
for _ in $(seq 50); do
  paused 1 && break
  sleep 0.1
done
paused 1 || fail "the paused metric is not 1"
sleep 1.5  # past the acknowledgement interval
ceiling=$(log_flush)
sleep 3
kill -0 "$CAP" 2>/dev/null || fail "capture exited while paused: $(tail -3 "$T/capture.err")"
[ "$(log_flush)" = "$ceiling" ] || fail "the log grew while paused: $ceiling, then $(log_flush)"
check_acked "while paused"
rm -f "$D/filler"
wait_more "above the floor again; resuming" "$T/capture.err" 10 || fail "capture did not resume: $(tail -3 "$T/capture.err")"
ok "with a 16 MiB floor, 4 MiB left: capture pauses (metric and warning), the log stays at $ceiling, nothing acknowledged past it; freed, it resumes"
wait "$work" || true
wait_marker done
kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(tail -3 "$T/capture.err")"
wl_check
end=$(cdc-log info --log "$L" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['last_seq'])")
for _ in $(seq 600); do
  [ "$(rcli get h:__cdc_applied:redis)" = "$end" ] && break
  sleep 0.1
done
kill -TERM "$RS"; wait "$RS" || fail "cdc-redis: $(tail -3 "$T/redis.err")"
cdc-tail --log "$L" --schema-changes > "$T/events"
python3 "$MODEL" check hash "$REDIS_SOCK" h: redis < "$T/events" > "$T/redis.check" ||
  fail "the mirror differs from the log: $(cat "$T/redis.check")"
ok "space freed: capture and cdc-redis (on the full disk: $sink) go on; every committed transaction once, in order, tables reproduced, the mirror equals the log"
