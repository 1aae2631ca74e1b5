#!/usr/bin/env bash
# cdc-tail's selection: --exclude-table, schema changes only when asked
# for, and replays that stop where they should (--to now, --to time:).
source "$(dirname "$0")/lib.sh"
L="$T/log"
ev() {  # ev LSN XID TS OP TABLE
  printf '{"lsn":"%s","xid":%s,"ts":"%s","op":"%s","schema":"public","table":"%s","key":null,"before":null,"after":null}\n' "$@"
}
{
  ev 0/100 10 2026-11-29T07:00:00Z c orders
  ev 0/100 10 2026-11-29T07:00:00Z c audit_log
  ev 0/200 11 2026-11-29T08:00:00Z s orders
  ev 0/300 12 2026-11-29T09:00:00Z u orders
  ev 0/300 12 2026-11-29T09:00:00Z c audit_log
  ev 0/400 13 2026-11-29T10:00:00Z d items
} > "$T/in.ndjson"
cdc-log import --log "$L" -q < "$T/in.ndjson"
seqs() { python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))'; }

got=$(cdc-tail --log "$L" | seqs)
[ "$got" = "1 2 4 5 6" ] || fail "default hides schema changes: $got"
got=$(cdc-tail --log "$L" --schema-changes | seqs)
[ "$got" = "1 2 3 4 5 6" ] || fail "--schema-changes: $got"
got=$(cdc-tail --log "$L" --op s | seqs)
[ "$got" = "3" ] || fail "--op s: $got"
ok "schema changes only when asked for"

got=$(cdc-tail --log "$L" --exclude-table 'audit_*' | seqs)
[ "$got" = "1 4 6" ] || fail "--exclude-table: $got"
got=$(cdc-tail --log "$L" --table 'public.*' --exclude-table items --exclude-table 'public.audit*' | seqs)
[ "$got" = "1 4" ] || fail "--table with --exclude-table: $got"
ok "--exclude-table"

got=$(cdc-tail --log "$L" --from time:2026-11-29T07:30:00Z --to time:2026-11-29T09:00:00Z | seqs)
[ "$got" = "4 5" ] || fail "--from/--to time: $got"
got=$(cdc-tail --log "$L" --to lsn:0/300 --schema-changes | seqs)
[ "$got" = "1 2 3 4 5" ] || fail "--to lsn: $got"
ok "--to time: and lsn: stop after the last transaction at or before them"

# --to now with -f: stops at the end that existed when it started, even
# though more is committed while it runs.
cdc-tail --log "$L" -f --to now > "$T/now.out" &
pid=$!
sleep 0.3
ev 0/500 14 2026-11-29T11:00:00Z c orders | cdc-log import --log "$L" -q
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill "$pid"; fail "--to now -f did not stop"; fi
wait "$pid"
got=$(seqs < "$T/now.out")
[ "$got" = "1 2 4 5 6" ] || fail "--to now: $got"
got=$(cdc-tail --log "$L" --to now | seqs)
[ "$got" = "1 2 4 5 6 7" ] || fail "--to now (later): $got"
ok "--to now"
