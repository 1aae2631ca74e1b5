#!/usr/bin/env python3
"""A fixed workload for the upgrade fixtures, as cdc-log import reads it.

workload.py FIRST LAST: transactions FIRST..LAST as NDJSON, one event a
line: every op (a schema event first, inserts, updates with an unchanged
TOAST column, deletes, a truncate, messages), NULL and JSON null, escapes
and UTF-8, and a 40 KB value in transaction 45. The same numbers give the
same bytes in every release.
"""
import json, sys
first, last = int(sys.argv[1]), int(sys.argv[2])
def ev(n, **kw):
    e = {"lsn": "0/%X" % (0x2000000 + n * 0x400), "xid": 1000 + n,
         "ts": "2026-11-29T07:%02d:%02d.%06dZ" % (n // 60, n % 60, n * 1001)}
    e.update(kw)
    return json.dumps(e, ensure_ascii=False, separators=(",", ":"))
def row(n, op, schema, table, key, after, **kw):
    return ev(n, op=op, schema=schema, table=table, key=key, before=None,
              after=after, **kw)
cols = [{"name": "id", "type": "integer", "type_oid": 23, "key": True},
        {"name": "status", "type": "text", "type_oid": 25},
        {"name": "total", "type": "numeric(10,2)", "type_oid": 1700},
        {"name": "note", "type": "text", "type_oid": 25}]
for n in range(first, last + 1):
    out = []
    if n == 1:
        out.append(ev(n, op="s", schema="public", table="orders", key=None,
                      before=None, after=None, columns=cols))
    if n % 10 == 7:
        out.append(ev(n, op="m", prefix="app", content="tick %d" % n,
                      transactional=n % 20 == 7))
    for k in range(1 + n % 3):
        i = n * 3 + k
        note = ["plain", "a\nb\t\"q\"", "ü€😀", None][i % 4]
        out.append(row(n, "c", "public", "orders", {"id": i},
                       {"id": i, "status": "new", "total": "%d.%02d" % (i, i % 100),
                        "note": note}))
    if n > 2:
        j = (n - 2) * 3
        out.append(row(n, "u", "public", "orders", {"id": j},
                       {"id": j, "status": "paid", "note": "n%d" % n},
                       unchanged=["total"]))
    if n % 5 == 0:
        out.append(row(n, "d", "public", "orders", {"id": n * 3 - 10}, None))
    if n % 4 == 1:
        doc = {"k": [n, None, {"d": "x" * (n % 7)}]}
        out.append(row(n, "c", "shop", "items", {"sku": "s%d" % n, "n": n},
                       {"sku": "s%d" % n, "n": n, "qty": n % 9, "doc": None if n % 8 == 1 else doc},
                       **({"json_null": ["/after/doc"]} if n % 8 == 1 else {})))
    if n == 30:
        out.append(ev(n, op="t", schema="shop", table="items", key=None,
                      before=None, after=None,
                      options={"cascade": False, "restart_identity": False}))
    if n == 45:
        out.append(row(n, "c", "public", "orders", {"id": 999999},
                       {"id": 999999, "status": "big", "total": "0.00",
                        "note": "".join("%05d " % x for x in range(6700))}))
    print("\n".join(out))
