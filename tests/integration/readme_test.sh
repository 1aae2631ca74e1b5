#!/usr/bin/env bash
# The README's command blocks, run as a reader would run them, so that a
# recipe cannot drift from what the tools do. Every fenced block carries a
# marker on the line before it: "<!-- readme-test: run: NAME -->" (run here,
# as written but for the machine-specific paths and hosts below) or
# "<!-- readme-test: skip: WHY -->" (WHY names the test that covers it, or
# why nothing can). A block without a marker, a run block this script does
# not know, or one it knows that the README lost, fails the test.
#
# What is replaced, and by what: /var/lib/cdc/log and its siblings by
# directories under $T, the tour's DSN by the throwaway server's (database
# app, role cdc), Redis's URLs by a throwaway redis-server's, /backup by
# $T/backup, the billing hook by a local HTTP server that counts what it
# receives. ./handle-events, ./send-mail and ./notify-downstream are small
# scripts in the working directory. Commands that follow (-f) run for a few
# seconds and are then stopped, as a reader would press ^C; any other exit
# status of theirs fails the block.
source "$(dirname "$0")/lib.sh"
source "$HERE/../../scripts/redis.sh"
README="$HERE/../../README.md"

pg_start "$T"
REDIS_TCP=1 redis_start "$T"
at_exit redis_stop

# The blocks: $T/blocks/N.{mark,lang,text}.
mkdir "$T/blocks"
python3 - "$README" "$T/blocks" <<'PY' || fail "README: a block without a marker"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
out, n, inb, bad = sys.argv[2], 0, False, []
for i, l in enumerate(lines):
    if l.startswith("```"):
        if inb:
            inb = False
            with open(f"{out}/{n}.text", "w") as f:
                f.write("\n".join(body) + "\n")
            continue
        inb, body, n = True, [], n + 1
        prev = lines[i - 1] if i else ""
        m = re.fullmatch(r"<!-- readme-test: (run: [a-z-]+|skip: .+) -->", prev)
        if not m:
            bad.append(f"README.md:{i + 1}: no readme-test marker before this block")
            continue
        open(f"{out}/{n}.mark", "w").write(m.group(1) + "\n")
        open(f"{out}/{n}.lang", "w").write(l[3:].strip() + "\n")
        continue
    if inb:
        body.append(l)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
[ "$(ls "$T"/blocks/*.mark | wc -l)" -ge 15 ] || fail "found only $(ls "$T"/blocks/*.mark | wc -l) blocks"

# The machine the blocks run on.
psql_q <<'SQL'
CREATE DATABASE app;
CREATE ROLE cdc LOGIN REPLICATION;
SQL
APP_DSN="${CDC_TEST_DSN/dbname=postgres/dbname=app}"
APP_DSN="${APP_DSN/user=postgres/user=cdc}"
# cdc-pg's target: another database of the same server, the role's own.
psql_q -c "CREATE DATABASE reporting OWNER cdc"
REPORTING_DSN="${APP_DSN/dbname=app/dbname=reporting}"
psql_q -d app <<'SQL'
CREATE TABLE orders (id int PRIMARY KEY, status text, total numeric(10,2));
CREATE TABLE accounts (id int PRIMARY KEY, plan text);
INSERT INTO orders SELECT i, 'new', i * 1.25 FROM generate_series(1, 40) i;
INSERT INTO accounts SELECT i, 'free' FROM generate_series(1, 10) i;
-- The least-privilege role of cdc-capture(1): the publication is made by
-- the tables' owner (capture says so, and what to run, when it cannot).
CREATE PUBLICATION cdc FOR ALL TABLES WITH (publish_via_partition_root = true);
GRANT SELECT ON ALL TABLES IN SCHEMA public TO cdc;
SQL
mkdir -p "$T/work" "$T/backup"
cd "$T/work"
cat > handle-events <<'SH'
#!/bin/sh
exec cat
SH
cat > send-mail <<'SH'
#!/bin/sh
cat >> "$T_MAIL"
SH
cat > notify-downstream <<'SH'
#!/bin/sh
echo "$1" >> "$T_NOTIFIED"
SH
chmod +x handle-events send-mail notify-downstream
export T_MAIL="$T/mail.ndjson" T_NOTIFIED="$T/notified"

# The billing hook: counts the POSTs and their lines.
python3 - "$T/hook" <<'PY' &
import http.server, sys
path = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(path + ".log", "ab") as f:
            f.write(body.rstrip(b"\n") + b"\n")
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(path + ".port", "w").write(str(s.server_port))
s.serve_forever()
PY
HOOK_PID=$!
at_exit "kill $HOOK_PID 2>/dev/null || true"
for _ in $(seq 50); do [ -s "$T/hook.port" ] && break; sleep 0.1; done
HOOK_URL="http://127.0.0.1:$(cat "$T/hook.port")/hook"

