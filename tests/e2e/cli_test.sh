#!/usr/bin/env bash
# Help, version, bad options and bad input for every tool: one clear line on
# stderr, the documented exit code, and the log left valid.
source "$(dirname "$0")/lib.sh"

for tool in cdc-log cdc-tail cdc-ack cdc-capture; do
  expect_exit 0 "$tool" --help
  grep -q -- "--log" "$T/out" || fail "$tool --help does not document --log"
  expect_exit 0 "$tool" --version
  grep -qE "^$tool \(cdc\) [0-9]+\.[0-9]+\.[0-9]+$" "$T/out" || fail "$tool --version: $(cat "$T/out")"
  expect_exit 64 "$tool" --log "$T/x" --no-such-flag
  grep -q "Try \"$tool --help\"" "$T/err" || fail "$tool: no --help hint"
done
ok "help, version and bad options"

L="$T/log"
gen_events 1 50 | cdc-log import --log "$L" -q
before=$(cdc-tail --log "$L" | md5sum)

[ "$(cdc-tail --log "$L" --to earliest | wc -l)" = 1 ] || fail "--to earliest"
[ "$(timeout 10 cdc-tail --log "$L" -f --to 3 | wc -l)" = 3 ] || fail "-f --to 3 did not stop at seq 3"
[ "$(cdc-tail --log "$L" --from 5 -n 2 | head -1 | cut -c1-9)" = '{"seq":5,' ] || fail "--from 5"
[ "$(cdc-tail --log "$L" --from seq:5 --to seq:6 | cut -c1-9 | tr '\n' ' ')" = '{"seq":5, {"seq":6, ' ] ||
  fail "--from seq:5 --to seq:6"
cdc-ack --log "$L" -c sq --create --seek seq:7 2> "$T/err" || fail "--seek seq:7: $(cat "$T/err")"
[ "$(cdc-tail --log "$L" -c sq -n 1 | cut -c1-9)" = '{"seq":7,' ] || fail "--seek seq:7 did not start at 7"
expect_exit 64 cdc-tail --log "$L" --from seq:-2
grep -q '^cdc-tail: invalid position "seq:-2" (use earliest, latest, now, SEQ or seq:SEQ, -N,' "$T/err" ||
  fail "seq:-2: $(cat "$T/err")"
expect_exit 64 cdc-ack --log "$L" -c y --create 5
expect_exit 64 cdc-log retain --log "$L" --retain-bytes 10Q
grep -q '^cdc-log: --retain-bytes: invalid size "10Q" (units: k, M, G, T)$' "$T/err" || fail "bad size message"
ok "positions (seq:N too), --to, -n"

# Malformed NDJSON: the bad line's transaction is rejected whole.
gen_events 51 1 3 > "$T/g"
{ head -2 "$T/g"; echo '{"lsn":"0/33300","xid":51,"ts":"x","op":"c"}'; } > "$T/bad.ndjson"
expect_exit 65 cdc-log import --log "$L" -q < "$T/bad.ndjson"
expect_one_line '^cdc-log: stdin line 3: "ts": invalid timestamp'
[ "$(cdc-tail --log "$L" | md5sum)" = "$before" ] || fail "rejected transaction left events behind"
cdc-log verify --log "$L" -q || fail "log invalid after rejected import"
printf 'not json\n' > "$T/bad2"
expect_exit 65 cdc-log import --log "$L" -q < "$T/bad2"
expect_one_line '^cdc-log: stdin line 1: not valid JSON'
{ gen_events 60 1 1; gen_events 55 1 1; } > "$T/backwards"
expect_exit 65 cdc-log import --log "$L" -q < "$T/backwards"
expect_one_line 'stdin line 2: lsn 0/3700 goes back before 0/3C00'
# Input quoted in a message cannot forge a second line.
{ gen_events 61 1 1 | sed 's/"op":"c"/"op":"x\\nFAKE: line\\u001b[31m"/'; } > "$T/forge"
expect_exit 65 cdc-log import --log "$L" -q < "$T/forge"
expect_one_line '^cdc-log: stdin line 1: "op" must be one of c u d r t m s, not "x\\nFAKE: line\\x1b\[31m"$'
expect_exit 64 cdc-tail --log "$L" --from "$(printf 'time:x\ny')"
grep -q 'invalid timestamp "x\\ny"' "$T/err" || fail "control character not escaped: $(cat "$T/err")"
ok "malformed NDJSON rejected with line numbers, nothing half-written"

