#!/usr/bin/env bash
# Effectively once under kill -9: two sinks (hash and stream mode) apply a
# 100,000-event log while each is SIGKILLed at random moments at least 20
# times and restarted, and Redis itself is killed and shut down without
# saving mid-run (AOF with appendfsync always: what it acknowledged is on
# disk). Then the hash mirror equals the state rebuilt from the log (every
# key, every field, nothing extra) and every stream holds each event once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/redis.sh"
MODEL="$(dirname "$0")/redis_model.py"
redis_start "$T"
at_exit redis_stop
L="$T/log"

python3 "$MODEL" gen 7 31000 300 > "$T/in.ndjson"
cdc-log import --log "$L" -q < "$T/in.ndjson"
cdc-tail --log "$L" --schema-changes > "$T/events"
total=$(wc -l < "$T/events")
[ "$total" -ge 100000 ] || fail "only $total events"

declare -A pid kills
start_sink() {  # start_sink MODE
  cdc-redis --log "$L" -c "$1" --redis "$REDIS_URL" --mode "$1" --prefix "$1:" \
    --batch 40 --reconnect-max 30 -q 2>>"$T/$1.err" &
  pid[$1]=$!
}
kills[hash]=0; kills[stream]=0
start_sink hash; start_sink stream
RANDOM=42
round=0
while :; do
  round=$((round + 1))
  sleep "0.$((RANDOM % 30 + 5))"
  if [ "$round" = 8 ]; then
    redis_kill; sleep 0.3; redis_start_server      # kill -9 Redis
  elif [ "$round" = 16 ]; then
    rcli shutdown nosave >/dev/null 2>&1 || true   # SHUTDOWN NOSAVE
    wait "$REDIS_PID" 2>/dev/null || true
    sleep 0.3; redis_start_server
  fi
  running=0
  for m in hash stream; do
    [ "${pid[$m]}" != 0 ] || continue
    if kill -0 "${pid[$m]}" 2>/dev/null; then
      running=1
      if [ $((RANDOM % 2)) = 0 ] || [ "${kills[$m]}" -lt 20 ]; then
        kill -9 "${pid[$m]}" 2>/dev/null && kills[$m]=$((kills[$m] + 1))
        wait "${pid[$m]}" 2>/dev/null || true
        start_sink "$m"
      fi
    else
      rc=0; wait "${pid[$m]}" || rc=$?
      [ "$rc" = 0 ] || { cat "$T/$m.err" >&2; fail "$m sink exited $rc"; }
      pid[$m]=0
    fi
  done
  [ "$running" = 0 ] && break
  [ "$round" -lt 400 ] || fail "sinks still running after $round rounds"
done
[ "${kills[hash]}" -ge 20 ] && [ "${kills[stream]}" -ge 20 ] ||
  fail "only ${kills[hash]}/${kills[stream]} kills landed while the sinks ran"

python3 "$MODEL" check hash "$REDIS_SOCK" hash: hash < "$T/events" || fail "hash mirror differs from the log"
python3 "$MODEL" check stream "$REDIS_SOCK" stream: stream < "$T/events" || fail "streams differ from the log"
for m in hash stream; do
  [ "$(cdc-tail --log "$L" --schema-changes -c "$m" | wc -l)" = 0 ] || fail "$m not acked to the end"
done
ok "kill -9: $total events, ${kills[hash]} + ${kills[stream]} SIGKILLs, Redis killed and shut down mid-run: exact once"
