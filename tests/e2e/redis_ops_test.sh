#!/usr/bin/env bash
# cdc-redis against a real redis-server: every op in both modes (TOAST-
# unchanged updates, primary-key changes, truncate, NULL and JSON null,
# several tables in one transaction, a composite key), exact key layout,
# replays that change nothing, acks, and the --stdin pipe.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/redis.sh"
MODEL="$(dirname "$0")/redis_model.py"
redis_start "$T"
at_exit redis_stop
L="$T/log"
# A hash as "field value" pairs in field order, on one line.
hs() { rcli hgetall "$1" | paste -d' ' - - | sort | paste -sd' '; }

h() { printf '{"lsn":"0/%X","xid":%d,"ts":"2026-11-29T07:00:00Z"' "$(($1 * 256))" "$1"; }
{
  # txn 1: two tables, a composite key, NULL, JSON null
  echo "$(h 1),\"op\":\"c\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"status\":\"new\",\"total\":\"12.50\",\"note\":null,\"paid\":false}}"
  echo "$(h 1),\"op\":\"c\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":2},\"before\":null,\"after\":{\"id\":2,\"status\":\"new\",\"total\":\"1\",\"note\":\"a\nb\",\"paid\":true}}"
  echo "$(h 1),\"op\":\"c\",\"schema\":\"shop\",\"table\":\"items\",\"key\":{\"sku\":\"a:b\",\"n\":1},\"before\":null,\"after\":{\"sku\":\"a:b\",\"n\":1,\"qty\":3,\"doc\":null,\"tags\":[\"x\",null]},\"json_null\":[\"/after/doc\"]}"
  echo "$(h 1),\"op\":\"c\",\"schema\":\"shop\",\"table\":\"items\",\"key\":{\"sku\":\"a\",\"n\":2},\"before\":null,\"after\":{\"sku\":\"a\",\"n\":2,\"qty\":1,\"doc\":{\"k\":[1,2]},\"tags\":[]}}"
  # txn 2: update with an unchanged TOAST column; update to NULL; a message
  echo "$(h 2),\"op\":\"u\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"status\":\"paid\",\"note\":\"n\",\"paid\":true},\"unchanged\":[\"total\"]}"
  echo "$(h 2),\"op\":\"u\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":2},\"before\":null,\"after\":{\"id\":2,\"status\":\"new\",\"total\":\"1\",\"note\":null,\"paid\":true}}"
  echo "$(h 2),\"op\":\"m\",\"prefix\":\"app\",\"content\":\"hi\",\"transactional\":true}"
  # txn 3: primary-key changes, with and without an unchanged column; a delete
  echo "$(h 3),\"op\":\"u\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":10,\"status\":\"paid\",\"note\":\"n\",\"paid\":true},\"unchanged\":[\"total\"]}"
  echo "$(h 3),\"op\":\"u\",\"schema\":\"shop\",\"table\":\"items\",\"key\":{\"sku\":\"a\",\"n\":2},\"before\":null,\"after\":{\"sku\":\"a\",\"n\":3,\"qty\":2,\"doc\":null,\"tags\":[]}}"
  echo "$(h 3),\"op\":\"d\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":2},\"before\":null,\"after\":null}"
  # txn 4: a schema change; truncate items, then insert into it again
  echo "$(h 4),\"op\":\"s\",\"schema\":\"shop\",\"table\":\"items\",\"key\":null,\"before\":null,\"after\":null,\"columns\":[{\"name\":\"sku\",\"type_oid\":25,\"key\":true}]}"
  echo "$(h 4),\"op\":\"t\",\"schema\":\"shop\",\"table\":\"items\",\"key\":null,\"before\":null,\"after\":null,\"options\":{\"cascade\":false,\"restart_identity\":false}}"
  echo "$(h 4),\"op\":\"c\",\"schema\":\"shop\",\"table\":\"items\",\"key\":{\"sku\":\"z\",\"n\":9},\"before\":null,\"after\":{\"sku\":\"z\",\"n\":9,\"qty\":0,\"doc\":null,\"tags\":null}}"
} > "$T/ops.ndjson"
cdc-log import --log "$L" -q < "$T/ops.ndjson"
cdc-tail --log "$L" --schema-changes > "$T/events"

# --- hash mode ---------------------------------------------------------
cdc-redis --log "$L" -c h --redis "$REDIS_URL" --mode hash -q
got=$(rcli --scan | sort | tr '\n' ' ')
want='cdc:__cdc_applied:h cdc:__cdc_rows:public.orders cdc:__cdc_rows:shop.items cdc:public.orders:[10] cdc:shop.items:["z",9] '
[ "$got" = "$want" ] || fail "hash keys: $got"
[ "$(hs 'cdc:public.orders:[10]')" = "id 10 note n paid true status paid total 12.50" ] ||
  fail "moved row with its unchanged TOAST column: $(hs 'cdc:public.orders:[10]')"
