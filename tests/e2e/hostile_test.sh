#!/usr/bin/env bash
# Hostile input and a hostile log directory: every tool ends with one line
# and the documented code, never a crash or a hang, and never writes through
# a planted file. Also run on the ASan+UBSan build (scripts/test.sh).
source "$(dirname "$0")/lib.sh"

L="$T/log"
gen_events 1 20 | cdc-log import --log "$L" -q
before=$(cdc-tail --log "$L" | md5sum)
unchanged() { [ "$(cdc-tail --log "$L" | md5sum)" = "$before" ] || fail "$1 changed the log"; }
head_of() { printf '{"lsn":"0/F000","xid":99,"ts":"2026-11-29T07:41:02Z","op":"c","schema":"public","table":"t","after":'; }

# Numbers beyond a double and deep nesting: refused before they cost
# anything, with one line naming the problem.
{ head_of; echo '{"n":1e999}}'; } > "$T/inf"
expect_exit 65 timeout 20 cdc-log import --log "$L" -q < "$T/inf"
expect_one_line '^cdc-log: stdin line 1: number 1e999 is out of range'
{ head_of; printf '{"n":1%010000d}}\n' 0; } > "$T/digits"
expect_exit 65 timeout 20 cdc-log import --log "$L" -q < "$T/digits"
expect_one_line '^cdc-log: stdin line 1: number 1000000000000000000000000000000000000000\.\.\. is out of range'
python3 -c 'print("[" * 100000 + "]" * 100000)' > "$T/deep.json"
{ head_of; printf '{"x":%s}}\n' "$(cat "$T/deep.json")"; } > "$T/deep"
expect_exit 65 timeout 20 cdc-log import --log "$L" -q < "$T/deep"
expect_one_line '^cdc-log: stdin line 1: nested deeper than 512 levels$'
unchanged "a refused import"
# Exact numbers survive a round trip through the log.
{ head_of; echo '{"a":0.1000000000000000000001,"b":123456789012345678901234567890,"c":1E+2}}'; } > "$T/exact"
cdc-log import --log "$L" -q < "$T/exact"
cdc-tail --log "$L" --from lsn:0/F000 | grep -qF '"after":{"a":0.1000000000000000000001,"b":123456789012345678901234567890,"c":1E+2},"last":true}' ||
  fail "numbers were not kept exactly"
cdc-tail --log "$L" | cdc-log import --log "$T/copy" -q
[ "$(cdc-tail --log "$T/copy" | md5sum)" = "$(cdc-tail --log "$L" | md5sum)" ] || fail "tail | import is not an exact copy"
before=$(cdc-tail --log "$L" | md5sum)
ok "numbers beyond a double and 100,000-deep nesting refused (65); exact numbers kept"

# One object of 1,000,000 keys: linear time, and SIGTERM is honoured.
python3 - "$T/wide" <<'PY'
import sys
head = '{"lsn":"0/%X","xid":%d,"ts":"2026-11-29T07:41:02Z","op":"c","schema":"public","table":"t","after":{'
with open(sys.argv[1], "w") as f:
    for t in range(1, 4):
        f.write(head % (0x10000 + t * 256, 1000 + t))
        f.write(",".join('"k%d":%d' % (i, i) for i in range(1000000)))
        f.write("}}\n")
PY
start=$(date +%s)
head -1 "$T/wide" | timeout 60 cdc-log import --log "$T/wide-log" -q || fail "1M keys: exit $?"
[ $(( $(date +%s) - start )) -le 30 ] || fail "1M keys took over 30 s"
ok "an object of 1,000,000 keys imports in $(( $(date +%s) - start )) s"
mkfifo "$T/in"
cdc-log import --log "$T/wide-log" -q < "$T/in" 2> "$T/err" &
pid=$!
exec 7> "$T/in"
tail -n +2 "$T/wide" >&7   # two whole transactions; the second is still open
for _ in $(seq 100); do
  [ "$(cdc-tail --log "$T/wide-log" 2>/dev/null | wc -l)" = 2 ] && break; sleep 0.1
done
[ "$(cdc-tail --log "$T/wide-log" | wc -l)" = 2 ] || fail "first wide transaction not committed"
kill -TERM "$pid"
got=0; timeout 10 tail --pid="$pid" -f /dev/null || fail "import ignored SIGTERM"
wait "$pid" || got=$?
exec 7>&-
[ "$got" = 75 ] || fail "interrupted import exited $got, not 75"
grep -q 'interrupted before the end of the input' "$T/err" || fail "no interruption message"
[ "$(cdc-tail --log "$T/wide-log" | wc -l)" = 2 ] || fail "the open transaction was committed"
cdc-log verify --log "$T/wide-log" -q
rm -rf "$T/wide" "$T/wide-log"
ok "SIGTERM stops an import at once (75); the open transaction is not committed"