# substitute FILE: the block as it runs on this machine.
substitute() {
  sed -e "s#/var/lib/cdc/log.new#$T/log.new#g" \
    -e "s#/var/lib/cdc/log#$T/log#g" \
    -e "s#'host=/run/postgresql dbname=app user=cdc'#'$APP_DSN'#g" \
    -e "s#'host=/run/postgresql dbname=reporting user=cdc'#'$REPORTING_DSN'#g" \
    -e "s#redis://localhost:6379/0#$REDIS_TCP_URL#g" \
    -e "s#unix:///run/redis.sock#$REDIS_URL#g" \
    -e "s#/backup/#$T/backup/#g" \
    -e "s#https://billing.internal/hook#$HOOK_URL#g" \
    -e "s#--log A #--log $T/log #g" -e "s#--log B\b#--log $T/B#g" "$1"
}

# run_block N: runs the block's logical lines one by one in this shell
# (so that `export` and `&` act as for a reader), each echoed, and fails
# the test on the first that fails.
follow_seconds=4
follow() {  # follow TOOL ARGS...: -f runs stop after a few seconds
  local tool=$1 rc=0
  shift
  case " $* " in
    *" -f "*) timeout "$follow_seconds" "$BIN/$tool" "$@" || rc=$? ;;
    *) "$BIN/$tool" "$@" || rc=$? ;;
  esac
  [ "$rc" = 124 ] && rc=0
  return "$rc"
}
for tool in cdc-tail cdc-run cdc-redis cdc-nats cdc-pg; do
  eval "$tool() { follow $tool \"\$@\"; }"
