#!/usr/bin/env bash
# Bad backups and bad requests: one flipped byte in any file, a truncated
# archive, a missing incremental base, a non-empty target, a manifest of
# another format version, a base of another log, a damaged source log.
# Each gives a clear line, the documented exit code, and no partial log
# or backup left behind.
source "$(dirname "$0")/lib.sh"

L="$T/log"
# Every kind of file a log can hold: a schema event (schemas.ndjson) and an
# incremental snapshot request (snapshots/) beside the events and cursors.
{
  gen_events 1 100 5
  echo '{"lsn":"0/6480","xid":100,"ts":"2026-11-29T07:41:03Z","op":"s","schema":"public","table":"orders","key":null,"before":null,"after":null,"columns":[]}'
  gen_events 101 100 5
} | cdc-log import --log "$L" --segment-size 8k --commit-delay 0 -q
cdc-ack --log "$L" -c alpha --create --seek earliest > /dev/null
cdc-log snapshot --log "$L" --table public.orders --no-wait > /dev/null
cdc-backup create --log "$L" --out "$T/good" -q
cdc-backup create --log "$L" --out - -q > "$T/good.tar"

# flip FILE OFFSET: inverts one byte in place.
flip() {
  python3 - "$1" "$2" <<'PY'
import os, sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0xFF]))
PY
}
# no_leftovers DIR: nothing hidden (temporary) beside the targets.
no_leftovers() { ! ls -A "$T" | grep -q '^\.' || fail "temporary files left: $(ls -A "$T" | grep '^\.')"; }

sealed=$(cd "$T/good" && ls segments/*.seg | head -1)
# Every file the manifest lists, and the manifest: a verify that skips the
# check of any one of them fails here.
files=$(python3 -c 'import json,sys; [print(f["path"]) for f in json.load(open(sys.argv[1]))["files"]]' "$T/good/manifest.json")
for kind in log.json consumers.db schemas.ndjson 'snapshots/.*\.json' \
            'segments/[0-9]{20}\.seg' 'segments/[0-9]{20}\.seg\.sealed'; do
  grep -qxE "$kind" <<< "$files" || fail "the fixture's backup holds no $kind"
done
files="$files manifest.json"
for f in $files; do
  rm -rf "$T/b"; cp -a "$T/good" "$T/b"
  size=$(stat -c %s "$T/b/$f")
  flip "$T/b/$f" $((size / 2))
  expect_exit 1 cdc-backup verify "$T/b"
  expect_one_line "^cdc-backup: $T/b(/manifest.json)?: .*"
  grep -qF "$f" "$T/err" || fail "verify does not name $f: $(cat "$T/err")"
  expect_exit 1 cdc-backup restore "$T/b" --log "$T/r"
  expect_one_line "^cdc-backup: nothing restored: .*$f"
  [ ! -e "$T/r" ] || fail "a failed restore left $T/r"
  no_leftovers
done
ok "a flipped byte in each of the $(wc -w <<< "$files") files of the backup fails verify and restore with 1, naming the file"

rm -rf "$T/b"; cp -a "$T/good" "$T/b"; rm "$T/b/$sealed"
expect_exit 1 cdc-backup verify "$T/b"
expect_one_line "^cdc-backup: $T/b: $sealed is missing$"
rm "$T/b/manifest.json"
expect_exit 1 cdc-backup verify "$T/b"
expect_one_line "^cdc-backup: $T/b: no manifest.json \(not a backup, or one whose creation did not finish\)$"
ok "a missing file, a missing manifest"

for cut in 100 5000 $(( $(stat -c %s "$T/good.tar") - 2048 )); do
  head -c "$cut" "$T/good.tar" > "$T/cut.tar"
  expect_exit 1 cdc-backup verify "$T/cut.tar"
  expect_one_line "^cdc-backup: $T/cut.tar: (truncated archive|no manifest.json)"
  expect_exit 1 cdc-backup restore - --log "$T/r" < "$T/cut.tar"
  expect_one_line "^cdc-backup: nothing restored: stdin: (truncated archive|no manifest.json)"
  [ ! -e "$T/r" ] || fail "a restore of a truncated archive left $T/r"
  no_leftovers
done
expect_exit 0 cdc-backup verify - < "$T/good.tar"
ok "a truncated archive fails with 1 and restores nothing"

mkdir "$T/full"; echo x > "$T/full/keep"
expect_exit 73 cdc-backup restore "$T/good" --log "$T/full"
expect_one_line "^cdc-backup: nothing restored: --log $T/full is not empty \(found keep\); give a new or empty one$"
[ "$(ls -A "$T/full")" = keep ] || fail "restore touched a non-empty target"
expect_exit 73 cdc-backup create --log "$L" --out "$T/full"
expect_one_line "^cdc-backup: --out $T/full is not empty"
no_leftovers
ok "a non-empty target is refused with 73"

rm -rf "$T/b"; cp -a "$T/good" "$T/b"
sed -i 's/"format_version": 1,/"format_version": 2,/' "$T/b/manifest.json"
expect_exit 65 cdc-backup verify "$T/b"
expect_one_line "^cdc-backup: $T/b/manifest.json: backup format version 2; this cdc-backup reads version 1$"
expect_exit 65 cdc-backup restore "$T/b" --log "$T/r"
[ ! -e "$T/r" ] || fail "restore of another version left $T/r"
expect_exit 65 cdc-backup create --log "$L" --out "$T/i" --incremental "$T/b"
[ ! -e "$T/i" ] || fail "create on a base of another version left $T/i"
no_leftovers
ok "a manifest of another format version: 65"

L2="$T/other"
gen_events 1 20 5 | cdc-log import --log "$L2" -q
expect_exit 65 cdc-backup create --log "$L2" --out "$T/i" --incremental "$T/good"
expect_one_line "^cdc-backup: --incremental $T/good is a backup of log [0-9a-f]{32}, not of log [0-9a-f]{32} at $L2$"
[ ! -e "$T/i" ] || fail "a refused incremental left $T/i"
ok "a base of another log: 65"

gen_events 201 50 5 | cdc-log import --log "$L" --segment-size 8k --commit-delay 0 -q
cdc-backup create --log "$L" --out "$T/inc" --incremental "$T/good" -q
mkdir "$T/bases"; mv "$T/good" "$T/bases/renamed"
expect_exit 66 cdc-backup verify "$T/inc"
expect_one_line "^cdc-backup: $T/inc: the base backup good \(manifest [0-9a-f]{12}\.\.\.\) is not in $T$"
expect_exit 66 cdc-backup restore "$T/inc" --log "$T/r"
[ ! -e "$T/r" ] || fail "restore without its base left $T/r"
expect_exit 0 cdc-backup verify "$T/inc" --base-dir "$T/bases" -q
no_leftovers
mv "$T/bases/renamed" "$T/renamed"
expect_exit 0 cdc-backup verify "$T/inc" -q
ok "a missing incremental base: 66; found by hash under another name"

# A damaged sealed segment in the source: no backup at all.
seg=$(ls "$L"/segments/*.seg | head -2 | tail -1)
flip "$seg" 100
expect_exit 65 cdc-backup create --log "$L" --out "$T/c"
expect_one_line "^cdc-backup: segments/[0-9]{20}\.seg: SHA-256 [0-9a-f]{64} does not match its seal record [0-9a-f]{64} \(the log is damaged; run cdc-log verify\)$"
[ ! -e "$T/c" ] || fail "a failed create left $T/c"
no_leftovers
ok "a sealed segment that fails its seal record: 65, no backup"
