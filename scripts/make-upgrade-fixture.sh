#!/usr/bin/env bash
# Makes the on-disk fixtures of one release for tests/upgrade: a log, its
# consumers.db and a backup chain, written by THAT release's binaries,
# with what that release printed for them.
#
#   scripts/make-upgrade-fixture.sh --bin DIR --name NAME
#
# DIR holds the release's cdc-log, cdc-tail, cdc-ack and cdc-backup (its
# build/tools); the fixture goes to tests/upgrade/fixtures/NAME:
#   log/             a log of 60 imported transactions (every op, schema
#                    events, messages, NULL and JSON null, escapes and
#                    UTF-8, a 40 KB value) in several 16 KiB segments, with
#                    consumers.db: "early" acked to seq 5, "sel" (only
#                    shop.items) to seq 12, "done" to the end
#   backup/full      a full backup after transaction 40
#   backup/incr      an incremental one on top of it, after transaction 60
#   expect/          what the release printed: cdc-tail --schema-changes,
#                    cdc-tail -c early and -c sel, cdc-log consumers --json
#   RELEASE          which release, made when
# Run it once per release whose on-disk forms differ from the last one
# kept; tests/upgrade/upgrade_test.sh reads every fixture there.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="" NAME=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --name) NAME=$2; shift 2 ;;
    *) echo "usage: $0 --bin DIR --name NAME" >&2; exit 64 ;;
  esac
done
[ -n "$BIN" ] && [ -n "$NAME" ] || { echo "usage: $0 --bin DIR --name NAME" >&2; exit 64; }
for t in cdc-log cdc-tail cdc-ack cdc-backup; do
  [ -x "$BIN/$t" ] || { echo "$0: no $BIN/$t" >&2; exit 66; }
done
OUT=tests/upgrade/fixtures/$NAME
[ -e "$OUT" ] && { echo "$0: $OUT exists" >&2; exit 73; }
mkdir -p "$OUT/expect" "$OUT/backup"
L=$OUT/log

# txns FIRST LAST: transactions FIRST..LAST of a fixed workload.
txns() { python3 tests/upgrade/workload.py "$1" "$2"; }

txns 1 40 | "$BIN/cdc-log" import --log "$L" --segment-size 16K -q
"$BIN/cdc-ack" --log "$L" -c early --create
"$BIN/cdc-ack" --log "$L" -c early 5
"$BIN/cdc-ack" --log "$L" -c sel --create --table shop.items
"$BIN/cdc-ack" --log "$L" -c sel 12
"$BIN/cdc-backup" create --log "$L" --out "$OUT/backup/full" -q
txns 41 60 | "$BIN/cdc-log" import --log "$L" --segment-size 16K -q
last=$("$BIN/cdc-log" info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
"$BIN/cdc-ack" --log "$L" -c done --create
"$BIN/cdc-ack" --log "$L" -c done "$last"
"$BIN/cdc-backup" create --log "$L" --out "$OUT/backup/incr" --incremental "$OUT/backup/full" -q

"$BIN/cdc-log" verify --log "$L" -q
"$BIN/cdc-backup" verify "$OUT/backup/incr" --base-dir "$OUT/backup" -q
"$BIN/cdc-tail" --log "$L" --schema-changes > "$OUT/expect/tail.ndjson"
"$BIN/cdc-tail" --log "$L" -c early --schema-changes > "$OUT/expect/early.ndjson"
"$BIN/cdc-tail" --log "$L" -c sel > "$OUT/expect/sel.ndjson"
"$BIN/cdc-log" consumers --log "$L" --json > "$OUT/expect/consumers.json"
ls "$L/segments" | grep -q sealed || { echo "$0: no sealed segment" >&2; exit 70; }
{
  echo "Made by scripts/make-upgrade-fixture.sh with the binaries of release $NAME"
  echo "($("$BIN/cdc-log" --version 2>&1 | head -1)), $(date -u +%Y-%m-%d)."
  echo "Log format version $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["format_version"])' "$L/log.json")."
} > "$OUT/RELEASE"
du -sh "$OUT"
