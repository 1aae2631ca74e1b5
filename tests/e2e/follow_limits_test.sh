#!/usr/bin/env bash
# A follower past the inotify limit (fs.inotify.max_user_instances, 128 by
# default: many cdc-tail -f of one user) says so and still follows, by
# re-reading the log every half second.
source "$(dirname "$0")/lib.sh"
L="$T/log"
gen_events 1 3 2 | cdc-log import --log "$L" -q

# Hold every inotify instance this user may have, in a helper that waits.
python3 - "$T/held" <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
while True:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    fds.append(fd)
open(sys.argv[1], "w").write("%d %d\n" % (len(fds), ctypes.get_errno()))
time.sleep(60)
PY
HOLD=$!
at_exit "kill $HOLD 2>/dev/null || true"
for _ in $(seq 100); do [ -s "$T/held" ] && break; sleep 0.05; done
read -r held err < "$T/held"
[ "$err" = 24 ] || fail "the helper stopped at errno $err, not EMFILE, after $held instances"

# A follower still gets the events written after it started.
cdc-tail --log "$L" -f > "$T/out" 2> "$T/err" & TAIL=$!
at_exit "kill $TAIL 2>/dev/null || true"
sleep 0.3
gen_events 4 1 2 | cdc-log import --log "$L" -q
for _ in $(seq 40); do [ "$(grep -c '' "$T/out")" = 8 ] && break; sleep 0.1; done
[ "$(grep -c '' "$T/out")" = 8 ] || fail "the follower printed $(grep -c '' "$T/out") of 8 events"
grep -q "^cdc-tail: warning: cannot watch .*segments (inotify: Too many open files; the limit is the sysctl fs.inotify.max_user_instances): looking for new events every 0.5 s instead$" "$T/err" ||
  fail "no warning naming the limit: $(cat "$T/err")"
kill "$TAIL"; wait "$TAIL" || true
ok "past fs.inotify.max_user_instances ($held held): a warning naming it, and events still followed"
