#!/usr/bin/env bash
# Stored subscriptions: a consumer created with a selection
# (cdc-ack --create -c NAME --table ... --op ...) gets just that from
# cdc-tail -c NAME, and its acks move past the events it skipped.
source "$(dirname "$0")/lib.sh"
L="$T/log"
ev() {  # ev LSN XID OP TABLE ID
  printf '{"lsn":"%s","xid":%s,"ts":"2026-11-29T07:00:00Z","op":"%s","schema":"public","table":"%s","key":{"id":%s},"before":null,"after":{"id":%s}}\n' "$1" "$2" "$3" "$4" "$5" "$5"
}
seqs() { python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))'; }
acked() { cdc-log consumers --log "$L" --json | python3 -c 'import json,sys
for l in sys.stdin:
    c = json.loads(l)
    if c["name"] == sys.argv[1]: print(c["acked_seq"])' "$1"; }
{
  ev 0/100 10 c orders 1
  ev 0/100 10 c items 1
  ev 0/200 11 u orders 1
  ev 0/300 12 d orders 1
  ev 0/400 13 c items 2
  printf '{"lsn":"0/500","xid":14,"ts":"2026-11-29T07:00:00Z","op":"s","schema":"public","table":"orders","key":null,"before":null,"after":null,"columns":[]}\n'
} | cdc-log import --log "$L" -q

cdc-ack --log "$L" --create -c billing --table public.orders --op c,u
got=$(cdc-tail --log "$L" -c billing | seqs)
[ "$got" = "1 3" ] || fail "stored selection: $got"
got=$(cdc-tail --log "$L" -c billing --to 2 | seqs)
[ "$got" = "1" ] || fail "stored selection with --to: $got"
ok "cdc-tail -c applies the stored selection"

cdc-tail --log "$L" -c billing | cdc-ack --log "$L" -c billing
[ "$(acked billing)" = 3 ] || fail "acked $(acked billing), want 3"
{ ev 0/600 15 c items 3; ev 0/600 15 c orders 2; ev 0/700 16 d orders 2; } | cdc-log import --log "$L" -q
got=$(cdc-tail --log "$L" -c billing | seqs)
[ "$got" = "8" ] || fail "after the ack: $got"
cdc-tail --log "$L" -c billing | cdc-ack --log "$L" -c billing
[ "$(acked billing)" = 8 ] || fail "acked $(acked billing), want 8 (past skipped 4-7)"
ok "acks move past the events the selection skipped"

cdc-ack --log "$L" --create -c ddl --exclude-table items --schema-changes
got=$(cdc-tail --log "$L" -c ddl | seqs)
[ "$got" = "1 3 4 6 8 9" ] || fail "--exclude-table --schema-changes: $got"
ok "exclusions and schema changes are stored too"

# cdc-log consumers shows each stored selection, as JSON and as the flags.
cdc-ack --log "$L" --create -c quoted --table "it's.*" --op d
cdc-log consumers --log "$L" --json > "$T/consumers"
python3 - "$T/consumers" <<'PY' || fail "cdc-log consumers --json: $(cat "$T/consumers")"
import json, sys
c = {j["name"]: j for j in map(json.loads, open(sys.argv[1]))}
assert c["billing"]["selection"] == {"tables": ["public.orders"], "exclude_tables": [],
                                     "ops": "c,u", "schema_changes": False}, c["billing"]
assert c["ddl"]["selection"] == {"tables": [], "exclude_tables": ["items"], "ops": "",
                                 "schema_changes": True}, c["ddl"]
assert c["quoted"]["selection"]["tables"] == ["it's.*"], c["quoted"]
PY
cdc-log consumers --log "$L" > "$T/consumers"
grep -qE "^billing .* --table public.orders --op c,u$" "$T/consumers" || fail "text: $(cat "$T/consumers")"
grep -qE "^ddl .* --exclude-table items --schema-changes$" "$T/consumers" || fail "text: $(cat "$T/consumers")"
grep -qF -- "--table 'it'\''s.*' --op d" "$T/consumers" || fail "text: $(cat "$T/consumers")"
head -1 "$T/consumers" | grep -q "SELECTION$" || fail "header: $(head -1 "$T/consumers")"
cdc-ack --log "$L" -c quoted --delete
ok "cdc-log consumers shows each consumer's stored selection"

expect_exit 64 cdc-tail --log "$L" -c billing --table items
grep -q "has a stored selection" "$T/err" || fail "message: $(cat "$T/err")"
expect_exit 64 cdc-ack --log "$L" -c billing --op c
expect_exit 64 cdc-ack --log "$L" --create -c bad --op x
[ -z "$(acked bad)" ] || fail "a consumer with a bad selection was created"
cdc-ack --log "$L" -c billing --delete
cdc-ack --log "$L" --create -c billing
got=$(cdc-tail --log "$L" -c billing | seqs)
[ "$got" = "1 2 3 4 5 7 8 9" ] || fail "re-created without a selection: $got"
ok "usage errors; --delete forgets the selection"
