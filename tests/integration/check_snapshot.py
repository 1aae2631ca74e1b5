#!/usr/bin/env python3
"""Replays a log of an initial snapshot and the stream after it, strictly
(an insert or snapshot row of a key already present, or an update or delete
of a missing key, is an error: that is a duplicate or a gap at the seam),
and compares the result with the tables' final contents.

With --incremental the rows come from incremental snapshots taken while
the stream went on (op r, "snapshot":"incremental", anywhere in the log):
a row is then an upsert, an update or delete of a row no snapshot read yet
is not an error, and what must hold is that the replay ends with exactly
the tables' contents (a chunk row the stream had overtaken, written
anyway, would leave an old value behind).

With --interleaved (cdc-capture --snapshot-jobs N) the initial
snapshot's tables were copied side by side: their rows may interleave, and
must have (the copies overlapped), each table's still tagged first and last.

usage: check_snapshot.py [--incremental | --interleaved] EVENTS.ndjson A.tsv B.tsv C.tsv"""
import json
import sys

incremental = sys.argv[1] == "--incremental"
interleaved = sys.argv[1] == "--interleaved"
if incremental or interleaved:
    del sys.argv[1]
events = [json.loads(l) for l in open(sys.argv[1])]
assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), "seq not dense"
# Each table's schema event comes before its snapshot rows; none changes rows.
events = [e for e in events if e["op"] != "s"]

def key(table, row):
    if table == "a":
        return (row["id"],)
    if table == "b":
        return (row["k1"], row["k2"])
    return (row["id"],)

def value(table, row):
    if table == "a":
        return (row["id"], row["v"], row["note"])
    if table == "b":
        return (row["k1"], row["k2"], row["v"])
    return (row["id"], row["doc"], row["num"])

tables = {"a": {}, "b": {}, "c": {}}

def lsn(s):
    hi, lo = s.split("/")
    return int(hi, 16) << 32 | int(lo, 16)

def old_key(e):
    return tuple(e["key"][c] for c in (("k1", "k2") if e["table"] == "b" else ("id",)))

if incremental:
    rows = 0
    for e in events:
        if e["op"] == "m" or e["table"] not in tables:
            continue  # messages, and tables the check does not compare
        t = tables[e["table"]]
        op = e["op"]
        if op == "r":
            assert e.get("snapshot") == "incremental", e
            t[key(e["table"], e["after"])] = value(e["table"], e["after"])
            rows += 1
        elif op == "c":
            k = key(e["table"], e["after"])
            assert k not in t, ("insert of a row already there", e)
            t[k] = value(e["table"], e["after"])
        elif op == "u":
            t.pop(old_key(e), None)
            t[key(e["table"], e["after"])] = value(e["table"], e["after"])
        elif op == "d":
            t.pop(old_key(e), None)
        else:
            raise AssertionError(("unexpected op", e))
    snap = [e for e in events if e["op"] == "r"]
    streamed = [e for e in events if e["op"] not in ("r", "m")]
# The initial snapshot: one transaction at the start of the log, each
# table's rows together, in name order (or side by side: --interleaved),
# the first tagged "first" and the last "last".
snap = [] if not incremental else snap
current = None
seen = []
open_tables = set()
switches = 0
for e in ([] if incremental else events):
    if e["op"] != "r":
        continue
    tag = e.get("snapshot")
    assert tag in (None, "first", "last", "only"), e
    if snap and snap[-1]["table"] != e["table"]:
        switches += 1
    if interleaved:
        if tag in ("first", "only"):
            assert e["table"] not in seen, ("a second first row", e)
            seen.append(e["table"])
            open_tables.add(e["table"])
        assert e["table"] in open_tables, ("row outside its table's run", e)
        if tag in ("last", "only"):
            open_tables.discard(e["table"])
        snap.append(e)
        continue
    if tag in ("first", "only"):
        assert current is None, ("first row inside", current, e)
        current = e["table"]
        seen.append(current)
    assert current == e["table"], ("row outside its table's run", e)
    if tag in ("last", "only"):
        current = None
    snap.append(e)
assert current is None and not open_tables, "a table's last row is not tagged"
if interleaved:
    assert switches > len(seen), f"the tables were not copied side by side ({switches} switches)"
    seen.sort()
if not incremental:
    seen_ok = sorted(seen) == seen and set(seen) == {"a", "b", "c"}
    assert seen_ok, seen
    assert events[:len(snap)] == snap, "the snapshot is not the head of the log"
    assert snap[-1].get("last") and not any(e.get("last") for e in snap[:-1]), \
        "the snapshot is not one transaction"
    assert len({(e["lsn"], e["xid"]) for e in snap}) == 1, "snapshot lsn/xid differ"
    snap_lsn = snap[0]["lsn"]
    streamed = events[len(snap):]
    assert all(lsn(e["lsn"]) >= lsn(snap_lsn) for e in streamed), "stream before snapshot"
for e in ([] if incremental else events):
    if e["op"] == "m":
        continue
    t = tables[e["table"]]
    op = e["op"]
    if op in ("r", "c"):
        k = key(e["table"], e["after"])
        assert k not in t, ("duplicate row", e)
        t[k] = value(e["table"], e["after"])
    elif op == "u":
        old = old_key(e)
        assert old in t, ("update of a missing row", e)
        del t[old]
        t[key(e["table"], e["after"])] = value(e["table"], e["after"])
    elif op == "d":
        old = old_key(e)
        assert old in t, ("delete of a missing row", e)
        del t[old]
    else:
        raise AssertionError(("unexpected op", e))

def sql(path, table):
    out = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if table == "a":
            row = (int(f[0]), int(f[1]), f[2])
        elif table == "b":
            row = (int(f[0]), f[1], int(f[2]))
        else:
            row = (int(f[0]), json.loads(f[1]), f[2])
        out[row[:2] if table == "b" else row[:1]] = row
    return out

for name, path in zip("abc", sys.argv[2:5]):
    want = sql(path, name)
    got = tables[name]
    if got != want:
        missing = [k for k in want if k not in got][:5]
        extra = [k for k in got if k not in want][:5]
        diff = [k for k in want if k in got and got[k] != want[k]][:3]
        raise AssertionError(f"table {name}: {len(got)} rows replayed, {len(want)} "
                             f"in SQL; missing {missing} extra {extra} differ "
                             f"{[(got[k], want[k]) for k in diff]}")
print(f"replayed {len(snap)} snapshot and {len(streamed)} streamed events: "
      + ", ".join(f"{n}={len(tables[n])}" for n in "abc"))