[ "$(hs 'cdc:shop.items:["z",9]')" = "n 9 qty 0 sku z" ] || fail "row after truncate"
[ "$(rcli smembers cdc:__cdc_rows:shop.items)" = 'cdc:shop.items:["z",9]' ] || fail "membership after truncate"
[ "$(rcli get cdc:__cdc_applied:h)" = 13 ] || fail "applied seq"
python3 "$MODEL" check hash "$REDIS_SOCK" cdc: h < "$T/events" || fail "hash oracle"
[ "$(cdc-tail --log "$L" --schema-changes -c h | wc -l)" = 0 ] || fail "consumer h not acked to the end"
ok "hash mode: every op, exact keys and fields"

# The state after each transaction, checked with the oracle (txn 1-3).
rcli flushall >/dev/null
for n in 4 10 7; do  # ends at the state after txn 2
  rcli flushall >/dev/null
  cdc-ack --log "$L" -c h --seek 1
  cdc-tail --log "$L" --schema-changes --to "$n" > "$T/upto"
  cdc-tail --log "$L" --schema-changes --to "$n" | cdc-redis --stdin -c h --redis "$REDIS_URL" --mode hash -q > /dev/null
  python3 "$MODEL" check hash "$REDIS_SOCK" cdc: h < "$T/upto" || fail "hash state after seq $n"
done
[ "$(hs 'cdc:public.orders:[1]')" = "id 1 note n paid true status paid total 12.50" ] ||
  fail "TOAST-unchanged update kept the old value"
[ "$(hs 'cdc:public.orders:[2]')" = "id 2 paid true status new total 1" ] ||
  fail "update to NULL removes the field"
[ "$(rcli hget 'cdc:shop.items:["a:b",1]' doc)" = null ] || fail "JSON null is the text null"
[ "$(rcli hget 'cdc:shop.items:["a:b",1]' tags)" = '["x",null]' ] || fail "array value"
ok "hash mode: state after each transaction"

# --- stream mode -------------------------------------------------------
rcli flushall >/dev/null
cdc-redis --log "$L" -c s --redis "$REDIS_URL" --mode stream -q --metrics-file "$T/m.prom"
[ "$(metric cdc_redis_events_applied_total "$T/m.prom")" = 13 ] &&
  [ "$(metric cdc_redis_applied_seq "$T/m.prom")" = 13 ] &&
  [ "$(metric cdc_redis_lag_events "$T/m.prom")" = 0 ] || fail "metrics: $(grep -v '^#' "$T/m.prom")"
# Labels tell two sinks apart in one textfile directory.
grep -q '^cdc_redis_applied_seq{log_id="[^"]*",consumer="s",mode="stream"} 13$' "$T/m.prom" ||
  fail "metrics labels: $(grep applied_seq "$T/m.prom")"
python3 "$MODEL" check stream "$REDIS_SOCK" cdc: s < "$T/events" || fail "stream oracle"
[ "$(rcli xrange cdc:public.orders 5-0 5-0 | paste -sd' ')" = '5-0 lsn 0/200 xid 2 ts 2026-11-29T07:00:00.000000Z op u key {"id":1} before null after {"id":1,"status":"paid","note":"n","paid":true} unchanged ["total"]' ] ||
  fail "stream entry: $(rcli xrange cdc:public.orders 5-0 5-0 | paste -sd' ')"
[ "$(rcli xlen cdc:__cdc_messages)" = 1 ] || fail "message stream"
[ "$(rcli xlen cdc:shop.items)" = 6 ] || fail "items stream"
# Replays are refused by Redis itself: seek the consumer back, drop the
# applied key, run again: each entry is still there exactly once.
cdc-ack --log "$L" -c s --seek 1
rcli del cdc:__cdc_applied:s >/dev/null
cdc-redis --log "$L" -c s --redis "$REDIS_URL" --mode stream -q
python3 "$MODEL" check stream "$REDIS_SOCK" cdc: s < "$T/events" || fail "stream after a replay"
ok "stream mode: one entry per event with ID <seq>-0; a replay adds nothing"

# --maxlen trims, a template names the streams.
rcli flushall >/dev/null
cdc-redis --log "$L" -c m --redis "$REDIS_URL" --mode stream --maxlen 1 --prefix app: \
  --key-template 'x:{table}' -q
