#!/usr/bin/env bash
# cdc-tail --format debezium|cloudevents, --with-key and --tx-markers on a
# log made by cdc-log import: one event of every op, transactions of
# several tables, reads that start inside a transaction, filters.
source "$(dirname "$0")/lib.sh"
L="$T/log"
cat > "$T/in.ndjson" <<'NDJSON'
{"lsn":"0/100","xid":10,"ts":"2026-11-29T07:00:00Z","op":"c","schema":"public","table":"orders","key":{"id":1},"before":null,"after":{"id":1,"status":"new"}}
{"lsn":"0/100","xid":10,"ts":"2026-11-29T07:00:00Z","op":"c","schema":"public","table":"items","key":{"id":1},"before":null,"after":{"id":1}}
{"lsn":"0/100","xid":10,"ts":"2026-11-29T07:00:00Z","op":"c","schema":"public","table":"orders","key":{"id":2},"before":null,"after":{"id":2,"status":"new"}}
{"lsn":"0/200","xid":11,"ts":"2026-11-29T07:00:01Z","op":"u","schema":"public","table":"orders","key":{"id":1},"before":null,"after":{"id":1,"status":"paid"},"unchanged":["note"]}
{"lsn":"0/300","xid":12,"ts":"2026-11-29T07:00:02Z","op":"d","schema":"public","table":"orders","key":{"id":1},"before":null,"after":null}
{"lsn":"0/400","xid":13,"ts":"2026-11-29T07:00:03Z","op":"t","schema":"public","table":"orders","key":null,"before":null,"after":null,"options":{"cascade":false,"restart_identity":false}}
{"lsn":"0/500","xid":14,"ts":"2026-11-29T07:00:04Z","op":"m","prefix":"app","content":"hello","transactional":true}
{"lsn":"0/600","xid":15,"ts":"2026-11-29T07:00:05Z","op":"r","schema":"public","table":"orders","key":{"id":3},"before":null,"after":{"id":3,"status":"old"}}
{"lsn":"0/700","xid":16,"ts":"2026-11-29T07:00:06Z","op":"s","schema":"public","table":"orders","key":null,"before":null,"after":null,"columns":[]}
NDJSON
cdc-log import --log "$L" -q < "$T/in.ndjson"
logid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["log_id"])' "$L/log.json")

check() {  # check NAME PYTHON-ASSERTIONS  (lines of $T/out parsed into `ev`)
  python3 - "$T/out" "$logid" <<PY || fail "$1"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
logid = sys.argv[2]
$2
PY
}

cdc-tail --log "$L" --format debezium > "$T/out"
check "debezium: one value per event but the schema change" '
assert [e["op"] for e in ev] == ["c", "c", "c", "u", "d", "t", "m", "r"], ev
assert [e["transaction"]["total_order"] for e in ev[:3]] == [1, 2, 3]
assert [e["transaction"]["data_collection_order"] for e in ev[:3]] == [1, 1, 2]
assert ev[0]["transaction"]["id"] == "10:256"
assert ev[3]["before"] == {"id": 1}
assert ev[3]["after"]["note"] == "__debezium_unavailable_value"
assert ev[4]["after"] is None and ev[4]["before"] == {"id": 1}
assert "before" not in ev[5] and ev[5]["source"]["table"] == "orders"
assert ev[6]["message"] == {"prefix": "app", "content": "aGVsbG8="}
assert ev[7]["source"]["snapshot"] == "last" and ev[7]["op"] == "r"
assert all(e["source"]["connector"] == "postgresql" for e in ev)
assert ev[3]["source"]["sequence"] == "[\"256\",\"512\"]"
'

cdc-tail --log "$L" --format debezium --table items > "$T/out"
check "debezium: a filter leaves total_order counting every event" '
assert len(ev) == 1 and ev[0]["transaction"]["total_order"] == 2, ev
'

