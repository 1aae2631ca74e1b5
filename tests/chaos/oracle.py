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
from array import array

d, sock = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from redis_model import Redis  # noqa: E402

# A long run's log holds millions of events and each backup a copy of much
# of it: nothing here holds all events at once. The copies are compared by
# a digest per seq, then one pass in seq order over the merged copies
# gathers what every check needs, and per-seq facts live in flat arrays.
problems = []


def problem(msg):
    problems.append(msg)
    print("PROBLEM: " + msg)


def lsn(s):
    hi, lo = s.split("/")
    return int(hi, 16) << 32 | int(lo, 16)


def seq_of(line):
    if line.startswith('{"seq":'):
        return int(line[7:line.index(",", 7)])
    return json.loads(line)["seq"]


class Flat:
    """A per-seq array (seq 1..n) that grows as seqs are seen."""

    def __init__(self, code, fill=0):
        self.a, self.fill = array(code), fill

    def _grow(self, seq):
        if seq >= len(self.a):
            self.a.extend([self.fill] * (seq + 1 - len(self.a) + (1 << 16)))

    def __getitem__(self, seq):
        return self.a[seq] if seq < len(self.a) else self.fill

    def __setitem__(self, seq, v):
        self._grow(seq)
        self.a[seq] = v


# --- the log: the backups' events and the retained ones agree ------------
sources = [os.path.join(d, "live.ndjson")]
sources += sorted(glob.glob(os.path.join(d, "backup.*.ndjson")),
                  key=lambda p: int(p.split(".")[-2]))
digest = Flat("q")
have = Flat("b")
spans = []  # (first, last, path) of each copy
for path in sources:
    name, first, prev = os.path.basename(path), None, None
    with open(path) as f:
        for line in f:
            seq = seq_of(line)
            if prev is not None and seq != prev + 1:
                problem(f"{name}: seqs not dense at {seq} (after {prev})")
                prev = None
            first = seq if first is None else first
            prev = seq
            h = hash(line)
            if have[seq]:
                if digest[seq] != h:
                    problem(f"{name}: seq {seq} differs from another copy")
            else:
                have[seq], digest[seq] = 1, h
    if first is not None:
        spans.append((first, prev, path))
backups = len(sources) - 1
n_events = 0
while have[n_events + 1]:
    n_events += 1
if any(have[s] for s in range(n_events + 1, len(have.a))):
    problem("the backups and the retained log leave a gap")
del digest


def events():
    """Every event, in seq order, from the copies that cover it."""
    want = 1
    for first, last, path in sorted(spans):
        if last < want:
            continue
        with open(path) as f:
            for line in f:
                seq = seq_of(line)
                if seq == want:
                    yield json.loads(line)
                    want += 1
                if want > n_events:
                    return


# One pass: transactions, the tables replayed, and the kind of each seq
# (0 none, 1-3 a change of a, b, c, 4 a schema event, 5 anything else).
KIND = {"a": 1, "b": 2, "c": 3}
kind = Flat("b")
txns = []  # [xid, lsn, has changes] in log order
open_txn = False
tables = {"a": {}, "b": {}, "c": {}}
for e in events():
    op = e["op"]
    if op == "s":
        kind[e["seq"]] = 4
    elif op in "cudtr" and e.get("table") in tables:
        kind[e["seq"]] = KIND[e["table"]]
    else:
        kind[e["seq"]] = 5
    if not (op == "m" and e["xid"] == 0):  # a lone message: no transaction
        if not open_txn or txns[-1][0] != e["xid"] or txns[-1][1] != e["lsn"]:
            txns.append([e["xid"], e["lsn"], False])
        if op != "m":
            txns[-1][2] = True
        open_txn = not e.get("last")
    if op not in "cudtr" or e.get("table") not in tables:
        continue
    t = tables[e["table"]]
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
kind[n_events + 1] = 0
ka = kind.a  # indexed directly in the loops over every seq below

# --- every committed transaction once, in commit order ------------------
committed = {}
for line in open(os.path.join(d, "wl.tsv")):
    n, xid = line.split()
    committed[int(xid) & 0xFFFFFFFF] = int(n)
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
del lsns, txns

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
    keys = r.scan(f"cdc:public.{name}:*")
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
# The streams: each event once (the entry id is its seq), read in pages.
stream_dups = 0
for name in tables:
    seen = bytearray(n_events + 2)
    extra_seqs = 0
    start = "-"
    while True:
        entries = r.cmd("XRANGE", f"chaos:public.{name}", start, "+", "COUNT", 10000) or []
        for entry in entries:
            seq = int(entry[0].split("-")[0])
            if seq > n_events or ka[seq] not in (KIND[name], 4):
                extra_seqs += 1
            elif seen[seq]:
                stream_dups += 1
            else:
                seen[seq] = 1
        if len(entries) < 10000:
            break
        start = "(" + entries[-1][0]
    lost = sum(1 for s in range(1, n_events + 1) if ka[s] == KIND[name] and not seen[s])
    if lost or extra_seqs:
        problem(f"Redis stream of {name}: {lost} missing, {extra_seqs} extra")
if stream_dups:
    problem(f"{stream_dups} events twice in the Redis streams")

# --- the NATS stream holds each event once, in order ---------------------
in_nats = bytearray(n_events + 2)
nats_dups = nats_extra = 0
prev, ordered = 0, True
with open(os.path.join(d, "nats.txt")) as f:
    for line in f:
        if not line.strip():
            continue
        seq = int(line.split()[2])
        ordered = ordered and seq > prev
        prev = max(prev, seq)
        if seq < 1 or seq > n_events:
            nats_extra += 1
        elif in_nats[seq]:
            nats_dups += 1
        else:
            in_nats[seq] = 1
if not ordered:
    problem(f"the NATS stream is not each seq once, in order ({nats_dups} repeats)")
nats_missing = n_events - sum(in_nats)
if nats_missing or nats_extra:
    problem(f"the NATS stream: {nats_missing} events missing, {nats_extra} extra")
del in_nats

# --- the pipeline saw every event (at least once) ------------------------
handled = bytearray(n_events + 2)
repeats = 0
with open(os.path.join(d, "handled.txt")) as f:
    for line in f:
        if not line.strip():
            continue
        seq = int(line)
        if 1 <= seq <= n_events:
            repeats += handled[seq]
            handled[seq] = 1
never = sum(1 for s in range(1, n_events + 1) if ka[s] != 4 and not handled[s])
if never:
    problem(f"the pipeline never handled {never} events")

actions = dict(l.split() for l in open(os.path.join(d, "actions.txt")) if l.strip())
kills = sum(int(v) for k, v in actions.items() if k.startswith(("kill", "term")))
restarts = sum(int(v) for k, v in actions.items() if "restart" in k or k == "nats_node_kill")
print(f"transactions {len(xids)}, events {n_events}, backups {backups} "
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