[ "$(rcli exists x:orders x:items app:__cdc_applied:m)" = 3 ] || fail "template keys: $(rcli --scan | paste -sd' ')"
ok "stream mode: --key-template and --maxlen"

# --- the pipe: tail | cdc-redis --stdin | ack --------------------------
rcli flushall >/dev/null
cdc-tail --log "$L" --schema-changes -c p | cdc-redis --stdin -c p --redis "$REDIS_URL" --mode hash -q |
  cdc-ack --log "$L" -c p
python3 "$MODEL" check hash "$REDIS_SOCK" cdc: p < "$T/events" || fail "pipe oracle"
[ "$(cdc-tail --log "$L" --schema-changes -c p | wc -l)" = 0 ] || fail "pipe did not ack everything"
# Run again: everything is already applied; it is echoed (and so acked) again.
[ "$(cdc-tail --log "$L" --schema-changes | cdc-redis --stdin -c p --redis "$REDIS_URL" --mode hash -q | wc -l)" = 13 ] ||
  fail "already-applied events are echoed"
ok "pipe: cdc-tail | cdc-redis --stdin | cdc-ack"

# --- names that a plain join would merge ---------------------------------
# "a.b"."c" and "a"."b.c" have one row each with the same key: two hashes,
# two streams, and a truncate of one leaves the other's row. Names with
# ':', '*', '{', spaces and quotes get exact, escaped keys.
python3 - > "$T/names.ndjson" <<'PY'
import json
def ev(n, op, schema, table, key=None, after=None):
    e = {"lsn": "0/%X" % (n * 256), "xid": n, "ts": "2026-11-29T07:00:00Z",
         "op": op, "schema": schema, "table": table, "key": key,
         "before": None, "after": after}
    if op == "t":
        e["options"] = {"cascade": False, "restart_identity": False}
    print(json.dumps(e, separators=(",", ":")))
for schema, table, v in [("a.b", "c", "ab.c"), ("a", "b.c", "a.bc"),
                         ("s:1", "t*{x}", "colon"), ("my \"q'", "it ems", "quotes")]:
    ev(1, "c", schema, table, {"id": 1}, {"id": 1, "v": v})
ev(2, "t", "a.b", "c")
PY
LN="$T/names"
cdc-log import --log "$LN" -q < "$T/names.ndjson"
cdc-tail --log "$LN" > "$T/names.events"
rcli flushall >/dev/null
cdc-redis --log "$LN" -c n --redis "$REDIS_URL" --mode hash -q
got=$(rcli --scan | sort | tr '\n' '|')
want='cdc:__cdc_applied:n|cdc:__cdc_rows:a.b%2Ec|cdc:__cdc_rows:my%20%22q%27.it%20ems|cdc:__cdc_rows:s%3A1.t%2A%7Bx%7D|cdc:a.b%2Ec:[1]|cdc:my%20%22q%27.it%20ems:[1]|cdc:s%3A1.t%2A%7Bx%7D:[1]|'
[ "$got" = "$want" ] || fail "hash keys of unusual names: $got"
[ "$(hs 'cdc:a.b%2Ec:[1]')" = "id 1 v a.bc" ] ||
  fail "a truncate of \"a.b\".\"c\" touched the row of \"a\".\"b.c\": $(hs 'cdc:a.b%2Ec:[1]')"
[ "$(rcli hget 'cdc:my%20%22q%27.it%20ems:[1]' v)" = quotes ] || fail "row of \"my \\\"q'\".\"it ems\""
python3 "$MODEL" check hash "$REDIS_SOCK" cdc: n < "$T/names.events" || fail "hash oracle, unusual names"
rcli flushall >/dev/null
cdc-redis --log "$LN" -c ns --redis "$REDIS_URL" --mode stream -q
for s in 'cdc:a%2Eb.c 2' 'cdc:a.b%2Ec 1' 'cdc:s%3A1.t%2A%7Bx%7D 1' 'cdc:my%20%22q%27.it%20ems 1'; do
  [ "$(rcli xlen "${s% *}")" = "${s##* }" ] || fail "stream ${s% *}: $(rcli --scan | paste -sd'|')"
done
python3 "$MODEL" check stream "$REDIS_SOCK" cdc: ns < "$T/names.events" || fail "stream oracle, unusual names"
# The raw names, when a template asks for them: the two tables meet.
rcli flushall >/dev/null
cdc-redis --log "$LN" -c nr --redis "$REDIS_URL" --mode stream -q --key-template '{prefix}{schema_raw}.{table_raw}'
[ "$(rcli xlen cdc:a.b.c)" = 3 ] || fail "raw template: $(rcli --scan | paste -sd'|')"
ok "names with '.', ':', '*', '{', spaces and quotes: one table, its own keys"