expect_exit 66 cdc-tail --log "$T/missing"
expect_one_line '^cdc-tail: no cdc log at .*/missing \(directory does not exist\)$'
expect_exit 66 cdc-log info --log "$T/missing"
expect_exit 66 cdc-ack --log "$T/missing" -c x 1
mkdir "$T/empty"
expect_exit 66 cdc-log verify --log "$T/empty"
expect_one_line 'log.json is missing'
ok "missing log directory"

# Every option of every tool refuses an empty value (64), before doing
# anything: '' is a mistake, never a request for the default.
options_of() {  # the options that take a value, from --help
  "$@" --help | grep -oE '^  +(-[a-zA-Z],)?--[a-z-]+ [A-Z]' | grep -oE -- '--[a-z-]+'
  echo --config
}
empty_refused() {
  expect_exit 64 timeout 10 "$@"
  grep -q 'Try ".* --help"' "$T/err" || fail "no usage hint: $*"
}
n=0
for opt in $(options_of cdc-tail); do
  if [ "$opt" = --log ]; then empty_refused cdc-tail --log ''; else empty_refused cdc-tail --log "$L" "$opt" ''; fi
  n=$((n + 1))
done
for opt in $(options_of cdc-ack); do
  case $opt in
    --log) empty_refused cdc-ack --log '' -c x 1 ;;
    --consumer) empty_refused cdc-ack --log "$L" --consumer '' 1 ;;
    *) empty_refused cdc-ack --log "$L" -c x "$opt" '' ;;
  esac
  n=$((n + 1))
done
empty_refused cdc-ack --log "$L" -c x ''
for sub in info verify retain consumers segments import; do
  for opt in $(options_of cdc-log "$sub"); do
    [ "$opt" = --config ] && continue  # cdc-log takes no --config
    empty_refused cdc-log --log "$L" "$sub" "$opt" '' < /dev/null
    n=$((n + 1))
  done
  empty_refused cdc-log --log '' "$sub" < /dev/null
done
for opt in $(options_of cdc-capture); do
  case $opt in
    --log) empty_refused cdc-capture --log '' --dsn 'host=/nonexistent' ;;
    --dsn) empty_refused cdc-capture --log "$T/cap" --dsn '' ;;
    *) empty_refused cdc-capture --log "$T/cap" --dsn 'host=/nonexistent' "$opt" '' ;;
  esac
  n=$((n + 1))
done
[ ! -e "$T/cap" ] || fail "capture created a log before refusing an empty value"
[ "$n" -ge 30 ] || fail "only $n options found in the tools' --help"
empty_refused cdc-tail --log "$L" --op ,
ok "an empty value is refused (64) for each of the $n options and cdc-ack's SEQ"

for pos in time:2026-02-30 time:2025-02-29 time:1900-02-29 time:2026-04-31 \
           time:2026-01-01T00:00:00+99:99 time:2026-01-01T00:00:00+24:00 time:2026-01-01T00:00:00-05:60; do
  expect_exit 64 cdc-tail --log "$L" --from "$pos"
  grep -q "^cdc-tail: invalid timestamp" "$T/err" || fail "$pos: $(cat "$T/err")"
  expect_exit 64 cdc-ack --log "$L" -c y --create --seek "$pos"
done
cdc-tail --log "$L" --from time:2024-02-29T23:59:59-23:59 -n 1 > /dev/null
ok "dates that do not exist and offsets beyond RFC 3339's +-23:59 refused (64)"

# --config: a misspelt key is bad configuration (78), named.
printf 'log = "%s"\nconsumer = "c1"\nlimt = 5\n' "$L" > "$T/typo.conf"
expect_exit 78 cdc-tail --config "$T/typo.conf"
expect_one_line '^cdc-tail: --config: unknown key "limt"$'
expect_exit 78 cdc-ack --config "$T/typo.conf" 1
expect_one_line '^cdc-ack: --config: unknown key "limt"$'
printf 'log = "%s"\ndsn = "host=/nonexistent"\nretain_age = "7d"\n' "$L" > "$T/cap.conf"
expect_exit 78 cdc-capture --config "$T/cap.conf"
expect_one_line '^cdc-capture: --config: unknown key "retain_age"$'
ok "an unknown --config key: 78 naming the key"

