#!/usr/bin/env bash
# cdc-redis --stdin keeps memory within three times the longest event plus
# a constant (cdc-redis(1), Memory), as capture and cdc-tail do: one line
# of REDIS_MEMORY_MB (200) MB, in hash and stream mode, with a value
# without escapes and one full of them; Redis gets the value whole and the
# line is echoed unchanged. And an initial snapshot, one transaction in
# the log, is applied in pieces rather than held whole.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/redis.sh"
redis_start "$T"
at_exit redis_stop
MB=${REDIS_MEMORY_MB:-200}
CONST_KB=$((32 * 1024))  # what cdc-redis takes with no large value

# line FILE ESCAPED: one insert whose "big" value is MB MB of text (with
# ESCAPED=1, a "\n" escape every 8 bytes); prints the value's length.
line() {
  python3 - "$1" "$MB" "$2" <<'PY'
import sys
path, mb, escaped = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
piece = "abcdef\\n" if escaped else "abcdefgh"   # 8 bytes of JSON text
n = mb * 1024 * 1024 // 8
with open(path, "w") as f:
    f.write('{"seq":1,"lsn":"0/100","xid":1,"ts":"2026-11-29T07:00:00.000000Z","op":"c",'
            '"schema":"public","table":"big","key":{"id":1},"before":null,"after":{"id":1,"big":"')
    chunk = piece * (1 << 16)
    for _ in range(n >> 16):
        f.write(chunk)
    f.write(piece * (n & 0xffff))
    f.write('"},"last":true}\n')
print(n * 7 if escaped else n * 8)
PY
}

run() {  # MODE ESCAPED
  local mode=$1 escaped=$2 len bytes limit peak
  len=$(line "$T/big.ndjson" "$escaped")
  bytes=$(stat -c %s "$T/big.ndjson")
  rcli flushall >/dev/null
  /usr/bin/time -v -o "$T/time" cdc-redis --stdin -c m --redis "$REDIS_URL" --mode "$mode" -q \
    < "$T/big.ndjson" > "$T/echo" || { cat "$T/time" >&2; fail "$mode: cdc-redis failed"; }
  cmp -s "$T/echo" "$T/big.ndjson" || fail "$mode: the line was not echoed unchanged"
  if [ "$mode" = hash ]; then
    [ "$(rcli hstrlen 'cdc:public.big:[1]' big)" = "$len" ] || fail "hash: value of $(rcli hstrlen 'cdc:public.big:[1]' big) bytes, want $len"
  else
    [ "$(rcli xlen cdc:public.big)" = 1 ] || fail "stream: $(rcli xlen cdc:public.big) entries"
  fi
  limit=$((3 * bytes / 1024 + CONST_KB))
  peak=$(rss_kb "$T/time")
  [ "$peak" -le "$limit" ] ||
    fail "$mode, escaped=$escaped: peak RSS $((peak / 1024)) MB for a $((bytes / 1048576)) MB line, over 3x + 32 MB ($((limit / 1024)) MB)"
  ok "$mode mode, a $((bytes / 1048576)) MB line$([ "$escaped" = 1 ] && echo ' full of escapes'): peak RSS $((peak / 1024)) MB (limit $((limit / 1024)) MB)"
}
run hash 0
run hash 1
run stream 0

# An initial snapshot is one transaction in the log: cdc-redis applies it
# in MULTIs of --batch, not held whole (which took 3.0 GB for a 1.25 GB
# snapshot, and Redis 4.95 GB to queue it). 100,000 snapshot reads of
# 1 KB, one transaction: peak RSS below the transaction's size, every row
# in Redis, the applied seq at the end, the consumer acked there.
python3 - > "$T/snap.ndjson" <<'PY'
import sys
pad = "x" * 1000
w = sys.stdout.write
w('{"lsn":"0/100","xid":7,"ts":"2026-11-29T07:00:00Z","op":"s","schema":"public","table":"snap",'
  '"key":null,"before":null,"after":null,"columns":[]}\n')
for i in range(1, 100001):
    w('{"lsn":"0/100","xid":7,"ts":"2026-11-29T07:00:00Z","op":"r","schema":"public","table":"snap",'
      '"key":{"id":%d},"before":null,"after":{"id":%d,"pad":"%s"}}\n' % (i, i, pad))
PY
cdc-log import --log "$T/snaplog" -q < "$T/snap.ndjson"
[ "$(cdc-tail --log "$T/snaplog" | grep -c '"last":true')" = 1 ] || fail "the snapshot log is not one transaction"
rcli flushall > /dev/null
/usr/bin/time -v -o "$T/time" cdc-redis --log "$T/snaplog" -c snap --redis "$REDIS_URL" --mode hash -q ||
  { cat "$T/time" >&2; fail "snapshot: cdc-redis failed"; }
peak=$(rss_kb "$T/time")
mb=$(($(stat -c %s "$T/snap.ndjson") / 1048576))
[ "$(rcli dbsize)" = 100002 ] ||
  fail "snapshot: $(rcli dbsize) keys, want 100,000 rows, the table's row set and the applied seq"
[ "$(rcli scard 'cdc:__cdc_rows:public.snap')" = 100000 ] || fail "snapshot: the row set holds $(rcli scard 'cdc:__cdc_rows:public.snap')"
[ "$(rcli hget 'cdc:public.snap:[100000]' id)" = 100000 ] || fail "snapshot: the last row is not in Redis"
[ "$(rcli get cdc:__cdc_applied:snap)" = 100001 ] || fail "snapshot: applied seq $(rcli get cdc:__cdc_applied:snap), not 100001"
[ "$(cdc-log consumers --log "$T/snaplog" --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["acked_seq"])')" = 100001 ] ||
  fail "snapshot: the consumer is not acked to 100001"
[ "$peak" -lt $((mb * 1024)) ] ||
  fail "snapshot: peak RSS $((peak / 1024)) MB applying a $mb MB snapshot transaction (not less than its size)"
ok "a $mb MB initial snapshot (one transaction of 100,000 rows) applied in MULTIs of --batch: peak RSS $((peak / 1024)) MB"
