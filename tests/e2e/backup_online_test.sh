#!/usr/bin/env bash
# cdc-backup create while a writer appends at full speed and while
# retention runs; the backup verifies, restores into a log that passes
# `cdc-log verify`, holds exactly the source's events up to the end its
# manifest names, its consumers, and private modes. Also help/version.
source "$(dirname "$0")/lib.sh"

expect_exit 0 cdc-backup --help
for c in create verify restore list; do grep -q "$c" "$T/out" || fail "--help lacks $c"; done
expect_exit 0 cdc-backup --version
grep -qE '^cdc-backup \(cdc\) [0-9]+\.[0-9]+\.[0-9]+$' "$T/out" || fail "--version: $(cat "$T/out")"
expect_exit 64 cdc-backup create --no-such-flag
grep -q 'Try "cdc-backup --help"' "$T/err" || fail "no --help hint"
expect_exit 64 cdc-backup create --log "$T/x"
[ "$(head -1 "$T/err")" = 'cdc-backup: give one of --out DEST and --out-dir DIR' ] || fail "$(cat "$T/err")"
expect_exit 66 cdc-backup create --log "$T/none" --out "$T/b0"
[ ! -e "$T/b0" ] || fail "a failed create left $T/b0"
ok "help, version, bad options"

# manifest FIELD BACKUP: a field of a backup directory's manifest.
manifest() { python3 -c 'import json,sys; print(json.load(open(sys.argv[2]+"/manifest.json"))[sys.argv[1]])' "$1" "$2"; }