# A consumers.db of another schema is bad data (65), named.
cp -r "$L" "$T/schema"
rm -f "$T/schema"/consumers.db*
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE consumers (who TEXT)"); c.commit()' "$T/schema/consumers.db"
expect_exit 65 cdc-ack --log "$T/schema" -c x --create
expect_one_line "^cdc-ack: $T/schema/consumers.db is not a cdc consumer store"
expect_exit 65 cdc-log consumers --log "$T/schema"
ok "consumers.db of another schema: 65 naming the file"

# A log path SQLite cannot take: an I/O error that says so, not 77.
long="$T"
while [ ${#long} -lt 560 ]; do long="$long/$(printf 'd%.0s' $(seq 60))"; done
mkdir -p "$long"
gen_events 1 2 | cdc-log import --log "$long/log" -q
cdc-tail --log "$long/log" > /dev/null
expect_exit 74 cdc-ack --log "$long/log" -c x --create
expect_one_line 'consumers.db: log directory path is too long for SQLite \(it takes paths under 512 bytes\)$'
ok "a log path over SQLite's limit: 74 with a clear message"

# A captured log takes events only from capture: 78 (the wrong log for this).
cp -r "$L" "$T/captured"
python3 - "$T/captured/log.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["source"] = {"system_id": "1", "database": "app", "slot": "cdc", "publication": "cdc"}
json.dump(j, open(sys.argv[1], "w"))
PY
gen_events 900 1 1 > "$T/one900"
expect_exit 78 cdc-log import --log "$T/captured" -q < "$T/one900"
expect_one_line 'is written by cdc-capture \(slot cdc\); import into a log of its own$'
ok "import into a captured log: 78"

cp -r "$L" "$T/v3"
sed -i 's/"format_version": [0-9]*/"format_version": 3/' "$T/v3/log.json"
expect_exit 65 cdc-tail --log "$T/v3"
expect_one_line 'has format version 3; this cdc reads versions 1 to 2'
expect_exit 65 cdc-log import --log "$T/v3" < /dev/null
ok "log of another format version"

mkdir "$T/notalog"; echo hi > "$T/notalog/file"
expect_exit 73 cdc-log import --log "$T/notalog" < /dev/null
expect_one_line 'directory is not empty and holds no cdc log'
ok "import refuses a non-empty foreign directory"

# Two writers: the first holds the lock while it waits on its stdin.
mkfifo "$T/fifo"
cdc-log import --log "$L" -q < "$T/fifo" &
w1=$!
exec 7> "$T/fifo"
for _ in $(seq 50); do grep -q "^$w1\$" "$L/LOCK" 2>/dev/null && break; sleep 0.1; done
expect_exit 75 cdc-log import --log "$L" < /dev/null
expect_one_line "is locked by another writer \(pid $w1\)"
exec 7>&-
wait $w1
ok "a second writer gets exit 75"

if [ "$(id -u)" -ne 0 ]; then
  mkdir "$T/ro"; chmod 555 "$T/ro"
  expect_exit 77 cdc-log import --log "$T/ro/log" < /dev/null
  expect_one_line 'Permission denied'
  ok "unwritable directory"
else
  # root ignores permission bits: use a read-only bind of the log instead.
  if mount --bind "$L" "$T/empty" 2>/dev/null && mount -o remount,bind,ro "$T/empty" 2>/dev/null; then
    at_exit "umount '$T/empty'"
    gen_events 100 1 1 > "$T/one"
    expect_exit 77 cdc-log import --log "$T/empty" < "$T/one"
    expect_one_line 'Read-only file system'
    umount "$T/empty"
    ok "unwritable (read-only) log directory"
    # Listing a log that has no consumers.db yet creates none: on a
    # read-only mount (or a full disk) it works and says 0.
    gen_events 1 3 1 | cdc-log import --log "$T/fresh" -q
    rm -f "$T/fresh"/consumers.db*
    mkdir "$T/ro"
    mount --bind "$T/fresh" "$T/ro" && mount -o remount,bind,ro "$T/ro"
    at_exit "umount '$T/ro'"
    n=$(cdc-log info --log "$T/ro" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["consumers"])') ||
      fail "cdc-log info on a read-only log without consumers.db"
    [ "$n" = 0 ] || fail "cdc-log info counts $n consumers"
    expect_exit 0 cdc-log consumers --log "$T/ro" --json
    [ ! -s "$T/out" ] || fail "consumers listed: $(cat "$T/out")"
    umount "$T/ro"
    [ ! -e "$T/fresh/consumers.db" ] || fail "cdc-log info created consumers.db"
    ok "info and consumers on a read-only log without consumers.db: 0 consumers, nothing created"
  else
    echo "skip - read-only mount not permitted here"
  fi
fi

# Disk full: a small tmpfs where we may mount one; else a file size limit.
mkdir "$T/small"
if mount -t tmpfs -o size=256k tmpfs "$T/small" 2>/dev/null; then
  at_exit "umount '$T/small'"
  gen_events 1 3000 > "$T/big"
  expect_exit 74 cdc-log import --log "$T/small/log" < "$T/big"
  grep -q 'No space left on device (disk full)' "$T/err" || fail "no disk-full message: $(cat "$T/err")"
  claimed=$(sed -nE 's/^cdc-log: imported [0-9]+ transactions \(([0-9]+) events\) durably before the error.*/\1/p' "$T/err")
  [ -n "$claimed" ] || fail "no summary of what is durable: $(cat "$T/err")"
  cdc-log verify --log "$T/small/log" -q || fail "log invalid after disk full"
  n=$(cdc-tail --log "$T/small/log" | wc -l)
  # The summary counts what a sync made durable: never more than the log has.
  [ "$claimed" -gt 0 ] && [ "$claimed" -le "$n" ] || fail "summary claims $claimed events, the log holds $n"
  last=$(cdc-tail --log "$T/small/log" | tail -1)
  [ "$n" -gt 0 ] || fail "nothing kept before the disk filled"
  case "$last" in *'"last":true}') ;; *) fail "log does not end at a transaction end";; esac
  ok "full disk: exit 74, log valid, ends at a transaction ($n events kept, $claimed reported durable)"
