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

# The log grows in 40 imports while both sinks follow it (-f), so every
# kill lands while a sink runs, whatever the machine's speed: each import
# runs in the background and the sinks are killed a random moment after it
# began, often in the middle of applying it.
python3 "$MODEL" gen 7 31000 300 > "$T/in.ndjson"
python3 - "$T/in.ndjson" "$T/chunk" 40 <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines(True)
n = int(sys.argv[3]); size = len(lines) // n + 1
out, part, start = [], 0, 0
while start < len(lines):  # cut only where a transaction (an lsn) ends
    end = min(start + size, len(lines))
    while end < len(lines) and json.loads(lines[end])["lsn"] == json.loads(lines[end - 1])["lsn"]:
        end += 1
    open("%s.%02d" % (sys.argv[2], part), "w").writelines(lines[start:end])
    part += 1; start = end
PY
chunks=("$T"/chunk.*)
[ "${#chunks[@]}" -ge 30 ] || fail "only ${#chunks[@]} chunks"
cdc-log import --log "$L" -q < "${chunks[0]}"

declare -A pid kills
start_sink() {  # start_sink MODE
  cdc-redis --log "$L" -c "$1" --redis "$REDIS_URL" --mode "$1" --prefix "$1:" \
    --batch 40 --reconnect-max 30 -f -q 2>>"$T/$1.err" &
  pid[$1]=$!
}
check_alive() {  # a sink that died by itself failed
  local rc=0
  kill -0 "${pid[$1]}" 2>/dev/null && return 0
  wait "${pid[$1]}" || rc=$?
  cat "$T/$1.err" >&2; fail "$1 sink exited $rc on its own"
}
kills[hash]=0; kills[stream]=0
start_sink hash; start_sink stream
RANDOM=42
left=$((${#chunks[@]} - 1))
for ((i = 1; i < ${#chunks[@]}; i++)); do
  cdc-log import --log "$L" -q < "${chunks[$i]}" &
  importer=$!
  if [ "$i" = 12 ]; then
    redis_kill; sleep 0.3; redis_start_server      # kill -9 Redis
  elif [ "$i" = 26 ]; then
    rcli shutdown nosave >/dev/null 2>&1 || true   # SHUTDOWN NOSAVE
    wait "$REDIS_PID" 2>/dev/null || true
    sleep 0.3; redis_start_server
  fi
  sleep "0.$((RANDOM % 12))$((RANDOM % 10))"
  for m in hash stream; do
    check_alive "$m"
    # At least 20 kills each: a coin toss until the rounds left are needed.
    if [ $((RANDOM % 2)) = 0 ] || [ $((20 - kills[$m])) -ge "$left" ]; then
      kill -9 "${pid[$m]}" && kills[$m]=$((kills[$m] + 1))
      wait "${pid[$m]}" 2>/dev/null || true
      start_sink "$m"
    fi
  done
  wait "$importer" || fail "import of ${chunks[$i]} failed"
  left=$((left - 1))
done
[ "${kills[hash]}" -ge 20 ] && [ "${kills[stream]}" -ge 20 ] ||
  fail "only ${kills[hash]}/${kills[stream]} kills"
total=$(cdc-tail --log "$L" --schema-changes | tee "$T/events" | wc -l)
[ "$total" -ge 100000 ] || fail "only $total events"
# Both sinks catch up (Redis's applied seq reaches the log's last), then
# stop on SIGTERM with 0.
for m in hash stream; do
  for ((w = 0; w < 600; w++)); do
    [ "$(rcli get "$m:__cdc_applied:$m")" = "$total" ] && break
    check_alive "$m"; sleep 0.1
  done
  [ "$(rcli get "$m:__cdc_applied:$m")" = "$total" ] || fail "$m sink did not catch up"
  kill -TERM "${pid[$m]}"
  rc=0; wait "${pid[$m]}" || rc=$?
  [ "$rc" = 0 ] || { cat "$T/$m.err" >&2; fail "$m sink exited $rc on SIGTERM"; }
done

python3 "$MODEL" check hash "$REDIS_SOCK" hash: hash < "$T/events" || fail "hash mirror differs from the log"
python3 "$MODEL" check stream "$REDIS_SOCK" stream: stream < "$T/events" || fail "streams differ from the log"
for m in hash stream; do
  [ "$(cdc-tail --log "$L" --schema-changes -c "$m" | wc -l)" = 0 ] || fail "$m not acked to the end"
done
ok "kill -9: $total events, ${kills[hash]} + ${kills[stream]} SIGKILLs, Redis killed and shut down mid-run: exact once"