L="$T/log"
gen_events 1 300 5 | cdc-log import --log "$L" --segment-size 16k --commit-delay 0 -q
cdc-ack --log "$L" -c alpha --create --seek earliest > /dev/null
cdc-ack --log "$L" -c alpha 700 > /dev/null
# The writer appends at full speed while the backup runs: its input comes
# in bursts of 20 transactions every 10 ms, and the backup starts once
# some of it is in the log, so even on a quiet machine it is still writing.
gen_events 301 3700 5 > "$T/more"
pace() { python3 -c '
import sys, time
lines = sys.stdin.readlines()
for i in range(0, len(lines), 100):
    sys.stdout.write("".join(lines[i:i + 100])); sys.stdout.flush(); time.sleep(0.01)'; }
pace < "$T/more" | cdc-log import --log "$L" --segment-size 16k --commit-delay 0 -q & wp=$!
at_exit "kill $wp"
for _ in $(seq 100); do [ "$(cdc-tail --log "$L" | wc -l)" -gt 2500 ] && break; sleep 0.05; done
kill -0 "$wp" 2>/dev/null || fail "the writer finished before the backup started; give it more work"
cdc-backup create --log "$L" --out "$T/b1" > "$T/summary"
wait "$wp"
grep -qE "^backup $T/b1: seq 1-[0-9]+, LSN 0/100-0/[0-9A-F]+, [0-9]+ bytes stored$" "$T/summary" || fail "summary: $(cat "$T/summary")"
end=$(manifest end_seq "$T/b1")
total=$(cdc-tail --log "$L" | wc -l)
[ "$end" -gt 1500 ] && [ "$end" -le "$((total - 100))" ] || fail "backup ends at seq $end of $total"
ok "backup taken while the writer appended (ends at seq $((end - 1)) of $total)"

expect_exit 0 cdc-backup verify "$T/b1"
grep -qE "^ok $T/b1: seq 1-$((end - 1)), LSN .*, 1 backup in its chain, [0-9]+ bytes checked$" "$T/out" || fail "verify: $(cat "$T/out")"
expect_exit 0 cdc-backup restore "$T/b1" --log "$T/r1"
cdc-log verify --log "$T/r1" -q || fail "restored log fails cdc-log verify"
cmp <(cdc-tail --log "$T/r1") <(cdc-tail --log "$L" -n $((end - 1))) || fail "restored events differ from the source's"
[ "$(cdc-tail --log "$T/r1" | wc -l)" = $((end - 1)) ] || fail "restored log does not end at the manifest's end"
cdc-log consumers --log "$T/r1" --json | grep -q '"alpha"' || fail "consumer alpha not restored"
cdc-log consumers --log "$T/r1" --json | grep -q '"acked_seq":700' || fail "alpha's cursor not restored: $(cdc-log consumers --log "$T/r1" --json)"
bad=$(find "$T/r1" -type d ! -perm 0700; find "$T/r1" -type f ! -perm 0600)
[ -z "$bad" ] || fail "restored modes are not 0700/0600: $bad"
bad=$(find "$T/b1" -type d ! -perm 0700; find "$T/b1" -type f ! -perm 0600)
[ -z "$bad" ] || fail "backup modes are not 0700/0600: $bad"
ls -A "$T" | grep -q '^\.' && fail "temporary directories left: $(ls -A "$T")"
ok "verified, restored, event by event equal to the source up to seq $((end - 1)); modes 0700/0600"

# The documented modes whatever the umask: a umask only takes bits away.
(umask 077; expect_exit 0 cdc-backup restore "$T/b1" --log "$T/r2" --group-access -q)
bad=$(find "$T/r2" -type d ! -perm 0750; find "$T/r2" -type f ! -perm 0640)
[ -z "$bad" ] || fail "--group-access modes under umask 077: $bad"
(umask 0; expect_exit 0 cdc-backup restore "$T/b1" --log "$T/r3" -q)
bad=$(find "$T/r3" -type d ! -perm 0700; find "$T/r3" -type f ! -perm 0600)
[ -z "$bad" ] || fail "restored modes under umask 0: $bad"
ok "restore --group-access: 0750/0640, and 0700/0600 without, whatever the umask"

# Retention racing backups: every backup verifies and is dense.
P="$T/ret" REF="$T/ref"
# REF gets the same events as P, and no retention.
feed() {
  cat > "$T/feed"
  for l in "$REF" "$P"; do cdc-log import --log "$l" --segment-size 4k --commit-delay 0 -q < "$T/feed"; done
}
gen_events 1 1500 5 | feed
( while :; do cdc-log retain --log "$P" --retain-segments 3 > /dev/null 2>&1 || true; done ) & rp=$!
at_exit "kill $rp"
pinned=0
for i in 1 2 3 4 5; do
  cdc-backup create --log "$P" --out "$T/rb$i" -q || fail "backup $i failed under retention"
  cdc-backup verify "$T/rb$i" -q || fail "backup $i under retention does not verify"
  gen_events $((1500 + i * 20)) 20 5 | feed
done
kill "$rp"; wait "$rp" 2>/dev/null || true
cdc-backup restore "$T/rb5" --log "$T/rr" -q
cdc-log verify --log "$T/rr" -q || fail "restore of a backup made under retention fails verify"
first=$(manifest first_seq "$T/rb5")
cmp <(cdc-tail --log "$T/rr") <(cdc-tail --log "$REF" --from "$first" -n "$(($(manifest end_seq "$T/rb5") - first))") ||
  fail "backup under retention differs from the source"
# While a backup holds the pin, retention removes nothing and says so.
python3 - "$P" <<'PY' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1] + "/backup.pin", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_SH)
open(sys.argv[1] + "/.held", "w").close()
time.sleep(3)
PY
hp=$!
for _ in $(seq 50); do [ -e "$P/.held" ] && break; sleep 0.05; done
gen_events 1700 100 5 | cdc-log import --log "$P" --segment-size 4k --commit-delay 0 -q
n=$(ls "$P/segments" | grep -c '\.seg$')
expect_exit 0 cdc-log retain --log "$P" --retain-segments 1
grep -q 'a running cdc-backup pins the log' "$T/err" || fail "pinned retention: $(cat "$T/err")"
[ "$(ls "$P/segments" | grep -c '\.seg$')" = "$n" ] || fail "retention removed segments while pinned"
kill "$hp" 2>/dev/null; wait "$hp" 2>/dev/null || true
cdc-log retain --log "$P" --retain-segments 1 > /dev/null 2>&1
[ "$(ls "$P/segments" | grep -c '\.seg$')" = 1 ] || fail "retention did not resume after the pin"
ok "backups during cdc-log retain verify and match; a pin holds retention off"
