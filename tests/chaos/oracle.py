#!/usr/bin/env python3
"""The chaos harness's oracle (see run.sh for what it is given).

usage: oracle.py DIR REDIS_SOCKET E2E_DIR

DIR holds live.ndjson (the retained log), backup.N.ndjson (each backup's
restored log), wl.tsv (what the workload committed: n, xid), a.tsv b.tsv
c.tsv (the tables), test_decoding.txt (a test_decoding slot's changes),
nats.txt (cdc-nats-probe dump), handled.txt (the pipeline's seqs) and
actions.txt (what the harness did). Prints the figures; exits 1 on any
loss, duplicate or difference."""
import glob
import json
import os
import re
import sys

d, sock = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from redis_model import Redis  # noqa: E402

problems = []


def problem(msg):
    problems.append(msg)
    print("PROBLEM: " + msg)


def load(path):
    return [json.loads(l) for l in open(path)]


def lsn(s):
    hi, lo = s.split("/")
    return int(hi, 16) << 32 | int(lo, 16)


# --- the log: the backups' events and the retained ones agree ------------
by_seq = {}
sources = [("live", load(os.path.join(d, "live.ndjson")))]
for p in sorted(glob.glob(os.path.join(d, "backup.*.ndjson")),
                key=lambda p: int(p.split(".")[-2])):
    sources.append((os.path.basename(p), load(p)))
for name, evs in sources:
    seqs = [e["seq"] for e in evs]
    if seqs != list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False:
        problem(f"{name}: seqs not dense")
    for e in evs:
        old = by_seq.setdefault(e["seq"], e)
        if old != e:
            problem(f"{name}: seq {e['seq']} differs from another copy")
backups = [s for s in sources if s[0] != "live"]
# A backup restores the log as it was (from its earliest retained event):
# each one's events are the log's for the same seqs (checked above), and
# together with the retained log they cover it from seq 1.
events = [by_seq[s] for s in sorted(by_seq)]
if [e["seq"] for e in events] != list(range(1, len(events) + 1)):
    problem("the backups and the retained log leave a gap")

# --- every committed transaction once, in commit order ------------------
committed = {}
for line in open(os.path.join(d, "wl.tsv")):
    n, xid = line.split()
    committed[int(xid) & 0xFFFFFFFF] = int(n)
txns = []  # [xid, lsn, changes rows] in log order
open_txn = False
for e in events:
    if e["op"] == "m" and e["xid"] == 0:
        continue  # a lone message is no transaction of the workload's
    if not open_txn or txns[-1][0] != e["xid"] or txns[-1][1] != e["lsn"]:
        txns.append([e["xid"], e["lsn"], False])
    if e["op"] != "m":
        txns[-1][2] = True
    open_txn = not e.get("last")
# Transactions of messages alone (the harness's "end") are not the
# workload's.
xids = [t[0] for t in txns if t[0] != 0 and t[2]]
dups = len(xids) - len(set(xids))
missing = set(committed) - set(xids)
extra = set(xids) - set(committed)
if dups:
    problem(f"{dups} transactions twice in the log")
if missing:
    problem(f"{len(missing)} committed transactions missing, e.g. {sorted(missing)[:5]}")
if extra:
    problem(f"{len(extra)} transactions that did not commit, e.g. {sorted(extra)[:5]}")
lsns = [lsn(t[1]) for t in txns]
if any(a >= b for a, b in zip(lsns, lsns[1:])):
    problem("transactions out of commit order")

# --- against the WAL: test_decoding's transactions that touched a, b, c --
peer = []
cur, touched = None, False
for line in open(os.path.join(d, "test_decoding.txt")):
    line = line.rstrip("\n")
    m = re.match(r"BEGIN (\d+)$", line)
    if m:
        cur, touched = int(m.group(1)), False
        continue
    if re.match(r"table public\.[abc]: ", line):
        touched = True
        continue
    m = re.match(r"COMMIT (\d+)", line)
    if m and cur is not None:
        if touched:
            peer.append(cur)
        cur = None
if peer != xids:
    first = next((i for i, (a, b) in enumerate(zip(peer, xids)) if a != b),
                 min(len(peer), len(xids)))
    problem(f"test_decoding's {len(peer)} transactions differ from the log's "
            f"{len(xids)} from #{first}: {peer[first:first + 3]} vs {xids[first:first + 3]}")

