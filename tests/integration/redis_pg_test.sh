#!/usr/bin/env bash
# End to end: cdc-capture and cdc-redis --mode hash -f under a random
# workload on PostgreSQL (inserts, updates, primary-key changes, updates
# that leave a TOASTed value unchanged, deletes, a truncate; a composite
# key; NULLs), with cdc-redis SIGKILLed and restarted mid-run. Then every
# row of every table equals its Redis hash, and no other row hash exists.
source "$(dirname "$0")/lib.sh"
source "$HERE/../../scripts/redis.sh"
pg_start "$T"
as_least_privilege
redis_start "$T"
at_exit redis_stop
psql_q <<'SQL'
CREATE TABLE t1 (id int PRIMARY KEY, v int, note text, amount numeric, ok bool, doc jsonb);
CREATE TABLE t2 (k text, n int, qty int, PRIMARY KEY (k, n));
CREATE TABLE t3 (id int PRIMARY KEY, small int, big text);
ALTER TABLE t3 ALTER COLUMN big SET STORAGE EXTERNAL;
SQL
capture --exit-when-idle  # slot and publication exist before any change
capture_bg
sink() { cdc-redis --log "$T/log" -c mirror --redis "$REDIS_URL" --mode hash -f --batch 50 -q 2>>"$T/redis.err" & SINK=$!; }
sink

python3 - > "$T/wl.sql" <<'PY'
import random
rnd = random.Random(11)
live = {"t1": [], "t2": [], "t3": []}
nxt = [1]
def new_id():
    nxt[0] += 1
    return nxt[0]
def q(s):
    return "'" + s.replace("'", "''") + "'" if s is not None else "NULL"
out = []
for t in range(400):
    out.append("BEGIN;")
    for _ in range(rnd.randint(1, 8)):
        tab = rnd.choice(["t1", "t2", "t3"])
        ids = live[tab]
        r = rnd.random()
        if r < 0.45 or not ids:
            i = new_id()
            if tab == "t1":
                out.append("INSERT INTO t1 VALUES (%d, %d, %s, %s, %s, %s);" % (
                    i, rnd.randint(-5, 5), q(rnd.choice([None, "x", "it's", "é ü"])),
                    rnd.choice(["NULL", "12.50", "0.001", "-3"]),
                    rnd.choice(["NULL", "true", "false"]),
                    rnd.choice(["NULL", "'{\"a\": [1, null]}'", "'null'", "'\"s\"'"])))
                ids.append(i)
            elif tab == "t2":
                k = rnd.choice(["a", "b:c", "d]e", "x,y"])
                out.append("INSERT INTO t2 VALUES (%s, %d, %d);" % (q(k), i, rnd.randint(0, 9)))
                ids.append((k, i))
            else:
                out.append("INSERT INTO t3 VALUES (%d, %d, repeat(%s, %d));" % (
                    i, rnd.randint(0, 9), q(rnd.choice("abc")), rnd.randint(3000, 9000)))
                ids.append(i)
        elif r < 0.6:
            x = ids.pop(rnd.randrange(len(ids)))
            where = "k = %s AND n = %d" % (q(x[0]), x[1]) if tab == "t2" else "id = %d" % x
            out.append("DELETE FROM %s WHERE %s;" % (tab, where))
        elif r < 0.7:  # primary-key change
            j = rnd.randrange(len(ids))
            x = ids[j]
            i = new_id()
            if tab == "t2":
                out.append("UPDATE t2 SET n = %d WHERE k = %s AND n = %d;" % (i, q(x[0]), x[1]))
                ids[j] = (x[0], i)
            else:
                out.append("UPDATE %s SET id = %d WHERE id = %d;" % (tab, i, x))
                ids[j] = i
        else:
            x = rnd.choice(ids)
            if tab == "t1":
                out.append("UPDATE t1 SET v = v + 1, note = %s, doc = %s WHERE id = %d;" % (
                    q(rnd.choice([None, "u"])), rnd.choice(["NULL", "'[1, 2]'"]), x))
            elif tab == "t2":
                out.append("UPDATE t2 SET qty = qty + 1 WHERE k = %s AND n = %d;" % (q(x[0]), x[1]))
            else:  # big is TOASTed and unchanged
                out.append("UPDATE t3 SET small = small + 1 WHERE id = %d;" % x)
    if t == 200:
        out.append("TRUNCATE t2;")
        live["t2"] = []
    out.append("COMMIT;")
