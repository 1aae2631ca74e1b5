#!/usr/bin/env python3
"""Workloads and the oracle for the cdc-redis tests.

  redis_model.py gen SEED TXNS [ROWS]   NDJSON for `cdc-log import`: inserts,
      updates (some with unchanged TOAST columns, some changing the primary
      key), deletes, truncates, NULLs and JSON nulls, over three tables (one
      with a composite key), several tables per transaction.
  redis_model.py check MODE SOCKET PREFIX CONSUMER < events
      Rebuilds from the events (`cdc-tail` output) what Redis must hold and
      compares every key and field (hash mode) or every stream entry (stream
      mode) with the server on SOCKET. Prints one line; exits 1 on a
      difference.
"""
import json
import random
import socket
import sys


# --- a minimal RESP2 client (the tests must not depend on redis-py) --------
class Redis:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf = b""

    def cmd(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        return self.read()

    def scan(self, pattern):
        """Every key matching `pattern` (SCAN to the end)."""
        keys, cur = set(), "0"
        while True:
            cur, batch = self.cmd("SCAN", cur, "MATCH", pattern, "COUNT", 1000)
            keys.update(batch)
            if cur == "0":
                return keys

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 20)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v.decode()
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("bad reply %r" % line)


# --- JSON that keeps numbers' own text, as the log does ---------------------
class Raw(str):
    pass


def loads(line):
    return json.loads(line, parse_float=Raw, parse_int=Raw)


