#!/usr/bin/env python3
"""Workload of lone (non-transactional) logical messages interleaved with
transactions, for the message position test.

  msg_workload.py gen SESSION COUNT SEED   prints one session's SQL script
  msg_workload.py check EVENTS.ndjson WL.tsv SESSIONS COUNT SEED

Each committed transaction inserts its number into table r, emits a
transactional message, and records (n, xid) in table wl (the oracle for
what committed). Lone messages are emitted on their own, inside
transactions (where they are still not part of them), just before a commit
(so the commit record often starts where the message's record ends) and
inside transactions that roll back. The checker wants every committed
transaction exactly once, whole and in commit order, every lone message
exactly once, and LSNs that never go back."""
import json
import random
import sys


def script(session, count, seed):
    rnd = random.Random(seed * 1000 + session)
    out = ["\\set ON_ERROR_STOP 1"]
    nts = []
    for k in range(count):
        n = session * 1000000 + k
        nt = f"s{session}-{k}"
        nap = f"SELECT pg_sleep({rnd.uniform(0.0, 0.25):.3f});"
        body = (f"INSERT INTO r VALUES ({n}); "
                f"SELECT pg_logical_emit_message(true, 'tx', '{n}'); ")
        wl = f"INSERT INTO wl VALUES ({n}, txid_current()); "
        emit = f"SELECT pg_logical_emit_message(false, 'nt', '{nt}'); "
        p = rnd.random()
        if p < 0.35:  # a lone message, then the commit after a pause
            out.append("BEGIN; " + body + wl + emit + nap + " COMMIT;")
            nts.append(nt)
        elif p < 0.55:  # a lone message on its own
            out.append(emit + nap)
            nts.append(nt)
        elif p < 0.65:  # a lone message inside a transaction that rolls back
            out.append("BEGIN; " + body + emit + nap + " ROLLBACK;")
            nts.append(nt)
        elif p < 0.75:  # a lone message in the middle of a transaction
            out.append("BEGIN; " + body + emit + nap + " " + wl + "COMMIT;")
            nts.append(nt)
        else:
            out.append("BEGIN; " + body + wl + "COMMIT; " + nap)
    return out, nts


def lsn(s):
    hi, lo = s.split("/")
    return int(hi, 16) << 32 | int(lo, 16)


def check(events_path, wl_path, sessions, count, seed):
    events = [json.loads(l) for l in open(events_path)]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), \
        "seq not dense"
    events = [e for e in events if e["op"] != "s"]  # tables described
    committed = {}
    for line in open(wl_path):
        n, xid = line.split()
        committed[int(xid) & 0xFFFFFFFF] = int(n)
    want_nt = []
    for s in range(1, sessions + 1):
        want_nt += script(s, count, seed)[1]
    units = []  # [kind, xid, lsn, events]
    for e in events:
        lone = e["op"] == "m" and e["xid"] == 0
        if lone or not units or units[-1][0] != "txn" or \
                units[-1][1] != e["xid"] or units[-1][4]:
            units.append(["nt" if lone else "txn", e["xid"], lsn(e["lsn"]),
                          [], False])
        units[-1][3].append(e)
        if e.get("last"):
            units[-1][4] = True
    assert all(u[4] for u in units), "a unit without its last event"
    lsns = [u[2] for u in units]
    bad = [i for i in range(1, len(lsns)) if lsns[i] < lsns[i - 1]]
    assert not bad, f"LSN goes back at unit {bad[0]}"
    txns = [u for u in units if u[0] == "txn"]
    xids = [u[1] for u in txns]
    assert len(set(xids)) == len(xids), \
        f"transactions twice: {sorted({x for x in xids if xids.count(x) > 1})[:5]}"
    t_lsns = [u[2] for u in txns]
    assert all(a < b for a, b in zip(t_lsns, t_lsns[1:])), "not in commit order"
    missing = set(committed) - set(xids)
    extra = set(xids) - set(committed)
    assert not missing, (f"{len(missing)} committed transactions missing, "
                         f"e.g. n={sorted(committed[x] for x in missing)[:5]}")
    assert not extra, f"{len(extra)} transactions that did not commit"
    for u in txns:
        n = committed[u[1]]
        ins = [e for e in u[3] if e["op"] == "c" and e["after"]["id"] == n]
        msg = [e for e in u[3] if e["op"] == "m" and e["content"] == str(n)]
        assert len(ins) == 1 and len(msg) == 1, f"transaction {n} incomplete"
    got_nt = [u[3][0]["content"] for u in units if u[0] == "nt"]
    seen = {}
    for c in got_nt:
        seen[c] = seen.get(c, 0) + 1
    twice = [c for c, k in seen.items() if k > 1]
    assert not twice, f"lone messages twice: {twice[:5]}"
    lost = set(want_nt) - set(seen)
    assert not lost, f"{len(lost)} lone messages missing, e.g. {sorted(lost)[:5]}"
    same = sum(1 for a, b in zip(units, units[1:])
               if a[0] == "nt" and b[0] == "txn" and a[2] == b[2])
    print(f"{len(txns)} transactions, {len(got_nt)} lone messages "
          f"({same} followed by a commit at the same LSN): exactly once, "
          f"in order")


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        print("\n".join(script(*map(int, sys.argv[2:5]))[0]))
    else:
        check(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7]))