# --- replaying the log reproduces the tables -----------------------------
tables = {"a": {}, "b": {}, "c": {}}
for e in events:
    if e["op"] not in "cudtr" or e.get("table") not in tables:
        continue
    t = tables[e["table"]]
    op = e["op"]
    if op == "t":
        t.clear()
    elif op == "d":
        t.pop(e["key"]["id"], None)
    else:
        a = e["after"]
        if op == "u" and e["key"]["id"] != a["id"]:
            t.pop(e["key"]["id"], None)
        old = t.get(a["id"], (None, None))
        note = old[1] if "note" in e.get("unchanged", []) else a["note"]
        t[a["id"]] = (a["v"], note)
want = {}
for name in tables:
    rows = {}
    for line in open(os.path.join(d, name + ".tsv")):
        i, v, note = line.rstrip("\n").split("\t")
        rows[int(i)] = (int(v), note)
    want[name] = rows
    if tables[name] != want[name]:
        diff = [k for k in set(rows) | set(tables[name]) if rows.get(k) != tables[name].get(k)]
        problem(f"replaying the log: table {name} differs at {len(diff)} rows, e.g. {sorted(diff)[:5]}")

# --- the Redis mirror equals every table ---------------------------------
r = Redis(sock)
for name, rows in want.items():
    keys = set()
    cursor = "0"
    while True:
        cursor, batch = r.cmd("SCAN", cursor, "MATCH", f"cdc:public.{name}:*", "COUNT", 1000)
        keys.update(batch)
        if cursor == "0":
            break
    want_keys = {f"cdc:public.{name}:[{i}]" for i in rows}
    if keys != want_keys:
        problem(f"Redis hash mirror of {name}: {len(keys - want_keys)} extra, "
                f"{len(want_keys - keys)} missing keys")
    for i, (v, note) in rows.items():
        h = r.cmd("HGETALL", f"cdc:public.{name}:[{i}]") or []
        got = dict(zip(h[::2], h[1::2]))
        if got.get("v") != str(v) or got.get("note") != note:
            problem(f"Redis hash cdc:public.{name}:[{i}] differs")
            break
# The streams: each event once (the entry id is its seq).
stream_dups = 0
for name in tables:
    entries = r.cmd("XRANGE", f"chaos:public.{name}", "-", "+") or []
    seqs = [int(e[0].split("-")[0]) for e in entries]
    stream_dups += len(seqs) - len(set(seqs))
    expect = {e["seq"] for e in events if e.get("table") == name and e["op"] in "cudtr"}
    extra_seqs = set(seqs) - expect - {e["seq"] for e in events if e["op"] == "s"}
    if not expect <= set(seqs) or extra_seqs:
        problem(f"Redis stream of {name}: {len(expect - set(seqs))} missing, {len(extra_seqs)} extra")
if stream_dups:
    problem(f"{stream_dups} events twice in the Redis streams")

# --- the NATS stream holds each event once, in order ---------------------
nats = [int(l.split()[2]) for l in open(os.path.join(d, "nats.txt")) if l.strip()]
nats_dups = len(nats) - len(set(nats))
if nats != sorted(set(nats)):
    problem(f"the NATS stream is not each seq once, in order ({nats_dups} repeats)")
if set(nats) != set(by_seq):
    problem(f"the NATS stream: {len(set(by_seq) - set(nats))} events missing, "
            f"{len(set(nats) - set(by_seq))} extra")

# --- the pipeline saw every event (at least once) ------------------------
handled = [int(l) for l in open(os.path.join(d, "handled.txt")) if l.strip()]
expect = {e["seq"] for e in events if e["op"] != "s"}
if not expect <= set(handled):
    problem(f"the pipeline never handled {len(expect - set(handled))} events")
repeats = len(handled) - len(set(handled))

actions = dict(l.split() for l in open(os.path.join(d, "actions.txt")) if l.strip())
kills = sum(int(v) for k, v in actions.items() if k.startswith(("kill", "term")))
restarts = sum(int(v) for k, v in actions.items() if "restart" in k or k == "nats_node_kill")
print(f"transactions {len(xids)}, events {len(events)}, backups {len(backups)} "
      f"(all verified and restored)")
print("actions: " + ", ".join(f"{k} {v}" for k, v in sorted(actions.items())))
print(f"kills {kills}, server restarts {restarts}")
print(f"transactions lost: {len(missing)}; duplicated in the log: {dups}; "
      f"in the Redis streams: {stream_dups}; in NATS: {nats_dups}; "
      f"pipeline repeats (at-least-once): {repeats}")
if problems:
    print(f"{len(problems)} problems")
    sys.exit(1)
print("ok: no loss, no duplicate, every copy agrees")
