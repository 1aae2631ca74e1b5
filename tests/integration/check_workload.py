#!/usr/bin/env python3
"""Checks a captured log against what the workload committed: every
committed transaction (table wl) exactly once, each contiguous, in commit
order, nothing else, and replaying the events reproduces tables a, b, c.

usage: check_workload.py EVENTS.ndjson WL.tsv A.tsv B.tsv C.tsv
EVENTS: cdc-tail --schema-changes (every seq, schema events too)."""
import json
import sys

events = [json.loads(l) for l in open(sys.argv[1])]
committed = {}
for line in open(sys.argv[2]):
    n, xid = line.split()
    committed[int(xid) & 0xFFFFFFFF] = int(n)

def lsn(s):
    hi, lo = s.split("/")
    return int(hi, 16) << 32 | int(lo, 16)

assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), "seq not dense"
events = [e for e in events if e["op"] != "s"]  # described tables, no change
groups = []  # (xid, lsn) per transaction, in log order
for e in events:
    if e["op"] == "m":
        continue
    if not groups or groups[-1][0] != e["xid"] or groups[-1][2]:
        groups.append([e["xid"], lsn(e["lsn"]), False])
    if e.get("last"):
        groups[-1][2] = True
xids = [g[0] for g in groups]
dups = {x for x in xids if xids.count(x) > 1} if len(xids) < 20000 else set()
assert not dups, f"transactions twice or split: {sorted(dups)[:10]}"
assert len(set(xids)) == len(xids), "a transaction appears twice"
missing = set(committed) - set(xids)
extra = set(xids) - set(committed)
assert not missing, f"{len(missing)} committed transactions missing, e.g. {sorted(missing)[:5]}"
assert not extra, f"{len(extra)} transactions that did not commit, e.g. {sorted(extra)[:5]}"
lsns = [g[1] for g in groups]
assert all(a < b for a, b in zip(lsns, lsns[1:])), "not in commit order"

tables = {"a": {}, "b": {}, "c": {}}
for e in events:
    if e["op"] == "m":
        continue
    t = tables[e["table"]]
    if e["op"] in ("c", "u"):
        if e["op"] == "u" and e["key"] and e["key"]["id"] != e["after"]["id"]:
            t.pop(e["key"]["id"], None)
        t[e["after"]["id"]] = (e["after"]["v"], e["after"]["note"])
    elif e["op"] == "d":
        t.pop(e["key"]["id"], None)
    elif e["op"] == "t":
        t.clear()
for name, path in zip("abc", sys.argv[3:6]):
    want = {}
    for line in open(path):
        i, v, note = line.rstrip("\n").split("\t")
        want[int(i)] = (int(v), note)
    assert tables[name] == want, f"table {name} differs after replay"
print(f"{len(groups)} transactions, {len(events)} events: exactly once, in order, tables reproduced")