done
CAPTURE_PID=
before_line() {
  # A retired capture is stopped first, as its unit would be.
  if [[ $1 == *--drop-slot* && -n $CAPTURE_PID ]]; then
    kill "$CAPTURE_PID"; wait "$CAPTURE_PID" || true; CAPTURE_PID=
  fi
}
after_line() {
  if [[ $1 == cdc-capture* && $1 =~ \&[[:space:]]*(#.*)?$ ]]; then
    CAPTURE_PID=$!
    at_exit "kill -9 $CAPTURE_PID 2>/dev/null || true"
    # The reader waits until capture streams before the next line.
    for _ in $(seq 150); do
      [ "$(psql_q -d app -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'cdc' AND active")" = 1 ] && return 0
      kill -0 "$CAPTURE_PID" 2> /dev/null || fail "capture exited: $1"
      sleep 0.1
    done
    fail "capture did not start streaming: $1"
  fi
}
run_block() {
  local n=$1 line next cmd="" rc
  substitute "$T/blocks/$n.text" > "$T/blocks/$n.sh"
  while IFS= read -r line || [ -n "$line" ]; do
    while [[ $line == *\\ ]]; do  # a continued line
      IFS= read -r next || break
      line="${line%\\}$next"
    done
    cmd+="${cmd:+$'\n'}$line"
    # A compound command (while ... done) runs once it is whole.
    bash -n -c "$cmd" 2> /dev/null || continue
    [[ -z ${cmd//[[:space:]]/} ]] && { cmd=""; continue; }
    echo "+ $cmd"
    before_line "$cmd"
    rc=0
    eval "set -o pipefail; $cmd" || rc=$?
    [ "$rc" = 0 ] || fail "README block $n: exit $rc: $cmd"
    after_line "$cmd"
    cmd=""
  done < "$T/blocks/$n.sh"
  [ -z "$cmd" ] || fail "README block $n ends inside a command: $cmd"
}
find_block() {  # find_block NAME: the number of the run block NAME
  grep -lx "run: $1" "$T"/blocks/*.mark | sed 's#.*/##; s#\.mark$##'
}
consumer_acked() {
  cdc-log consumers --log "$1" --json |
    python3 -c "import json,sys; print(next((c['acked_seq'] for c in map(json.loads, sys.stdin) if c['name'] == '$2'), -1))"
}

known="tour hook-runner hook-shell read-your-writes event slot-lag"
for mark in "$T"/blocks/*.mark; do
  m=$(cat "$mark")
  [[ $m == skip:* ]] && continue
  [[ " $known " == *" ${m#run: } "* ]] || fail "README: a run block this test does not know: $m"
done
for name in $known; do
  [ -n "$(find_block "$name")" ] || fail "README: no run block $name any more"
done

# The quick tour.
n=$(find_block tour)
run_block "$n"
last=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
# 50 rows copied at start, 40 again by the incremental snapshot (after the
# consumers' lines: they stopped before it).
[ "$last" -ge 90 ] || fail "tour: the log holds $last events, not the 50 rows copied and 40 re-read"
[ "$(consumer_acked "$T/log" billing)" -ge 50 ] || fail "tour: billing acked $(consumer_acked "$T/log" billing)"
[ "$(consumer_acked "$T/log" mailer)" -ge 50 ] || fail "tour: mailer acked $(consumer_acked "$T/log" mailer)"
[ "$(grep -c '"seq"' "$T_MAIL")" -ge 50 ] || fail "tour: send-mail got $(grep -c '"seq"' "$T_MAIL") events"
redis-cli -s "$REDIS_SOCK" HGET 'cdc:public.orders:[7]' status | grep -qx 'new' ||
  fail "tour: no Redis mirror of order 7: $(redis-cli -s "$REDIS_SOCK" HGETALL 'cdc:public.orders:[7]')"
[ "$(redis-cli -s "$REDIS_SOCK" XLEN 'cdc:public.orders')" -ge 40 ] || fail "tour: stream of orders"
got=$(psql_q -d reporting -c "SELECT status FROM public.orders WHERE id = 7")
want=$(psql_q -d app -c "SELECT status FROM orders WHERE id = 7")
[ -n "$want" ] && [ "$got" = "$want" ] || fail "tour: cdc-pg's copy of order 7 is \"$got\", not \"$want\""
cdc-log verify --log "$T/B" -q && cdc-log verify --log "$T/log.new" -q || fail "tour: B or the restored log"
[ "$(cdc-tail --log "$T/log.new" | sha256sum)" = "$(cdc-tail --log "$T/log" | sha256sum)" ] ||
  fail "tour: the restored log differs"
[ "$(psql_q -d app -c "SELECT count(*) FROM pg_replication_slots")" = 0 ] || fail "tour: the slot is still there"
ok "the quick tour runs as written (block $n): $last events, every consumer acked, Redis, another database, backup, restore, retire"

# The two hook recipes: the runner, and the plain-shell version that stops
# at the first failure. Each posts every event cdc-tail shows once.
visible=$(cdc-tail --log "$T/log" | wc -l)
last_visible=$(cdc-tail --log "$T/log" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
for name in hook-runner hook-shell; do
  cdc-ack --log "$T/log" -c billing --seek earliest
  rm -f "$T/hook.log"
  CDC_LOG="$T/log" run_block "$(find_block "$name")"
  [ "$(consumer_acked "$T/log" billing)" -ge "$last_visible" ] ||
    fail "$name: billing acked $(consumer_acked "$T/log" billing), not $last_visible"
  [ "$(grep -c '"seq"' "$T/hook.log")" = "$visible" ] ||
    fail "$name: the hook got $(grep -c '"seq"' "$T/hook.log") of $visible events"
  [ "$(grep -o '"seq":[0-9]*' "$T/hook.log" | sort -u | wc -l)" = "$visible" ] || fail "$name: an event posted twice"
done
ok "the billing hook recipes post each event once and ack them all"

# Read-your-writes, with capture running on the tour's database again.
cdc-capture --log "$T/rw" --dsn "$APP_DSN" -q --slot rw --status-interval 1 2> "$T/rw.err" &
RW=$!
at_exit "kill -9 $RW 2>/dev/null || true"
for _ in $(seq 150); do
  [ "$(psql_q -d app -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'rw' AND active")" = 1 ] &&
    cdc-log info --log "$T/rw" > /dev/null 2>&1 && break
  sleep 0.1
done
export PGDATABASE=app
CDC_LOG="$T/rw" run_block "$(find_block read-your-writes)"
[ "$(cat "$T/notified")" = 7 ] || fail "read-your-writes: notify-downstream did not run"
cdc-tail --log "$T/rw" | grep -q '"plan":"pro"' || fail "read-your-writes: the update is not in the log"
ok "read-your-writes: wait returns once the update is readable, then notifies"

# The slot-lag query, on the server the capture above streams from.
n=$(find_block slot-lag)
psql_q -d app -f "$T/blocks/$n.text" > "$T/lag" || fail "slot-lag: psql"
kill "$RW"; wait "$RW" || true
ok "the slot-lag query runs"

# The event as the README shows it has the members, in the order, that
# cdc-tail prints for such an update (the one of read-your-writes).
n=$(find_block event)
cdc-tail --log "$T/rw" | grep '"plan":"pro"' > "$T/update.ndjson"
python3 - "$T/blocks/$n.text" "$T/update.ndjson" <<'PY' || fail "README's event is not cdc-tail's form"
import json, sys
shown = json.loads(open(sys.argv[1]).read())
real = json.loads(open(sys.argv[2]).readline())
assert list(shown) == list(real), (list(shown), list(real))
assert shown["op"] == real["op"] == "u" and shown["last"] is real["last"] is True
PY
ok "the README's event has the members cdc-tail prints, in its order"
