#!/usr/bin/env bash
# Incremental chains, tar streams and --out-dir: an incremental stores only
# what its base lacks, verifies and restores through its chain (directories
# and archives, from a file or stdin, or after `tar -x`); --keep never
# removes a base a kept backup needs; list shows chains and ranges.
source "$(dirname "$0")/lib.sh"
manifest() { python3 -c 'import json,sys; print(json.load(open(sys.argv[2]+"/manifest.json"))[sys.argv[1]])' "$1" "$2"; }
stored() { find "$1" -type f -name '*.seg' | wc -l; }

L="$T/log"
imp() { gen_events "$1" "$2" 5 | cdc-log import --log "$L" --segment-size 8k --commit-delay 0 -q; }
imp 1 300
cdc-ack --log "$L" -c alpha --create --seek earliest > /dev/null
cdc-backup create --log "$L" --out "$T/full" -q
imp 301 100
cdc-ack --log "$L" -c alpha 1200 > /dev/null
cdc-backup create --log "$L" --out "$T/inc1" --incremental "$T/full" -q
imp 401 100
cdc-backup create --log "$L" --out - --incremental "$T/inc1" -q > "$T/inc2.tar"
nfull=$(stored "$T/full") ninc=$(stored "$T/inc1")
[ "$ninc" -lt $((nfull / 2)) ] || fail "the incremental stored $ninc segments, the full one $nfull"
grep -q '"in":' "$T/inc1/manifest.json" || fail "no file refers to the base"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base"]["name"])' "$T/inc1/manifest.json")" = full ] || fail "base not named"
ok "incrementals store only what the base lacks ($ninc segments against $nfull)"

cdc-backup create --log "$L" --out "$T/nosync" --no-sync -q
expect_exit 0 cdc-backup verify "$T/nosync"
ok "--no-sync makes a whole backup too (verify passes)"

for b in "$T/inc1" "$T/inc2.tar"; do
  expect_exit 0 cdc-backup verify "$b"
  grep -qE "^ok $b: seq 1-[0-9]+, .*, ([23]) backups in its chain" "$T/out" || fail "verify $b: $(cat "$T/out")"
done
expect_exit 0 cdc-backup verify - --base-dir "$T" < "$T/inc2.tar"
cdc-backup restore - --log "$T/r2" --base-dir "$T" -q < "$T/inc2.tar"
cdc-log verify --log "$T/r2" -q || fail "restored chain fails cdc-log verify"
cmp <(cdc-tail --log "$T/r2") <(cdc-tail --log "$L") || fail "restored chain differs from the log"
cdc-log consumers --log "$T/r2" --json | grep -q '"acked_seq":1200' || fail "cursor not from the newest backup"
cdc-backup restore "$T/inc1" --log "$T/r1" -q
cmp <(cdc-tail --log "$T/r1") <(cdc-tail --log "$L" -n $(($(manifest end_seq "$T/inc1") - 1))) || fail "restore of inc1 differs"
mkdir "$T/x"; tar -xf "$T/inc2.tar" -C "$T/x"
expect_exit 0 cdc-backup verify "$T/x" --base-dir "$T"
ok "a chain of directory and archive backups verifies and restores (file, stdin, tar -x)"