print("\n".join(out))
PY
psql_q -f "$T/wl.sql" >/dev/null &
wl=$!
sleep 1
kill -9 "$SINK" 2>/dev/null || true; wait "$SINK" 2>/dev/null || true
sink
wait "$wl" || fail "workload failed"
wait_marker done
last=$(cdc-tail --log "$T/log" --schema-changes | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
for _ in $(seq 300); do
  [ "$(rcli get cdc:__cdc_applied:mirror)" = "$last" ] && break
  sleep 0.1
done
[ "$(rcli get cdc:__cdc_applied:mirror)" = "$last" ] || { cat "$T/redis.err" >&2; fail "applied $(rcli get cdc:__cdc_applied:mirror) of $last"; }
kill -TERM "$SINK"; wait "$SINK" || fail "cdc-redis did not exit 0 on SIGTERM"
kill -TERM "$CAP"; wait "$CAP" || true
[ "$(cdc-tail --log "$T/log" --schema-changes -c mirror | wc -l)" = 0 ] || fail "not acked to the end"
grep -q '"unchanged":\["big"\]' <(cdc-tail --log "$T/log" --schema-changes) || fail "the workload had no TOAST-unchanged update"
grep -q '"op":"t"' <(cdc-tail --log "$T/log" --schema-changes) || fail "no truncate"

for t in t1 t2 t3; do psql_q -c "SELECT coalesce(json_agg(x), '[]') FROM $t x" > "$T/$t.json"; done
python3 - "$REDIS_SOCK" "$T" "$HERE/../e2e" <<'PY' || fail "Redis differs from PostgreSQL"
import json, sys
from decimal import Decimal
sys.path.insert(0, sys.argv[3])
from redis_model import Redis
r = Redis(sys.argv[1])
keys = r.scan("cdc:public.*")
types = {"t1": {"id": int, "v": int, "note": str, "amount": Decimal, "ok": "bool", "doc": "json"},
         "t2": {"k": str, "n": int, "qty": int},
         "t3": {"id": int, "small": int, "big": str}}
pk = {"t1": ["id"], "t2": ["k", "n"], "t3": ["id"]}
def norm(kind, v, from_redis):
    if v is None:
        return None
    if kind == "bool":
        return v == "true" if from_redis else v
    if kind == "json":  # a JSON string loses its quotes (cdc-redis(1), BUGS)
        if not from_redis:
            return v
        try:
            return json.loads(v)
        except ValueError:
            return v
    return kind(v)
bad = 0
want_keys = set()
for t in types:
    rows = json.load(open("%s/%s.json" % (sys.argv[2], t)), parse_float=Decimal)
    for row in rows:
        key = "cdc:public.%s:[%s]" % (t, ",".join(json.dumps(row[c], ensure_ascii=False, separators=(",", ":")) for c in pk[t]))
        want_keys.add(key)
        flat = r.cmd("HGETALL", key) or []
        got = dict(zip(flat[::2], flat[1::2]))
        for c, kind in types[t].items():
            pv = row[c]
            a = norm(kind, pv, False)
            b = norm(kind, got.get(c), True)
            if a != b:
                bad += 1
                if bad < 10:
                    print("MISMATCH %s.%s: postgres %r redis %r" % (key, c, a, b))
        extra = set(got) - set(types[t])
        if extra:
            bad += 1
            print("EXTRA fields %s: %s" % (key, extra))
for k in sorted(keys - want_keys)[:10]:
    bad += 1
    print("EXTRA row hash %s" % k)
if bad:
    sys.exit(1)
print("redis matches postgres: %d rows in 3 tables" % len(want_keys))
PY
ok "PostgreSQL to Redis: every row equals its hash, no other row hash"