# Frames whose checksum is valid but whose payload has the wrong shape,
# built with the real checksum (XXH3-64 from libxxhash).
bad_frame() {  # bad_frame DIR COUNT PAYLOAD(python literal) [COMMIT_TIME_US]
  mkdir -p "$1/segments"
  cp "$L/log.json" "$1/"
  python3 - "$1/segments/00000000000000000001.seg" "$2" "$3" "${4:-1764402062000000}" <<'PY'
import ctypes, struct, sys
xxh = ctypes.CDLL("libxxhash.so.0")
xxh.XXH3_64bits.restype = ctypes.c_uint64
xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
count, payload = int(sys.argv[2]), eval(sys.argv[3])
hdr = struct.pack("<4sBBBBQIIIIQqQ", b"CDCF", 1, 1, 0, 0, 1, count,
                  len(payload), len(payload), 0, 0x10, int(sys.argv[4]), 1)
body = hdr + payload  # the checksum covers header bytes 0-55 and the payload
sum = struct.pack("<Q", xxh.XXH3_64bits(body, len(body)))
open(sys.argv[1], "wb").write(hdr + sum + payload)
PY
}
ev='b"{\"lsn\":\"0/10\",\"xid\":1,\"ts\":\"2026-11-29T07:41:02.000000Z\",\"op\":\"c\",\"schema\":\"s\",\"table\":\"t\"}"'
bad_frame "$T/f1" 2 "$ev + b'\n'"
bad_frame "$T/f2" 2 "$ev + b'\n\n'"
bad_frame "$T/f3" 1 "$ev"
for d in f1 f2 f3; do
  expect_exit 65 timeout 20 cdc-tail --log "$T/$d"
  expect_one_line '^cdc-tail: corrupt frame in segments/00000000000000000001.seg at offset 0 \(seq 1-'
  expect_exit 1 timeout 20 cdc-log verify --log "$T/$d" -q
done
bad_frame "$T/f4" 1 "$ev + b'\n'"
cdc-tail --log "$T/f4" | grep -q '"seq":1,' || fail "the control frame does not read"
ok "frames of the wrong shape under a valid checksum: corruption (65), as verify says"

# Things that are not regular files where the tools expect one: nothing
# hangs, nothing grows without bound.
cp -r "$L" "$T/base"
seg=$(ls "$T/base/segments" | grep '\.seg$' | head -1)
nonfile() {  # nonfile NAME RELPATH KIND
  local d="$T/nf-$1"; rm -rf "$d"; cp -r "$T/base" "$d"; rm -f "$d/$2"
  case $3 in
    fifo) mkfifo "$d/$2" ;;
    zero) ln -s /dev/zero "$d/$2" ;;
    dir) mkdir "$d/$2" ;;
    sock) python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/$2" ;;
  esac
  echo "$d"
}
for kind in fifo zero dir sock; do
  for rel in "segments/$seg" log.json consumers.db; do
    d=$(nonfile "$kind" "$rel" "$kind")
    for cmd in "cdc-tail --log $d" "cdc-log verify --log $d" "cdc-log info --log $d" "cdc-ack --log $d -c x --create"; do
      [ "$rel" = consumers.db ] && [ "${cmd#cdc-log verify}" != "$cmd" ] && continue
      [ "$rel" = consumers.db ] && [ "${cmd#cdc-tail}" != "$cmd" ] && cmd="$cmd -c x"
      expect_exit 65 timeout 10 $cmd
      expect_one_line "refusing .*$rel"
    done
  done
done
gen_events 1 3 1 | cdc-log import --log "$T/sealfifo" -q --segment-size 1 --commit-delay 0
rm "$T/sealfifo/segments/00000000000000000001.sealed"
mkfifo "$T/sealfifo/segments/00000000000000000001.sealed"
for cmd in "cdc-tail --log $T/sealfifo" "cdc-log info --log $T/sealfifo" "cdc-log segments --log $T/sealfifo"; do
  expect_exit 65 timeout 10 $cmd
  expect_one_line "refusing .*00000000000000000001.sealed: it is a FIFO, not a regular file"
done
expect_exit 1 timeout 10 cdc-log verify --log "$T/sealfifo" -q
ok "a FIFO, /dev/zero, a directory or a socket as segment, seal record, log.json or consumers.db: refused at once"
for kind in fifo zero; do
  d=$(nonfile "c$kind" none "$kind"); rm -rf "$d/none"
  [ $kind = fifo ] && mkfifo "$T/conf-fifo" && conf="$T/conf-fifo" || conf=/dev/zero
  expect_exit 78 timeout 10 cdc-tail --config "$conf"
  expect_one_line "^cdc-tail: --config $conf: not a regular file$"
  expect_exit 78 timeout 10 cdc-ack --config "$conf" -c x
