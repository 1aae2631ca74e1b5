#!/usr/bin/env bash
# cdc-redis's failures: one line on stderr, the documented exit code, and
# nothing acknowledged that Redis did not apply.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/redis.sh"
redis_start "$T" --requirepass s3cret
at_exit redis_stop
export REDISCLI_AUTH=s3cret
L="$T/log"
gen_events 1 20 5 > "$T/in.ndjson"
cdc-log import --log "$L" -q < "$T/in.ndjson"
acked() { cdc-log consumers --log "$L" --json | python3 -c "
import json, sys
for l in sys.stdin:
    c = json.loads(l)
    if c['name'] == '$1': print(c['acked_seq'])"; }

# A usage error is one line plus the --help hint.
expect_usage() {
  [ "$(grep -c '' "$T/err")" = 2 ] && head -1 "$T/err" | grep -qE -- "$1" &&
    grep -q -- '--help' "$T/err" || { cat "$T/err" >&2; fail "usage message /$1/"; }
}

expect_exit 0 cdc-redis --help
for f in --log --redis --mode --stdin --password-file --key-template --maxlen --batch; do
  grep -q -- "$f" "$T/out" || fail "--help does not document $f"
done
expect_exit 0 cdc-redis --version
grep -qE '^cdc-redis \(cdc\) [0-9]+\.[0-9]+\.[0-9]+$' "$T/out" || fail "--version: $(cat "$T/out")"
expect_exit 64 cdc-redis --no-such-flag
expect_exit 64 cdc-redis -c a --mode hash --redis "$REDIS_URL"
expect_usage 'log'
ok "help, version, bad options"

# Usage errors and the password's sources.
expect_exit 64 cdc-redis --log "$L" -c a --redis 'redis://u:s3cret@localhost' --mode hash
expect_usage 'must not hold a password'
grep -q s3cret "$T/err" && fail "the password was printed"
expect_exit 64 cdc-redis --log "$L" -c a --redis 'http://x' --mode hash
expect_usage 'invalid Redis URL'
expect_exit 64 cdc-redis --log "$L" -c a --redis "$REDIS_URL" --mode list
expect_usage 'stream or hash'
expect_exit 64 cdc-redis --log "$L" -c a --redis "$REDIS_URL" --mode hash --key-template '{table}'
expect_usage 'must contain \{key\}'
expect_exit 78 cdc-redis --log "$L" -c a --redis "$REDIS_URL" --mode hash --password-file "$T/none"
expect_one_line 'password-file'
ok "usage: a password in the URL, bad URL, mode, template, password file"

# Wrong password, and none: 77 at once.
REDISCLI_AUTH=wrong expect_exit 77 cdc-redis --log "$L" -c a --redis "$REDIS_URL" --mode hash
expect_one_line 'WRONGPASS'
REDISCLI_AUTH= expect_exit 77 cdc-redis --log "$L" -c a --redis "$REDIS_URL" --mode hash
expect_one_line 'NOAUTH'
printf 's3cret\n' > "$T/pw"
REDISCLI_AUTH=wrong expect_exit 0 cdc-redis --log "$L" -c a --redis "$REDIS_URL" --mode hash --password-file "$T/pw"
[ "$(acked a)" = 100 ] || fail "password file: acked $(acked a)"
ok "authentication: wrong password 77, no password 77, --password-file"

# Redis down: reconnects with backoff, then 69; nothing acked.
start=$(date +%s)
expect_exit 69 cdc-redis --log "$L" -c b --redis "unix://$T/nothing.sock" --mode hash --reconnect-max 1 -q
# -q keeps the warning of each retry; the error is the last line.
grep -q 'warning: cannot connect to Redis.*retrying in 100 ms' "$T/err" || fail "no retry warning: $(cat "$T/err")"
tail -1 "$T/err" | grep -q 'gave up after 1 s: cannot connect to Redis' || fail "$(cat "$T/err")"
[ "$(acked b)" = "" ] || [ "$(acked b)" = 0 ] || fail "acked with Redis down"
ok "Redis down: 69 after --reconnect-max, nothing acked"

# A key of the wrong type where a row hash goes: 65, the batch is not
# counted as applied, the consumer is not acked past it.
rcli del cdc:__cdc_applied:c >/dev/null
rcli set 'cdc:public.orders:[3]' 'not a hash' >/dev/null
expect_exit 65 cdc-redis --log "$L" -c c --redis "$REDIS_URL" --mode hash --batch 5 -q
expect_one_line 'HSET cdc:public.orders:\[3\] \(event seq 4\).*WRONGTYPE'
[ "$(rcli get cdc:__cdc_applied:c)" = "" ] || fail "applied seq moved past a failed batch: $(rcli get cdc:__cdc_applied:c)"
[ "$(acked c)" = 0 ] || fail "acked $(acked c) with a failed batch"
rcli del 'cdc:public.orders:[3]' >/dev/null
expect_exit 0 cdc-redis --log "$L" -c c --redis "$REDIS_URL" --mode hash -q
[ "$(acked c)" = 100 ] && [ "$(rcli get cdc:__cdc_applied:c)" = 100 ] || fail "after fixing the key"
[ "$(rcli hget 'cdc:public.orders:[3]' id)" = 3 ] || fail "row 3 after fixing the key"
ok "WRONGTYPE: 65, applied seq put back, nothing acked; fixed, it applies"

# A sink killed between the failed batch's EXEC and its put-back leaves
# what EXEC wrote: the batch's applied seq, and the unconfirmed seq from
# before it. Rebuild exactly that state (the put-back undone): a restart
# must apply the batch again and fail the same way, not go on after it.
rcli del cdc:__cdc_applied:g 'cdc:__cdc_unconfirmed:g' >/dev/null
rcli set 'cdc:public.orders:[3]' 'not a hash' >/dev/null
expect_exit 65 cdc-redis --log "$L" -c g --redis "$REDIS_URL" --mode hash --batch 5 -q
rcli set cdc:__cdc_applied:g 5 >/dev/null
expect_exit 65 cdc-redis --log "$L" -c g --redis "$REDIS_URL" --mode hash --batch 5 -q
expect_one_line 'HSET cdc:public.orders:\[3\] \(event seq 4\).*WRONGTYPE'
[ "$(acked g)" = 0 ] || fail "acked $(acked g) past a batch that failed"
rcli del 'cdc:public.orders:[3]' >/dev/null
expect_exit 0 cdc-redis --log "$L" -c g --redis "$REDIS_URL" --mode hash -q
[ "$(rcli hget 'cdc:public.orders:[3]' id)" = 3 ] || fail "row 3 after the kill and the fix"
[ "$(rcli exists 'cdc:__cdc_unconfirmed:g')" = 0 ] || fail "unconfirmed seq left after a clean run"
ok "WRONGTYPE and a kill before the put-back: the restart applies the batch again"

# Malformed NDJSON on --stdin: 65 naming the line; the transactions before
# it are applied and echoed (so acked), nothing after.
cdc-tail --log "$L" --schema-changes --to 10 > "$T/good"
{ cat "$T/good"; echo '{"seq":11,"lsn":"0/300","xid":3,'; cdc-tail --log "$L" --schema-changes --from 11; } > "$T/bad"
cdc-ack --log "$L" -c d --create
expect_exit 65 bash -o pipefail -c "cdc-redis --stdin -c d --redis '$REDIS_URL' --mode hash -q < '$T/bad' | cdc-ack --log '$L' -c d"
expect_one_line 'stdin line 11: '
[ "$(acked d)" = 10 ] || fail "acked $(acked d) after malformed input"
[ "$(rcli get cdc:__cdc_applied:d)" = 10 ] || fail "applied $(rcli get cdc:__cdc_applied:d)"
ok "malformed NDJSON on --stdin: 65, only whole transactions before it applied and acked"

# The applied and unconfirmed keys belong to the sink: a key of another
# type there (or a string that is not a seq) is refused with 65 before
# anything is written; the key stays as it was and nothing is echoed.
cdc-tail --log "$L" --schema-changes --to 5 > "$T/five"
for k in cdc:__cdc_applied:w cdc:__cdc_unconfirmed:w; do
  for type in hash list set zset stream string; do
    rcli del "$k" 'cdc:__cdc_applied:w' 'cdc:__cdc_unconfirmed:w' >/dev/null
    case $type in
      hash) rcli hset "$k" foreign data ;;
      list) rcli rpush "$k" foreign ;;
      set) rcli sadd "$k" foreign ;;
      zset) rcli zadd "$k" 1 foreign ;;
      stream) rcli xadd "$k" 1-1 foreign data ;;
      string) rcli set "$k" foreign ;;
    esac >/dev/null
    keys=$(rcli dbsize)
    expect_exit 65 cdc-redis --stdin -c w --redis "$REDIS_URL" --mode hash < "$T/five"
    expect_one_line "Redis key $k holds a"
    [ ! -s "$T/out" ] || fail "$type at $k: echoed $(wc -l < "$T/out") events"
    [ "$(rcli type "$k")" = "$type" ] && [ "$(rcli dbsize)" = "$keys" ] ||
      fail "$type at $k: replaced or written beside ($(rcli type "$k"), $(rcli dbsize) keys, was $keys)"
  done
