#!/usr/bin/env bash
# cdc-run, the way cdc-run(1) and the README use it: every event reaches
# the handler, an ack never passes a failed run (retried, then 75 or the
# dead-letter file), a kill -9 repeats at most the batch in flight, a
# SIGTERM lets the run finish, and bad use is refused with one line.
source "$(dirname "$0")/lib.sh"
L="$T/log"
gen_events 1 200 3 | cdc-log import --log "$L" -q   # seqs 1-600
acked() { cdc-log consumers --log "$L" --json | python3 -c "
import json, sys
for l in sys.stdin:
    c = json.loads(l)
    if c['name'] == sys.argv[1]: print(c['acked_seq'])" "$1"; }
# The handler: appends its events to OUT; fails once when told to.
cat > "$T/handler" <<'SH'
#!/bin/sh
if [ -n "$FAIL_AT" ] && [ "$CDC_SEQ_FIRST" -le "$FAIL_AT" ] && [ "$CDC_SEQ_LAST" -ge "$FAIL_AT" ]; then
  [ "$FAIL_ALWAYS" = 1 ] && exit 4
  [ "$CDC_ATTEMPT" = 1 ] && exit 3
fi
[ -n "$SLOW" ] && sleep "$SLOW"
cat >> "$OUT"
SH
chmod +x "$T/handler"
seqs() { python3 -c "
import json, sys
print('\n'.join(str(json.loads(l)['seq']) for l in open(sys.argv[1])))" "$1"; }

# Every event once, in order; a failed run is run again; acked at the end.
OUT="$T/a.out" FAIL_AT=100 cdc-run --log "$L" -c a --batch 10 -- "$T/handler" 2> "$T/a.err" ||
  fail "cdc-run exited $?: $(cat "$T/a.err")"
[ "$(seqs "$T/a.out")" = "$(seq 1 600)" ] || fail "events not delivered once each, in order"
grep -qE "warning: command $T/handler exited with status 3 on seqs (9[0-9]|100)-1[0-9][0-9]; retrying in 100 ms" "$T/a.err" ||
  fail "no retry warning: $(cat "$T/a.err")"
[ "$(acked a)" = 600 ] || fail "acked $(acked a), not 600"
ok "every event once and in order; the failed run ran again; acked 600"

# Failing for good: 75 after --max-retries, nothing acked from the batch on.
expect_exit 75 env OUT="$T/b.out" FAIL_AT=300 FAIL_ALWAYS=1 cdc-run --log "$L" -c b --max-retries 2 -q -- "$T/handler"
# -q leaves out information, not the warnings of each retry.
[ "$(grep -c 'warning: .*retrying in' "$T/err")" = 2 ] || fail "retry warnings: $(cat "$T/err")"
tail -1 "$T/err" | grep -qE "exited with status 4 on seqs 298-300 \\(3 runs\\); stopped: nothing from seq 298 on is acknowledged" ||
  fail "$(cat "$T/err")"
[ "$(acked b)" = 297 ] || fail "acked $(acked b), not 297"
[ "$(seqs "$T/b.out")" = "$(seq 1 297)" ] || fail "b: delivered beyond the failure"
# Fixed, it goes on from 298, nothing twice.
OUT="$T/b.out" cdc-run --log "$L" -c b -- "$T/handler" || fail "b: rerun"
[ "$(seqs "$T/b.out")" = "$(seq 1 600)" ] || fail "b: not every event once after the fix"
ok "a run failing for good: 75, acked 297; fixed, it goes on from 298"

# --dead-letter: the batch set aside, the rest delivered.
OUT="$T/c.out" FAIL_AT=300 FAIL_ALWAYS=1 cdc-run --log "$L" -c c --max-retries 1 \
  --dead-letter "$T/dead.ndjson" -- "$T/handler" 2> "$T/c.err" || fail "dead-letter run: $(cat "$T/c.err")"
[ "$(seqs "$T/dead.ndjson")" = "$(seq 298 300)" ] || fail "dead letters: $(seqs "$T/dead.ndjson")"
[ "$(seqs "$T/c.out")" = "$( (seq 1 297; seq 301 600) )" ] || fail "c: delivered"
[ "$(acked c)" = 600 ] || fail "c: acked $(acked c)"
grep -q "seqs 298-300 written to $T/dead.ndjson after 2 failed runs, and skipped" "$T/c.err" ||
  fail "no dead-letter warning: $(cat "$T/c.err")"
ok "--dead-letter: the failing batch set aside, every other event delivered"

# kill -9 mid-run: at least once, and what repeats is at most the batch in
# flight (and the one before it, when the kill fell between its run's end
# and its ack), in order. A killed cdc-run leaves its handler running: it
# is let finish before the next start, as systemd's KillMode would.
for i in 1 2 3; do
  OUT="$T/d.out" SLOW=0.02 cdc-run --log "$L" -c d --batch 5 -q -- "$T/handler" &
  pid=$!
  sleep 0.$((3 + i))
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  sleep 0.3
done
OUT="$T/d.out" cdc-run --log "$L" -c d --batch 5 -q -- "$T/handler" || fail "d: last run"
python3 - "$T/d.out" <<'PY' || fail "kill -9: events lost or repeated beyond a batch"
import json, sys
seqs = [json.loads(l)["seq"] for l in open(sys.argv[1])]
assert sorted(set(seqs)) == list(range(1, 601)), "lost events"
# A repeat starts where the cursor was: at most two batches (of two
# transactions of 3 here) before the seq that came before it.
repeats = 0
for i in range(1, len(seqs)):
    if seqs[i] <= seqs[i - 1]:
        repeats += 1
        assert seqs[i - 1] - seqs[i] < 12, (seqs[i - 1], seqs[i])
    else:
        assert seqs[i] == seqs[i - 1] + 1, ("a gap", seqs[i - 1], seqs[i])
assert repeats <= 3, repeats
PY
[ "$(acked d)" = 600 ] || fail "d: acked $(acked d)"
ok "three kill -9s: nothing lost, no gap, at most the batch in flight (and one unacked) repeated"

# -f and SIGTERM: the run in progress finishes, then exit 0.
OUT="$T/e.out" SLOW=0.5 cdc-run --log "$L" -c e -f -q -- "$T/handler" &
pid=$!
sleep 0.7
kill -TERM "$pid"
wait "$pid" || fail "SIGTERM: exit $?"
n=$(grep -c '' "$T/e.out")
[ "$n" -ge 3 ] && [ "$((n % 3))" = 0 ] || fail "SIGTERM: $n events written"
[ "$(acked e)" = "$n" ] || fail "SIGTERM: acked $(acked e), handled $n"
ok "SIGTERM: the run in progress finished and is acked ($n events)"

# --timeout: a hanging run is stopped and counts as failed.
cat > "$T/hang" <<'SH'
#!/bin/sh
exec sleep 30
SH
chmod +x "$T/hang"
expect_exit 75 cdc-run --log "$L" -c f --timeout 1s --max-retries 0 -q -- "$T/hang"
expect_one_line "ran longer than 1 s on seqs 1-3 and was stopped"
ok "--timeout: a hanging run stopped, counted as failed"

# Bad use: one line and the documented code.
expect_exit 64 cdc-run --log "$L" -c g
expect_exit 64 cdc-run --log "$L" -c g --dead-letter "$T/x" -- true
grep -q "^cdc-run: --dead-letter needs --max-retries" "$T/err" || fail "$(cat "$T/err")"
expect_exit 64 cdc-run --log "$L" -c g --timeout soon -- true
grep -q '^cdc-run: --timeout: invalid duration "soon"' "$T/err" || fail "$(cat "$T/err")"
expect_exit 64 cdc-run --log "$L" -c 'bad name' -- true
expect_exit 78 cdc-run --log "$L" -c g -- "$T/missing-handler"
expect_one_line "cannot run $T/missing-handler"
expect_exit 66 cdc-run --log "$T/nolog" -c g -- true
[ "$(acked g)" = "" ] || [ "$(acked g)" = 0 ] || fail "a refused run acked"
ok "bad use: no command, --dead-letter alone, bad duration or name (64), a missing command (78), no log (66)"