cdc-tail --log "$L" --format debezium --from 2 -n 3 > "$T/out"
check "debezium: a read that starts inside a transaction" '
assert [e["transaction"] for e in ev[:2]] == [None, None], ev
assert ev[2]["transaction"]["total_order"] == 1
'

cdc-tail --log "$L" --format debezium --with-key --op m,d > "$T/out"
check "debezium --with-key" '
assert [e["key"] for e in ev] == [{"id": 1}, {"prefix": "app"}], ev
assert ev[0]["value"]["op"] == "d"
'

cdc-tail --log "$L" --format cloudevents --schema-changes > "$T/out"
check "cloudevents: ids, types, subjects, data" '
types = [e["type"].rsplit(".", 1)[1] for e in ev]
assert types == ["insert", "insert", "insert", "update", "delete", "truncate", "message", "read", "schema"], types
assert [e["id"] for e in ev] == ["%s-%d" % (logid, i) for i in range(1, 10)]
assert all(e["specversion"] == "1.0" and e["datacontenttype"] == "application/json" for e in ev)
assert ev[0]["source"] == "cdc://import/" + logid
assert ev[1]["subject"] == "public.items" and "subject" not in ev[6]
assert ev[2]["data"]["seq"] == 3 and ev[2]["data"]["last"] is True
assert ev[3]["time"] == "2026-11-29T07:00:01.000000Z"
'
cp "$T/out" "$T/ce1"
cdc-tail --log "$L" --format cloudevents --schema-changes > "$T/out"
cmp -s "$T/out" "$T/ce1" || fail "cloudevents: a replay differs"

cdc-tail --log "$L" --tx-markers --table items --table orders --to 4 > "$T/out"
check "native --tx-markers" '
st = [e.get("status") or e["op"] for e in ev]
assert st == ["BEGIN", "c", "c", "c", "END", "BEGIN", "u", "END"], st
assert ev[4]["event_count"] == 3 and ev[4]["id"] == "10:256"
assert ev[4]["data_collections"] == [{"data_collection": "public.orders", "event_count": 2},
                                     {"data_collection": "public.items", "event_count": 1}]
'

cdc-tail --log "$L" --tx-markers --op c --from 2 > "$T/out"
check "--tx-markers: none for a transaction begun before the read" '
assert [e.get("status") or e["op"] for e in ev] == ["c", "c"], ev
'

cdc-tail --log "$L" --format cloudevents --tx-markers -n 1 > "$T/out"
check "cloudevents --tx-markers" '
assert ev[0]["type"] == "io.cdc.postgresql.begin" and ev[0]["id"] == logid + "-1-begin", ev[0]
assert ev[0]["data"]["status"] == "BEGIN" and len(ev) == 2
'

expect_exit 64 cdc-tail --log "$L" --format avro
grep -q 'unknown format "avro"' "$T/err" || fail "bad --format message"
expect_exit 64 cdc-tail --log "$L" --with-key
grep -q 'needs --format debezium' "$T/err" || fail "--with-key message"
expect_exit 64 cdc-tail --log "$L" --format cloudevents --server-name x
# cdc-ack on stdin: CloudEvents by data.seq, markers passed over, Debezium
# (no seq) refused.
cdc-tail --log "$L" -c ce --format cloudevents --tx-markers --to 4 | cdc-ack --log "$L" -c ce
cdc-tail --log "$L" -c nat --tx-markers --to 5 | cdc-ack --log "$L" -c nat
cdc-log consumers --log "$L" --json > "$T/out"
check "acks from cloudevents and marker lines" '
acked = {e["name"]: e["acked_seq"] for e in ev}
assert acked == {"ce": 4, "nat": 5}, acked
'
cdc-tail --log "$L" --format debezium > "$T/dbz"
cdc-ack --log "$L" --create -c dbz
expect_exit 65 cdc-ack --log "$L" -c dbz < "$T/dbz"
echo "ok - formats"
