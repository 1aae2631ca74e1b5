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
expect_exit 64 cdc-ack --log "$L" -c y --create 5
expect_exit 64 cdc-log retain --log "$L" --max-bytes 10Q
grep -q '^cdc-log: invalid size "10Q" (units: k, M, G, T)$' "$T/err" || fail "bad size message"
ok "positions, --to, -n"

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
ok "malformed NDJSON rejected with line numbers, nothing half-written"

expect_exit 66 cdc-tail --log "$T/missing"
expect_one_line '^cdc-tail: no cdc log at .*/missing \(directory does not exist\)$'
expect_exit 66 cdc-log info --log "$T/missing"
expect_exit 66 cdc-ack --log "$T/missing" -c x 1
mkdir "$T/empty"
expect_exit 66 cdc-log verify --log "$T/empty"
expect_one_line 'log.json is missing'
ok "missing log directory"

cp -r "$L" "$T/v2"
sed -i 's/"format_version": 1/"format_version": 2/' "$T/v2/log.json"
expect_exit 65 cdc-tail --log "$T/v2"
expect_one_line 'has format version 2; this cdc reads version 1'
expect_exit 65 cdc-log import --log "$T/v2" < /dev/null
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
  else
    echo "skip - read-only mount not permitted here"
  fi
fi

# Disk full: a small tmpfs where we may mount one; else a file size limit.
mkdir "$T/small"
if mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
  at_exit "umount '$T/small'"
  gen_events 1 3000 > "$T/big"
  expect_exit 74 cdc-log import --log "$T/small/log" -q < "$T/big"
  expect_one_line 'No space left on device \(disk full\)'
  cdc-log verify --log "$T/small/log" -q || fail "log invalid after disk full"
  n=$(cdc-tail --log "$T/small/log" | wc -l)
  last=$(cdc-tail --log "$T/small/log" | tail -1)
  [ "$n" -gt 0 ] || fail "nothing kept before the disk filled"
  case "$last" in *'"last":true}') ;; *) fail "log does not end at a transaction end";; esac
  ok "full disk: exit 74, log valid, ends at a transaction ($n events kept)"
else
  echo "skip - cannot mount a tmpfs to fill"
fi
cdc-log verify --log "$L" -q
ok "log still valid after every bad input"
