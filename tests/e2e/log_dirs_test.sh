#!/usr/bin/env bash
# A log's directories (segments/, snapshots/) planted as symbolic links:
# every tool refuses the log with one line naming the directory (65) and
# writes nothing through the link. The links lead to the log's own
# directories, moved aside, so a tool that followed one would succeed.
source "$(dirname "$0")/lib.sh"

P="$T/pristine"
gen_events 1 30 2 | cdc-log import --log "$P" -q --segment-size 2k --commit-delay 0
cdc-ack --log "$P" -c x --create
cdc-log snapshot --log "$P" --table public.t --no-wait > /dev/null
gen_events 100 2 1 > "$T/more"
[ "$(ls "$P/snapshots" | wc -l)" = 1 ] || fail "no snapshot request to plant"

fresh() { rm -rf "$T/log" "$T/elsewhere"; cp -a "$P" "$T/log"; L="$T/log"; }
plant() { mv "$L/$1" "$T/elsewhere"; ln -s "$T/elsewhere" "$L/$1"; }
state() { (cd "$T/elsewhere" && find . -printf '%p %s %T@\n' | sort | md5sum); }
# refused DIR CMD...: the tool stops at the link, naming it, and the
# link's target is as it was.
refused() {
  local dir=$1 before; shift
  before=$(state)
  expect_exit 65 timeout 20 "$@"
  expect_one_line "refusing $L/$dir: it is a symbolic link \(not followed\)$"
  [ "$(state)" = "$before" ] || fail "$*: changed what the planted $dir leads to"
}
every_tool() {  # every_tool DIR
  refused "$1" cdc-tail --log "$L"
  refused "$1" cdc-tail --log "$L" -c x -f
  refused "$1" cdc-tail --log "$L" --format debezium
  refused "$1" cdc-ack --log "$L" -c x 3
  refused "$1" cdc-ack --log "$L" -c y --create
  refused "$1" cdc-ack --log "$L" -c x --seek earliest
  for sub in info verify consumers stats segments snapshots; do
    refused "$1" cdc-log "$sub" --log "$L"
  done
  refused "$1" cdc-log retain --log "$L" --retain-segments 1
  refused "$1" cdc-log wait --log "$L" --lsn 0/1 --timeout 1s
  refused "$1" cdc-log snapshot --log "$L" --table public.t --no-wait
  refused "$1" cdc-log import --log "$L" -q < "$T/more"
  refused "$1" cdc-backup create --log "$L" --out "$T/backup" -q
  [ ! -e "$T/backup" ] || fail "cdc-backup wrote a backup of a refused log"
  # Capture opens the log before it looks for a server.
  refused "$1" cdc-capture --log "$L" --dsn "host=$T/nosocket dbname=x" -q
}

fresh; plant segments
every_tool segments
ok "segments/ as a symlink: every tool refuses (65), nothing written through it"

fresh; plant snapshots
every_tool snapshots
ok "snapshots/ as a symlink: every tool refuses (65), nothing written through it"

# A new log: import would create its first segment through the link.
mkdir "$T/new" "$T/elsewhere2"
ln -s "$T/elsewhere2" "$T/new/segments"
expect_exit 65 cdc-log import --log "$T/new" -q < "$T/more"
expect_one_line "refusing $T/new/segments: it is a symbolic link \(not followed\)$"
[ -z "$(ls -A "$T/elsewhere2")" ] || fail "import wrote through the link: $(ls "$T/elsewhere2")"
[ ! -e "$T/new/log.json" ] || fail "import created log.json beside the link"
# A snapshot request would create snapshots/ through a link planted before it.
fresh; rm -rf "$L/snapshots"; mkdir "$T/elsewhere"; ln -s "$T/elsewhere" "$L/snapshots"
refused snapshots cdc-log snapshot --log "$L" --table public.t --no-wait
[ -z "$(ls -A "$T/elsewhere")" ] || fail "the request went through the link"
# Not a directory at all: refused the same way.
fresh; rm -rf "$L/snapshots"; echo x > "$L/snapshots"
expect_exit 65 cdc-tail --log "$L"
expect_one_line "refusing $L/snapshots: it is not a directory$"
ok "a new log's segments/ and a missing snapshots/ planted as links; a file as snapshots/: refused"