done
rcli del cdc:__cdc_applied:w cdc:__cdc_unconfirmed:w >/dev/null
rcli hset cdc:__cdc_applied:w foreign data >/dev/null
expect_exit 65 cdc-redis --log "$L" -c w --redis "$REDIS_URL" --mode stream
expect_one_line 'cdc:__cdc_applied:w holds a hash'
[ "$(rcli hget cdc:__cdc_applied:w foreign)" = data ] && [ "$(acked w)" = "" ] ||
  fail "a foreign hash at the applied key: $(rcli type cdc:__cdc_applied:w), acked $(acked w)"
rcli del cdc:__cdc_applied:w >/dev/null
ok "a foreign key of any type at the applied or unconfirmed key: 65, nothing written"

# Redis at maxmemory: 74, nothing of the batch applied.
rcli config set maxmemory 1 >/dev/null
expect_exit 74 cdc-redis --log "$L" -c e --redis "$REDIS_URL" --mode stream -q
expect_one_line 'OOM'
rcli config set maxmemory 0 >/dev/null
[ "$(rcli exists cdc:__cdc_applied:e cdc:public.orders)" = 0 ] || fail "OOM left writes"
[ "$(acked e)" = 0 ] || fail "acked under OOM"
ok "OOM: 74, nothing applied or acked"

# A read-only replica: retried like an outage, then 69.
rcli replicaof 127.0.0.1 1 >/dev/null
expect_exit 69 cdc-redis --log "$L" -c f --redis "$REDIS_URL" --mode hash --reconnect-max 1 -q
grep -q 'warning: .*READONLY.*retrying in 100 ms' "$T/err" || fail "no retry warning: $(cat "$T/err")"
tail -1 "$T/err" | grep -q '^cdc-redis: gave up after 1 s: .*READONLY' || fail "$(cat "$T/err")"
rcli replicaof no one >/dev/null
ok "READONLY: 69 after --reconnect-max"
