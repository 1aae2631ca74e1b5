#!/usr/bin/env bash
# The pipe users write: cdc-tail -c x -f | handler | cdc-ack -c x.
# Every event is handled; killing the handler part-way and starting the
# pipe again redelivers only what was not acknowledged.
source "$(dirname "$0")/lib.sh"
L="$T/log"
gen_events 1 300 > "$T/in.ndjson"
cdc-log import --log "$L" -q < "$T/in.ndjson"
total=$(wc -l < "$T/in.ndjson")

handler() {  # records each event, then passes it on
  while IFS= read -r line; do
    printf '%s\n' "$line" >> "$T/handled.$1"
    printf '%s\n' "$line"
    if [ -n "${2:-}" ]; then sleep "$2"; fi
  done
}
export -f handler; export T

# Run 1: a slow handler, killed part-way.
: > "$T/handled.1"
( cdc-tail --log "$L" -c x -f | bash -c 'handler 1 0.002' | cdc-ack --log "$L" -c x --interval 0.2 ) &
pipe=$!
for _ in $(seq 200); do [ "$(wc -l < "$T/handled.1")" -ge 400 ] && break; sleep 0.05; done
pkill -9 -f 'handler 1 0.002' || fail "handler not running"
wait "$pipe" 2>/dev/null || true
acked=$(cdc-log consumers --log "$L" --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["acked_seq"])')
h1=$(wc -l < "$T/handled.1")
[ "$acked" -gt 0 ] && [ "$acked" -le "$h1" ] && [ "$acked" -lt "$total" ] || fail "after kill: acked=$acked handled=$h1"

# Run 2: runs until everything is acknowledged.
: > "$T/handled.2"
( cdc-tail --log "$L" -c x -f | bash -c 'handler 2' | cdc-ack --log "$L" -c x --interval 0.1 ) &
pipe=$!
for _ in $(seq 300); do
  a=$(cdc-log consumers --log "$L" --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["acked_seq"])')
  [ "$a" = "$total" ] && break; sleep 0.1
done
[ "$a" = "$total" ] || fail "run 2 acked only $a of $total"
pkill -f "cdc-tail --log $L -c x -f" || true
wait "$pipe" 2>/dev/null || true

first2=$(head -1 "$T/handled.2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
[ "$first2" = $((acked + 1)) ] || fail "run 2 started at seq $first2, expected $((acked + 1))"
python3 - "$T/handled.1" "$T/handled.2" "$total" "$acked" <<'PY' || fail "delivery check"
import json, sys
s1 = [json.loads(l)["seq"] for l in open(sys.argv[1])]
s2 = [json.loads(l)["seq"] for l in open(sys.argv[2])]
total, acked = int(sys.argv[3]), int(sys.argv[4])
assert s1 == list(range(1, len(s1) + 1)), "run 1 out of order"
assert s2 == list(range(acked + 1, total + 1)), "run 2 not exactly the unacked events"
PY
ok "pipe: $h1 handled before the kill, $acked acked, run 2 redelivered exactly seq $((acked + 1))-$total"

# A handler killed mid-line leaves a last line without a newline: cdc-ack
# acks the events before it and refuses the cut-off one (65, one line),
# even where the cut falls after its "seq". A whole last line without a
# newline is an event like any other.
acked_of() { cdc-log consumers --log "$L" --json | python3 -c "
import json, sys
for l in sys.stdin:
    c = json.loads(l)
    if c['name'] == '$1': print(c['acked_seq'])"; }
cdc-tail --log "$L" --to 5 > "$T/five"
cut=$(( $(head -4 "$T/five" | wc -c) + 60 ))  # 60 bytes into event 5
cdc-ack --log "$L" -c torn --create
head -c "$cut" "$T/five" > "$T/torn"
expect_exit 65 cdc-ack --log "$L" -c torn < "$T/torn"
expect_one_line '^cdc-ack: stdin line 5: the last line, without a newline, is not a whole event'
[ "$(acked_of torn)" = 4 ] || fail "a cut-off last line: acked $(acked_of torn), not 4"
cdc-ack --log "$L" -c whole --create
head -c -1 "$T/five" > "$T/whole"  # no final newline
expect_exit 0 cdc-ack --log "$L" -c whole < "$T/whole"
[ "$(acked_of whole)" = 5 ] || fail "a whole last line without newline: acked $(acked_of whole), not 5"
ok "a cut-off last line: 65, the events before it acked; a whole one without newline acked"

# A line naming a key twice ({"seq":3,"seq":5}: which did the handler
# mean?) is refused as cdc-log import refuses it (65, naming the line):
# nothing of it is acked, the lines before it are. So is an event with a
# second "seq" after its own, and a CloudEvent with one in its data.
cdc-tail --log "$L" --to 5 --format cloudevents > "$T/five.ce"
python3 - "$T/five" "$T/five.ce" "$T" <<'PY'
import sys
five, ce = (open(p).read().splitlines() for p in sys.argv[1:3])
t = sys.argv[3]
cases = {
    "bare": '{"seq":3,"seq":5}',
    "tail": five[2][:-1] + ',"seq":5}',
    "ce": ce[2].replace('"data":{"seq":3,', '"data":{"seq":5,"seq":3,'),
}
for name, line in cases.items():
    assert line not in (five[2], ce[2]), name  # the key was added
    with open(t + "/dup." + name, "w") as f:
        f.write("\n".join(five[:2] + [line] + five[3:]) + "\n")
PY
for c in bare tail ce; do
  cdc-ack --log "$L" -c "dup-$c" --create
  expect_exit 65 cdc-ack --log "$L" -c "dup-$c" < "$T/dup.$c"
  expect_one_line '^cdc-ack: stdin line 3: ("data": )?key "seq" appears twice$'
  [ "$(acked_of "dup-$c")" = 2 ] || fail "a duplicate key ($c): acked $(acked_of "dup-$c"), not 2"
done
ok "a line naming a key twice: 65, nothing of it acked, the lines before it are"