done
head -c 2000000 /dev/zero | tr '\0' '#' > "$T/big.conf"
expect_exit 78 cdc-tail --config "$T/big.conf"
expect_one_line 'larger than 1048576 bytes'
ok "--config that is /dev/zero, a FIFO or over 1 MiB: 78 at once"

# Seal records and frames holding times at the ends of int64 (UBSan finds
# any overflow; the ASan+UBSan build runs this too).
gen_events 1 3 1 | cdc-log import --log "$T/ext" -q --segment-size 1 --commit-delay 0
for t in -9223372036854775808 9223372036854775807; do
  sed -i -E "s/\"last_time_us\":-?[0-9]+/\"last_time_us\":$t/" "$T/ext"/segments/*.sealed
  cdc-log segments --log "$T/ext" > "$T/out"
  grep -q -- "-290308-12-21T19:59:05.224192Z\|294247-01-10T04:00:54.775807Z" "$T/out" ||
    fail "segments: extreme time not shown: $(cat "$T/out")"
  cdc-log info --log "$T/ext" > /dev/null
  cdc-log retain --log "$T/ext" --retain-age 1d --dry-run > /dev/null
  rm -rf "$T/ft"; bad_frame "$T/ft" 1 "$ev + b'\n'" "$t"
  cdc-log info --log "$T/ft" > "$T/out"
  grep -q -- "last_commit: *\(-290308-12-21T19:59:05.224192Z\|294247-01-10T04:00:54.775807Z\)" "$T/out" ||
    fail "info: extreme time not shown: $(cat "$T/out")"
  cdc-tail --log "$T/ft" --to time:2026-01-01 > /dev/null
done
ok "seal and commit times of -2^63 and 2^63-1: info, segments, retain and tail run clean"

# Files another user could plant in a shared log directory: a symlink to a
# victim under each name the writer creates. The victim never changes; the
# tool succeeds safely or says why it stops.
echo precious > "$T/victim"
victim_ok() { [ "$(cat "$T/victim")" = precious ] || fail "$1: the victim file was written"; }
P="$T/planted"
gen_events 1 1 1 | cdc-log import --log "$P" -q
ln -s "$T/victim" "$P/segments/00000000000000000001.sealed.tmp"
gen_events 2 100 | cdc-log import --log "$P" -q --segment-size 4k
victim_ok "a planted NNN.sealed.tmp"
[ -f "$P/segments/00000000000000000001.sealed" ] && [ ! -L "$P/segments/00000000000000000001.sealed" ] ||
  fail "segment 1 was not sealed"
cdc-log verify --log "$P" -q
rm "$P/LOCK"; ln -s "$T/victim" "$P/LOCK"
expect_exit 65 cdc-log import --log "$P" < /dev/null
expect_one_line "^cdc-log: refusing $P/LOCK: it is a symbolic link \(not followed\)$"
victim_ok "a planted LOCK"
mkdir "$T/fresh"; ln -s "$T/victim" "$T/fresh/log.json.tmp"
expect_exit 73 cdc-log import --log "$T/fresh" < /dev/null
expect_one_line 'directory is not empty and holds no cdc log \(found log.json.tmp\)'
victim_ok "a planted log.json.tmp"
rm "$P/LOCK"; ln -s "$T/victim" "$P/consumers.db"
expect_exit 65 cdc-ack --log "$P" -c x --create
expect_one_line "refusing $P/consumers.db"
victim_ok "a planted consumers.db"
rm "$P/consumers.db"
chmod 775 "$P"
gen_events 300 1 1 | cdc-log import --log "$P" -q 2> "$T/err"
expect_one_line "^cdc-log: warning: $P is writable by its group \(mode 0775\)"
chmod 755 "$P"; chmod 1777 "$P/segments"
gen_events 301 1 1 | cdc-log import --log "$P" -q 2> "$T/err"
expect_one_line "^cdc-log: warning: $P/segments is writable by all users \(mode 1777\)"
chmod 755 "$P/segments"
gen_events 302 1 1 | cdc-log import --log "$P" -q 2> "$T/err"
[ ! -s "$T/err" ] || fail "warning for a private directory: $(cat "$T/err")"
ok "planted symlinks (LOCK, NNN.sealed.tmp, log.json.tmp, consumers.db) never written through; shared directories warned about"
