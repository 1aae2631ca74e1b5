#!/usr/bin/env bash
# cdc-redis fences off a connection it gave up on. On a silent network a
# sink times out with a batch (MULTI ... EXEC) still in its kernel's send
# queue or in the server's socket; when the path heals, that EXEC may be
# executed after the next connection has applied newer events, writing
# older values over them. Here an old connection of the sink (a client
# named as cdc-redis names its connections) holds such a batch, unexecuted,
# while cdc-redis starts and applies newer events; its EXEC must then find
# the connection closed, and the mirror equal the log. Without CLIENT
# rights (an ACL) cdc-redis warns and goes on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/redis.sh"
MODEL="$(dirname "$0")/redis_model.py"
REDIS_TCP=1 redis_start "$T"
at_exit redis_stop
L="$T/log"

h() { printf '{"lsn":"0/%X","xid":%d,"ts":"2026-11-29T07:00:00Z"' "$(($1 * 256))" "$1"; }
row() {  # row TXN OP ID V
  echo "$(h "$1"),\"op\":\"$2\",\"schema\":\"public\",\"table\":\"t\",\"key\":{\"id\":$3},\"before\":null,\"after\":{\"id\":$3,\"v\":$4}}"
}
{
  for i in 1 2 3; do row 1 c "$i" 1; done
  for i in 1 2 3; do row 2 u "$i" 2; done
} | cdc-log import --log "$L" -q
cdc-redis --log "$L" -c h --redis "$REDIS_URL" --mode hash -q
[ "$(rcli hget 'cdc:public.t:[1]' v)" = 2 ] || fail "first run: $(rcli hget 'cdc:public.t:[1]' v)"

# The name cdc-redis(1) documents: cdc-redis- and the FNV-1a hash of the
# applied key, in 16 hex digits.
name=$(python3 -c '
import sys
h = 14695981039346656037
for b in sys.argv[1].encode():
    h = ((h ^ b) * 1099511628211) % (1 << 64)
print("cdc-redis-%016x" % h)' "cdc:__cdc_applied:h")

# The old connection: its batch delivered, EXEC held back until "go".
python3 - "$REDIS_SOCK" "$name" "$T" > "$T/old.out" 2>&1 <<'PY' &
import os, socket, sys, time
sock, name, t = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
def cmd(*a):
    out = b"*%d\r\n" % len(a)
    for x in a:
        x = x.encode()
        out += b"$%d\r\n%s\r\n" % (len(x), x)
    return out
s.sendall(cmd("CLIENT", "SETNAME", name) + cmd("MULTI") +
          cmd("HSET", "cdc:public.t:[1]", "id", "1", "v", "1") +
          cmd("SET", "cdc:__cdc_applied:h", "3"))
buf = b""
while buf.count(b"\r\n") < 4:
    buf += s.recv(4096)
assert buf == b"+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n", buf
open(t + "/ready", "w").close()
while not os.path.exists(t + "/go"):
    time.sleep(0.05)
try:
    s.sendall(cmd("EXEC"))
    r = s.recv(4096)
    print("executed: %r" % r if r else "fenced: closed")
except OSError as e:
    print("fenced: %s" % e)
PY
old=$!
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.05; done
[ -e "$T/ready" ] || fail "the old connection did not start: $(cat "$T/old.out")"
[ "$(rcli client list | grep -c "name=$name ")" = 1 ] || fail "no client named $name"

{ for i in 1 2 3; do row 3 u "$i" 3; done; } | cdc-log import --log "$L" -q
cdc-redis --log "$L" -c h --redis "$REDIS_URL" --mode hash 2> "$T/redis.err" ||
  fail "cdc-redis: $(cat "$T/redis.err")"
grep -q "closed 1 earlier connection" "$T/redis.err" || fail "no fence said: $(cat "$T/redis.err")"
touch "$T/go"
wait "$old" || fail "the old connection: $(cat "$T/old.out")"
grep -q "^fenced" "$T/old.out" || fail "the old batch was executed after newer ones: $(cat "$T/old.out")"
[ "$(rcli hget 'cdc:public.t:[1]' v)" = 3 ] || fail "row 1 holds v=$(rcli hget 'cdc:public.t:[1]' v)"
[ "$(rcli get cdc:__cdc_applied:h)" = 9 ] || fail "applied seq $(rcli get cdc:__cdc_applied:h)"
cdc-tail --log "$L" --schema-changes > "$T/events"
python3 "$MODEL" check hash "$REDIS_SOCK" cdc: h < "$T/events" > "$T/check" || fail "mirror: $(cat "$T/check")"
ok "a batch of a connection given up on is never executed once the next connection has read its position ($(cat "$T/old.out"))"

# An ACL user without CLIENT: a warning, and the batches still applied.
rcli acl setuser lim on '>pw' '~*' '&*' '+@all' '-client' >/dev/null
{ for i in 1 2 3; do row 4 u "$i" 4; done; } | cdc-log import --log "$L" -q
url="redis://lim@127.0.0.1:$REDIS_PORT"
REDISCLI_AUTH=pw cdc-redis --log "$L" -c h --redis "$url" --mode hash 2> "$T/lim.err" ||
  fail "cdc-redis as an ACL user without CLIENT: $(cat "$T/lim.err")"
grep -q "warning: Redis refused CLIENT SETNAME (NOPERM" "$T/lim.err" || fail "no warning: $(cat "$T/lim.err")"
[ "$(grep -c warning "$T/lim.err")" = 1 ] || fail "more than one warning: $(cat "$T/lim.err")"
[ "$(rcli hget 'cdc:public.t:[3]' v)" = 4 ] || fail "as lim: row 3 holds v=$(rcli hget 'cdc:public.t:[3]' v)"
ok "without CLIENT rights: one warning naming the rights, the batches applied"