else
  echo "skip - cannot mount a tmpfs to fill"
fi
cdc-log verify --log "$L" -q
ok "log still valid after every bad input"

# cdc-log stats: lines of text, JSON, and the Prometheus exposition format
# promtool accepts, with each consumer's lag.
S="$T/stats"
gen_events 1 4 5 | cdc-log import --log "$S" -q
cdc-ack --log "$S" -c half --create --seek 10 > /dev/null
expect_exit 0 cdc-log stats --log "$S"
grep -qx 'last_seq     20' "$T/out" || fail "stats: $(cat "$T/out")"
grep -qx 'consumer     half acked_seq 9 lag 11' "$T/out" || fail "stats: $(cat "$T/out")"
expect_exit 0 cdc-log stats --log "$S" --json
python3 -c "
import json, sys
j = json.load(open('$T/out'))
assert j['last_seq'] == 20 and j['consumers'] == [{'name': 'half', 'acked_seq': 9, 'lag': 11, 'expired': False, 'damaged': False}], j  # --seek 10: 10 comes next
" || fail "stats: $(cat "$T/out")"
expect_exit 0 cdc-log stats --log "$S" --prometheus
promtool check metrics < "$T/out" > "$T/lint" 2>&1 || { cat "$T/lint"; fail "promtool check metrics"; }
grep -qE '^cdc_log_consumer_lag_events\{log_id="[0-9a-f]{32}",consumer="half"\} 11$' "$T/out" ||
  fail "stats --prometheus: $(grep lag "$T/out")"
expect_exit 66 cdc-log stats --log "$T/nope" --prometheus
expect_exit 64 cdc-log stats --log "$S" --json --prometheus
ok "cdc-log stats: text, JSON, and Prometheus text promtool accepts"

# cdc-log import on a terminal: a progress line, then the summary on a
# line of its own.
gen_events 1 3000 5 > "$T/tty-import.ndjson"
script -qec "cdc-log import --log '$T/tty-log' < '$T/tty-import.ndjson'" /dev/null > "$T/tty.out" ||
  fail "import on a terminal: $(cat -v "$T/tty.out")"
grep -q 'importing: [0-9]* transactions' "$T/tty.out" || fail "no progress: $(cat -v "$T/tty.out")"
python3 - "$T/tty.out" <<'PY' || fail "the summary runs into the progress line: $(cat -v "$T/tty.out")"
import sys
t = open(sys.argv[1], "rb").read().decode()
i = t.index("cdc-log: imported 3000 transactions (15000 events)")
assert i == 0 or t[i - 1] == "\n", t[max(0, i - 40):i]
PY
ok "cdc-log import on a terminal: progress, then the summary on its own line"