# A flipped byte in the base shows through the incremental that needs it.
cp -a "$T/full" "$T/full.orig"
seg=$(cd "$T/full" && ls segments/*.seg | head -1)
printf 'X' | dd of="$T/full/$seg" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_exit 1 cdc-backup verify "$T/inc1"
grep -qF "$T/full: $seg: SHA-256" "$T/err" || fail "damage in the base not named: $(cat "$T/err")"
expect_exit 1 cdc-backup restore "$T/inc1" --log "$T/r3"
[ ! -e "$T/r3" ] || fail "restore with a damaged base left a log"
rm -rf "$T/full"; mv "$T/full.orig" "$T/full"
ok "damage in a base fails the incremental's verify and restore"

D="$T/dir"; mkdir "$D"
for i in 1 2 3 4 5; do
  imp $((500 + i * 10)) 10
  cdc-backup create --log "$L" --out-dir "$D" --incremental latest --keep 2 --json > "$T/j$i"
done
cdc-backup list "$D" > "$T/list"
n=$(grep -c '' "$T/list")
# Each incremental builds on the one before: all of them are needed.
[ "$n" = 5 ] || fail "--keep 2 on one chain left $n backups: $(cat "$T/list")"
[ "$(grep -c ' incremental on ' "$T/list")" = 4 ] || fail "list does not show the chain: $(cat "$T/list")"
grep -qE '^cdc-backup-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?  [0-9T:.Z-]+  log [0-9a-f]{8}  seq 1-[0-9]+, LSN 0/100-0/[0-9A-F]+  [0-9]+ bytes  (full|incremental on cdc-backup-.*)$' "$T/list" || fail "list: $(cat "$T/list")"
newest=$(ls -d "$D"/cdc-backup-* | tail -1)
expect_exit 0 cdc-backup verify "$newest"
ok "--out-dir with --incremental latest and --keep 2 keeps a whole chain"

# The oldest full backup is needed by every incremental in the chain:
# pruning keeps it.
D2="$T/dir2"; mkdir "$D2"
cdc-backup create --log "$L" --out-dir "$D2" -q
imp 600 10
cdc-backup create --log "$L" --out-dir "$D2" --incremental latest -q
imp 610 10
cdc-backup create --log "$L" --out-dir "$D2" --incremental latest --keep 1 -q
[ "$(ls "$D2" | wc -l)" = 3 ] || fail "--keep 1 removed a needed base: $(ls "$D2")"
expect_exit 0 cdc-backup verify "$(ls -d "$D2"/cdc-backup-* | tail -1)"
cdc-backup create --log "$L" --out-dir "$D2" --keep 1 -q
[ "$(ls "$D2" | wc -l)" = 1 ] || fail "a new full backup should let --keep 1 prune the old chain: $(ls "$D2")"
ok "--keep never removes a base a kept backup needs"

# Incremental snapshot requests (LOG/snapshots/) are part of the log: a
# request still pending, or part done, survives a restore, through chains
# and archives; an incremental stores a request only when it changed.
S="$T/snap"
gen_events 1 20 5 | cdc-log import --log "$S" -q
id1=$(cdc-log snapshot --log "$S" --table public.orders --no-wait)
cp "$S/snapshots/$id1.json" "$T/id1.pending"
cdc-backup create --log "$S" --out "$T/sfull" -q
# Progress as cdc-capture records it: the file replaced by a whole new one.
python3 - "$S/snapshots/$id1.json" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
j.update(state="running", chunks=1, rows=5, last_key=["5"], seq=40)
open(sys.argv[1] + ".tmp", "w").write(json.dumps(j) + "\n")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
PY
id2=$(cdc-log snapshot --log "$S" --table '"my.schema".t' --chunk-rows 7 --no-wait)
cdc-backup create --log "$S" --out "$T/sinc" --incremental "$T/sfull" -q
cdc-backup create --log "$S" --out - --incremental "$T/sinc" -q > "$T/sinc2.tar"
[ "$(ls "$T/sinc/snapshots" | wc -l)" = 2 ] || fail "the incremental stores $(ls "$T/sinc/snapshots")"
[ "$(tar -tf "$T/sinc2.tar" | grep -c '^snapshots/' || true)" = 0 ] || fail "unchanged requests stored again"
for b in "$T/sfull" "$T/sinc" "$T/sinc2.tar"; do expect_exit 0 cdc-backup verify "$b"; done
cdc-backup restore "$T/sfull" --log "$T/rs0" -q
cmp "$T/rs0/snapshots/$id1.json" "$T/id1.pending" || fail "restored request differs"
[ "$(ls "$T/rs0/snapshots")" = "$id1.json" ] || fail "restored requests: $(ls "$T/rs0/snapshots")"
cdc-backup restore - --log "$T/rs2" --base-dir "$T" -q < "$T/sinc2.tar"
diff -r "$S/snapshots" "$T/rs2/snapshots" || fail "requests restored through the chain differ"
cdc-log snapshots --log "$T/rs2" > "$T/list"
grep -q "^$id1  public.orders  running  5 rows" "$T/list" || fail "cdc-log snapshots: $(cat "$T/list")"
grep -q "^$id2  my.schema.t  pending" "$T/list" || fail "cdc-log snapshots: $(cat "$T/list")"
bad=$(find "$T/rs2" -type d ! -perm 0700; find "$T/rs2" -type f ! -perm 0600)
[ -z "$bad" ] || fail "restored modes: $bad"
ok "snapshot requests are backed up and restored (full, incremental, archive); unchanged ones are not stored again"

# On a terminal the progress line ends before the summary starts: each
# summary line begins a line of its own.
script -qec "cdc-backup create --log '$L' --out '$T/tty' && cdc-backup verify '$T/tty'" /dev/null > "$T/tty.out" ||
  fail "backup on a terminal: $(cat "$T/tty.out")"
grep -q 'MiB/s' "$T/tty.out" || fail "no progress on a terminal: $(cat -v "$T/tty.out")"
python3 - "$T/tty.out" <<'PY' || fail "a summary runs into the progress line: $(cat -v "$T/tty.out")"
import sys
text = open(sys.argv[1], "rb").read().decode()
for word in ("backup ", "ok "):
    i = text.index(word)
    assert i == 0 or text[i - 1] == "\n", (word, text[max(0, i - 30):i + 10])
PY
ok "on a terminal: progress lines, then each summary on a line of its own"
