#!/usr/bin/env bash
# The log writer's real fdatasync and write paths, with no server: cdc-log
# import under the LD_PRELOAD fault shim (tests/faults/faultfs.c), which
# fails the calls the kernel makes for the writer, as a failing or full
# disk does.
#  - EIO on the fdatasync of a segment (once, as Linux reports a failed
#    writeback; the shim cuts the file back to what its last good sync
#    covered): exit 74 at once, the summary counts nothing of the failed
#    import as durable, and the log holds exactly what it held before;
#  - ENOSPC on a segment write: the same.
# After each, an import of the same input without faults adds it whole.
source "$(dirname "$0")/lib.sh"
SHIM="$BIN/../tests/libcdc_faultfs.so"
[ -f "$SHIM" ] || fail "no $SHIM (build the cdc_faultfs target)"

L="$T/log" REF="$T/ref" F="$T/faults"
mkdir "$F"
gen_events 1 40 5 > "$T/a"
gen_events 41 40 5 > "$T/b"
cdc-log import --log "$L" --commit-delay 0 -q < "$T/a"
cdc-log import --log "$REF" -q < "$T/a"
cdc-log import --log "$REF" -q < "$T/b"
before=$(cdc-tail --log "$L" | md5sum)
durable=$(cat "$L/durable")

# fault KIND ERRNO WHAT: imports $T/b with the fault injected from the
# start; the import must stop with 74 naming WHAT (a regex), having made
# nothing durable, and leave the log as it was.
fault() {
  rm -f "$F/injected"
  echo "$2" > "$F/$1"
  # One sync, at the end of the input (the commit delay is never reached):
  # every write is done before it.
  expect_exit 74 env CDC_FAULT_DIR="$F" LD_PRELOAD="$SHIM" \
    cdc-log import --log "$L" --commit-delay 600000 < "$T/b"
  rm -f "$F/$1"
  grep -q "^$1 $2" "$F/injected" || fail "$1 $2 was never injected: $(cat "$T/err")"
  [ "$(grep -c '' "$T/err")" = 2 ] || fail "$1 $2: $(cat "$T/err")"
  grep -qE "^cdc-log: cannot .*segments/[0-9]{20}\.seg: $3$" "$T/err" ||
    fail "$1 $2: $(cat "$T/err")"
  grep -qx "cdc-log: imported 0 transactions (0 events) durably before the error; log durable through seq 200" "$T/err" ||
    fail "$1 $2: the summary claims more than is durable: $(cat "$T/err")"
  cdc-log verify --log "$L" -q || fail "$1 $2: the log does not verify"
  [ "$(cdc-tail --log "$L" | md5sum)" = "$before" ] ||
    fail "$1 $2: the log holds other events than before the failed import"
  [ "$(cat "$L/durable")" = "$durable" ] || fail "$1 $2: the durable mark moved"
}
fault fsync "EIO once" "Input/output error"
ok "EIO on a segment fdatasync: exit 74 at once, nothing of the import acknowledged or left in the log"
fault write ENOSPC "No space left on device \\(disk full\\)"
ok "ENOSPC on a segment write: exit 74, nothing acknowledged or left in the log"

cdc-log import --log "$L" -q < "$T/b"
cdc-log verify --log "$L" -q || fail "the log does not verify after the faults"
cmp <(cdc-tail --log "$L") <(cdc-tail --log "$REF") || fail "the log differs from one imported without faults"
ok "the same import without faults adds the events whole, once"