def dump(v):
    if isinstance(v, Raw):
        return str(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    return "{" + ",".join(dump(k) + ":" + dump(x) for k, x in v.items()) + "}"


def field(v):
    return v if isinstance(v, str) and not isinstance(v, Raw) else dump(v)


def esc(name):
    """A schema or table name as cdc-redis writes it into keys."""
    out = bytearray()
    for b in name.encode():
        if b <= 0x20 or b == 0x7f or chr(b) in "%.:*?[]\\{}\"'":
            out += b"%%%02X" % b
        else:
            out.append(b)
    return out.decode()


def table_part(ev):
    return esc(ev["schema"]) + "." + esc(ev["table"])


def rebuild_hash(events, prefix):
    rows = {}     # row key -> {field: value}
    members = {}  # membership set key -> set of row keys
    for ev in events:
        op = ev["op"]
        if op in ("m", "s"):
            continue
        table = table_part(ev)
        mkey = prefix + "__cdc_rows:" + table
        mem = members.setdefault(mkey, set())
        if op == "t":
            for k in mem:
                rows.pop(k, None)
            mem.clear()
            continue
        key = ev.get("key")
        if not key:
            continue
        old = prefix + table + ":[" + ",".join(dump(v) for v in key.values()) + "]"
        if op == "d":
            rows.pop(old, None)
            mem.discard(old)
            continue
        after = ev["after"]
        unchanged = ev.get("unchanged") or []
        jnull = {p[len("/after/"):] for p in ev.get("json_null") or []
                 if p.startswith("/after/") and "/" not in p[len("/after/"):]}
        new = prefix + table + ":[" + ",".join(
            dump(after[k] if k in after else v) for k, v in key.items()) + "]"
        if new != old:
            if unchanged and old in rows:
                rows[new] = dict(rows[old])
            rows.pop(old, None)
            mem.discard(old)
        row = rows.setdefault(new, {})
        for c, v in after.items():
            if v is None and c not in jnull:
                row.pop(c, None)
            else:
                row[c] = "null" if v is None else field(v)
        if not row:
            del rows[new]
        mem.add(new)
    return rows, {k: v for k, v in members.items() if v}


def check(mode, sock, prefix, consumer):
    events = [loads(l) for l in sys.stdin if l.strip()]
    r = Redis(sock)
    keys = r.scan(prefix + "*")
    applied_key = prefix + "__cdc_applied:" + consumer
    problems = []
    last = events[-1]["seq"] if events else None
    got_applied = r.cmd("GET", applied_key)
    if str(last) != str(got_applied) and not (last is None and got_applied is None):
        problems.append("applied seq %s, want %s" % (got_applied, last))
    keys.discard(applied_key)
    if mode == "hash":
        rows, members = rebuild_hash(events, prefix)
        want = set(rows) | set(members)
        for k in sorted(keys - want)[:5]:
            problems.append("extra key %s" % k)
        for k in sorted(want - keys)[:5]:
            problems.append("missing key %s" % k)
        for k, fields in rows.items():
            if k not in keys:
                continue
            flat = r.cmd("HGETALL", k)
            got = dict(zip(flat[::2], flat[1::2]))
            if got != fields:
                problems.append("%s: got %s, want %s" % (k, got, fields))
        for k, mem in members.items():
            if k in keys and set(r.cmd("SMEMBERS", k)) != mem:
                problems.append("membership %s differs" % k)
        what = "%d row hashes" % len(rows)
    else:
        want = {}
        for ev in events:
            if "schema" in ev and "table" in ev:
                k = prefix + table_part(ev)
            else:
                k = prefix + "__cdc_messages"
            f = []
            for name, v in ev.items():
                if name not in ("seq", "last", "schema", "table"):
                    f += [name, field(v)]
            want.setdefault(k, []).append(["%d-0" % int(ev["seq"]), f])
        for k in sorted(keys - set(want))[:5]:
            problems.append("extra key %s" % k)
        for k, entries in want.items():
            got = r.cmd("XRANGE", k, "-", "+") if k in keys else []
            if got != entries:
                ids = [e[0] for e in got]
                dups = len(ids) - len(set(ids))
                problems.append("stream %s: %d entries (%d repeated), want %d%s" % (
                    k, len(got), dups, len(entries),
                    "" if len(got) != len(entries) else
                    ": first difference at " + next(
                        (a[0] for a, b in zip(got, entries) if a != b), "?")))
        what = "%d entries in %d streams" % (len(events), len(want))
    if problems:
        for p in problems[:10]:
            print("MISMATCH: " + p)
        sys.exit(1)
    print("redis matches the log: %s" % what)


# --- workload ---------------------------------------------------------------
def gen(seed, txns, nrows):
    rnd = random.Random(seed)
    tables = {"orders": {}, "items": {}, "notes": {}}  # key tuple -> row

    def key_of(t, row):
        return {"sku": row["sku"], "n": row["n"]} if t == "items" else {"id": row["id"]}

    def new_row(t):
        if t == "items":
            return {"sku": rnd.choice(["a", "b:c", "d]e", "é"]), "n": rnd.randint(1, nrows),
                    "qty": rnd.randint(0, 9), "note": rnd.choice([None, "x", "y y"])}
        if t == "notes":
            return {"id": rnd.randint(1, nrows), "body": "b" * rnd.randint(0, 40),
                    "doc": rnd.choice([None, {"a": [1, None]}, "json-null"]),
                    "big": "t%d" % rnd.randint(0, 9)}
        return {"id": rnd.randint(1, nrows), "status": rnd.choice(["new", "paid", "1"]),
                "total": "%d.%02d" % (rnd.randint(0, 99), rnd.randint(0, 99)),
                "flag": rnd.choice([True, False, None]), "score": rnd.choice([1.5, 2, -0.25])}

    lsn = 0
    out = sys.stdout
    for t in range(1, txns + 1):
        lsn += 256
        head = {"lsn": "0/%X" % lsn, "xid": 1000 + t,
                "ts": "2026-11-29T07:41:02.%06dZ" % (t % 1000000)}
        evs = []
        for _ in range(rnd.randint(1, 6)):
            name = rnd.choice(list(tables))
            rows = tables[name]
            r = rnd.random()
            ev = dict(head, schema="public", table=name)
            if r < 0.005:
                ev.update(op="t", key=None, before=None, after=None,
                          options={"cascade": False, "restart_identity": False})
                rows.clear()
            elif r < 0.01:
                evs.append(dict(head, op="m", prefix="app", content="hello %d" % t,
                                transactional=True))
                continue
            elif r < 0.45 or not rows:
                row = new_row(name)
                k = tuple(key_of(name, row).values())
                if k in rows:
                    continue
                rows[k] = row
                ev.update(op="c", key=key_of(name, row), before=None, after=row)
            else:
                k = rnd.choice(list(rows))
                row = rows[k]
                if r < 0.6:
                    del rows[k]
                    ev.update(op="d", key=key_of(name, row), before=None, after=None)
                else:
                    new = dict(row)
                    old_key = key_of(name, row)
                    for c in new:
                        if c not in old_key and rnd.random() < 0.5:
                            new[c] = new_row(name)[c]
                    if rnd.random() < 0.15:  # primary-key change
                        pk = "n" if name == "items" else "id"
                        new[pk] = rnd.randint(1, nrows) + nrows
                        if tuple(key_of(name, new).values()) in rows:
                            continue
                    del rows[k]
                    rows[tuple(key_of(name, new).values())] = new
                    after = dict(new)
                    if name == "notes" and rnd.random() < 0.5 and new["big"] == row["big"]:
                        del after["big"]  # unchanged TOAST column
                        ev["unchanged"] = ["big"]
                    ev.update(op="u", key=old_key, before=None, after=after)
            if ev.get("after"):
                after = ev["after"]
                if after.get("doc") == "json-null":
                    after["doc"] = None
                    ev["json_null"] = ["/after/doc"]
                elif "doc" in after and isinstance(after["doc"], dict):
                    ev["json_null"] = ["/after/doc/a/1"]
            evs.append(ev)
        for ev in evs:
            out.write(json.dumps(ev, separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]),
            int(sys.argv[4]) if len(sys.argv) > 4 else 50)
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
