#!/usr/bin/env bash
# A reader never stops early in silence: a sealed segment deleted, truncated
# or with a flipped bit in a frame's length field makes cdc-tail (with and
# without -f) exit 65 naming the segment, cdc-log verify exit 1, and
# cdc-log import refuse to append after the damage.
source "$(dirname "$0")/lib.sh"

P="$T/pristine"
gen_events 1 400 5 | cdc-log import --log "$P" --segment-size 8k --commit-delay 0 -q
mapfile -t segs < <(cd "$P/segments" && ls ./*.seg | sed 's|^\./||')
[ "${#segs[@]}" -ge 5 ] || fail "expected several segments, got ${#segs[@]}"
total=$(cdc-tail --log "$P" | wc -l)
[ "$total" = 2000 ] || fail "pristine log holds $total events"
mid=${segs[2]}
mid_seq=$((10#${mid%.seg}))
prev_seq=$((10#${segs[1]%.seg}))
next_seq=$((10#${segs[3]%.seg}))

fresh() { rm -rf "$T/log"; cp -r "$P" "$T/log"; L="$T/log"; }
sums() { (cd "$L/segments" && cat ./*.seg | md5sum); }

# check_damaged READABLE MESSAGE_REGEX: what every tool does with $L.
check_damaged() {
  local readable=$1 msg=$2 before
  expect_exit 65 cdc-tail --log "$L"
  expect_one_line "^cdc-tail: $msg"
  [ "$(wc -l < "$T/out")" = "$readable" ] || fail "cdc-tail printed $(wc -l < "$T/out") events, expected $readable before the damage"
  expect_exit 65 timeout 10 cdc-tail --log "$L" -f
  expect_one_line "^cdc-tail: $msg"
  [ "$(wc -l < "$T/out")" = "$readable" ] || fail "cdc-tail -f printed $(wc -l < "$T/out") events"
  expect_exit 1 cdc-log verify --log "$L" -q
  grep -q "segments/" "$T/err" || fail "verify does not name the segment"
  before=$(sums)
  gen_events 1000 3 2 > "$T/more"
  expect_exit 65 cdc-log import --log "$L" -q < "$T/more"
  [ "$(sums)" = "$before" ] || fail "import changed the damaged log"
}

fresh
rm "$L/segments/$mid"
check_damaged $((mid_seq - 1)) "seq $mid_seq-$((next_seq - 1)) are missing: segments/${segs[1]} ends at seq $((mid_seq - 1)) \(seal record segments/${segs[1]%.seg}.sealed\) and the next segment is segments/${segs[3]}$"
ok "a deleted middle segment: tail and tail -f exit 65 after seq $((mid_seq - 1)), verify 1, import refused"

fresh
size=$(stat -c %s "$L/segments/$mid")
truncate -s $((size / 2)) "$L/segments/$mid"
expect_exit 65 cdc-tail --log "$L"
grep -qE "segments/$mid" "$T/err" || fail "truncation not named: $(cat "$T/err")"
n=$(wc -l < "$T/out")
[ "$n" -ge $((mid_seq - 1)) ] && [ "$n" -lt $((next_seq - 1)) ] || fail "printed $n events"
expect_exit 65 timeout 10 cdc-tail --log "$L" -f
grep -qE "segments/$mid" "$T/err" || fail "-f: truncation not named"
expect_exit 1 cdc-log verify --log "$L" -q
before=$(sums)
expect_exit 65 cdc-log import --log "$L" -q < "$T/more"
expect_one_line "^cdc-log: segments/$mid is $((size / 2)) bytes, its seal record segments/${mid%.seg}.sealed says $size \(truncated\)$"
[ "$(sums)" = "$before" ] || fail "import changed the truncated log"
ok "a truncated sealed segment: tail and tail -f exit 65 naming it, verify 1, import refused"

# A flipped bit in the length field of the second frame of a sealed
# segment (bit 0 of byte 22: the payload length grows by 64 KiB).
fresh
second=$(python3 - "$L/segments/$mid" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
plen = struct.unpack_from("<I", data, 20)[0]
print(64 + plen)
PY
)
python3 - "$L/segments/$mid" "$second" <<'PY'
import sys
path, off = sys.argv[1], int(sys.argv[2]) + 22
with open(path, "r+b") as f:
    f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 1]))
PY
expect_exit 65 cdc-tail --log "$L"
expect_one_line "^cdc-tail: corrupt frame in segments/$mid at offset $second \(seq [0-9]+-[0-9]+\): "
expect_exit 65 timeout 10 cdc-tail --log "$L" -f
expect_one_line "^cdc-tail: corrupt frame in segments/$mid at offset $second "
expect_exit 1 cdc-log verify --log "$L" -q
grep -q "corrupt frame in segments/$mid at offset $second" "$T/err" || fail "verify: $(cat "$T/err")"
ok "a flipped bit in a sealed frame's length: tail and tail -f exit 65 naming segment and offset, verify 1"

# An unreadable seal record is corruption, not a record to rebuild.
fresh
echo '{"sha256":' > "$L/segments/${segs[1]%.seg}.sealed"
check_damaged $((mid_seq - 1)) "unreadable seal record segments/${segs[1]%.seg}.sealed: not valid JSON$"
[ "$(cat "$L/segments/${segs[1]%.seg}.sealed")" = '{"sha256":' ] || fail "the record was rewritten"
ok "an unreadable seal record: tail 65, verify 1, import refused and the record left alone"

# The undamaged log reads whole, with and without -f.
[ "$(cdc-tail --log "$P" | wc -l)" = 2000 ] || fail "pristine log"
[ "$(timeout 10 cdc-tail --log "$P" -f -n 2000 | wc -l)" = 2000 ] || fail "pristine log, -f"
cdc-log verify --log "$P" -q
ok "the undamaged log reads whole"
