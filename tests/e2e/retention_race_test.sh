#!/usr/bin/env bash
# Retention deleting segments while cdc-tail reads them: every reader
# either prints every event in order (reading on through the descriptor it
# holds) or exits 10 (expired) with a clear message — never a silent prefix
# with status 0 — and a follower keeps following events written later.
# Also: a --retain-age that overflows is refused and deletes nothing.
source "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-8}

P="$T/pristine"
gen_events 1 800 5 | cdc-log import --log "$P" --segment-size 4k --commit-delay 0 -q
nseg=$(ls "$P/segments" | grep -c '\.seg$')
[ "$nseg" -ge 50 ] || fail "expected many segments, got $nseg"
gen_events 801 20 5 > "$T/more"   # seq 4001-4100

# Reads NDJSON events slowly (so retention overtakes the reader) and
# writes their seqs, one a line.
cat > "$T/slow.py" <<'PY'
import sys, time
slow = sys.argv[1] == "slow"
out = sys.stdout
for line in sys.stdin:
    out.write(line[7:line.index(",")] + "\n")
    out.flush()
    if slow:
        time.sleep(0.0003)
PY

retain_loop() {
  while :; do cdc-log retain --log "$L" --retain-segments 2 > /dev/null 2>&1 || true; done
}
stop_retain() { kill "$rp" 2>/dev/null || true; wait "$rp" 2>/dev/null || true; }

# check_seqs FILE LAST: the seqs in FILE are dense and, when LAST is given,
# end at it.
check_seqs() {
  python3 - "$@" <<'PY'
import sys
seqs = [int(l) for l in open(sys.argv[1])]
for a, b in zip(seqs, seqs[1:]):
    if b != a + 1:
        sys.exit("seq %d follows %d" % (b, a))
if len(sys.argv) > 2 and (not seqs or seqs[-1] != int(sys.argv[2])):
    sys.exit("ends at %s, not %s" % (seqs[-1] if seqs else "nothing", sys.argv[2]))
PY
}

whole=0 expired=0
for i in $(seq "$RUNS"); do
  rm -rf "$T/log"; cp -r "$P" "$T/log"; L="$T/log"
  retain_loop & rp=$!
  # Odd runs start while retention deletes, even ones a moment after.
  [ $((i % 2)) = 1 ] || sleep 0.2
  set +e
  cdc-tail --log "$L" 2> "$T/err" | python3 "$T/slow.py" slow > "$T/seqs"
  rc=${PIPESTATUS[0]}
  set -e
  stop_retain
  case $rc in
    0) check_seqs "$T/seqs" 4000 || fail "run $i: exit 0 but not every event: $(wc -l < "$T/seqs") printed"
       whole=$((whole + 1)) ;;
    10) check_seqs "$T/seqs" || fail "run $i: out of order before expiring"
        grep -qE '^cdc-tail: events from seq [0-9]+ were removed by retention while being read \(the earliest retained event is now seq [0-9]+\)$' "$T/err" ||
          fail "run $i: unclear expiry message: $(cat "$T/err")"
        expired=$((expired + 1)) ;;
    *) fail "run $i: cdc-tail exited $rc: $(cat "$T/err")" ;;
  esac
done
ok "cdc-tail under concurrent retention: $whole runs read everything, $expired exited 10; none stopped early with 0"

# Followers, slow and fast, racing retention; new events come later.
follow_run() {
  local speed=$1 delay=$2
  rm -rf "$T/log"; cp -r "$P" "$T/log"; L="$T/log"
  rm -f "$T/fifo"; mkfifo "$T/fifo"
  retain_loop & rp=$!
  sleep "$delay"
  python3 "$T/slow.py" "$speed" < "$T/fifo" > "$T/fseqs" & local sp=$!
  cdc-tail --log "$L" -f > "$T/fifo" 2> "$T/ferr" & tp=$!
  sleep 0.3
  cdc-log import --log "$L" --commit-delay 0 -q < "$T/more"
  local n=0
  while [ $n -lt 200 ] && kill -0 "$tp" 2>/dev/null && [ "$(tail -1 "$T/fseqs")" != 4100 ]; do
    sleep 0.1; n=$((n + 1))
  done
  stop_retain
  if kill -0 "$tp" 2>/dev/null; then
    check_seqs "$T/fseqs" 4100 || fail "follower ($speed) still running but stuck: $(tail -1 "$T/fseqs")"
    kill "$tp"; wait "$tp" || true; wait "$sp" || true
    followed=$((followed + 1))
  else
    rc=0; wait "$tp" || rc=$?
    wait "$sp" || true
    [ "$rc" = 10 ] || fail "follower ($speed) exited $rc: $(cat "$T/ferr")"
    grep -q 'removed by retention while being read' "$T/ferr" || fail "follower: $(cat "$T/ferr")"
    check_seqs "$T/fseqs" || fail "follower out of order before expiring"
    fexpired=$((fexpired + 1))
  fi
}
followed=0 fexpired=0
for i in $(seq "$RUNS"); do
  follow_run slow 0
  follow_run fast 0.$((i % 3))
done
[ "$followed" -gt 0 ] || fail "no follower kept following"
ok "cdc-tail -f under concurrent retention: $followed followed to the new events, $fexpired exited 10"

# A follower that has caught up keeps following while retention runs.
rm -rf "$T/log"; cp -r "$P" "$T/log"; L="$T/log"
rm -f "$T/fifo"; mkfifo "$T/fifo"
python3 "$T/slow.py" fast < "$T/fifo" > "$T/fseqs" & sp=$!
cdc-tail --log "$L" -f > "$T/fifo" 2> "$T/ferr" & tp=$!
for _ in $(seq 100); do [ "$(tail -1 "$T/fseqs")" = 4000 ] && break; sleep 0.1; done
retain_loop & rp=$!
sleep 0.3
cdc-log import --log "$L" --commit-delay 0 -q < "$T/more"
for _ in $(seq 100); do [ "$(tail -1 "$T/fseqs")" = 4100 ] && break; sleep 0.1; done
stop_retain
kill -0 "$tp" 2>/dev/null || fail "follower exited: $(cat "$T/ferr")"
kill "$tp"; wait "$tp" || true; wait "$sp" || true
check_seqs "$T/fseqs" 4100 || fail "caught-up follower did not see the new events"
[ "$(head -1 "$T/fseqs")" = 1 ] || fail "caught-up follower did not start at seq 1"
ok "a caught-up follower sees events written while retention runs"

# An age limit that overflows would make every segment "too old".
rm -rf "$T/log"; cp -r "$P" "$T/log"; L="$T/log"
for age in 10000000000000 9223372036855 106751992d 99999999999999999999w; do
  expect_exit 64 cdc-log retain --log "$L" --retain-age "$age"
  [ "$(head -1 "$T/err")" = "cdc-log: --retain-age: duration \"$age\" is too large" ] || fail "$(cat "$T/err")"
  expect_exit 64 cdc-capture --log "$T/cap" --dsn host=/nonexistent --retain-age "$age"
  [ "$(head -1 "$T/err")" = "cdc-capture: --retain-age: duration \"$age\" is too large" ] || fail "$(cat "$T/err")"
done
[ "$(ls "$L/segments" | grep -c '\.seg$')" = "$nseg" ] || fail "a refused --retain-age deleted segments"
[ ! -e "$T/cap" ] || fail "a refused --retain-age created a log"
ok "an overflowing --retain-age (cdc-log and capture) is refused with 64 and deletes nothing"
