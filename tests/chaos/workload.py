#!/usr/bin/env python3
"""Prints the chaos harness's SQL workload, one transaction (or statement)
a line: random inserts, updates and deletes in tables a, b and c, large
transactions (thousands of rows), TOASTed values and updates that leave
them unchanged, truncates, ADD and DROP COLUMN, and transactional and
non-transactional logical messages. Each committed transaction records
its number and xid in table wl (not published); one in ten rolls back.
A line may be run again after a lost connection: a committed one then
fails on wl's key and rolls back.

usage: workload.py FIRST COUNT SEED"""
import random
import sys

first, count, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
out = sys.stdout
extra = False  # c has column x
for n in range(first, first + count):
    r = rnd.random()
    if r < 0.01:
        # DDL: no change of a published row, so no transaction in the stream.
        out.write(("ALTER TABLE c DROP COLUMN IF EXISTS x;" if extra else
                   "ALTER TABLE c ADD COLUMN IF NOT EXISTS x int DEFAULT 7;") + "\n")
        extra = not extra
        continue
    if r < 0.03:
        out.write(f"SELECT pg_logical_emit_message(false, 'chaos', 'loose {n}');\n")
        continue
    ops = []
    if r < 0.04:
        # A large transaction: a thousand rows in, the last ones there out.
        base = 1000000 + (n % 20) * 10000
        ops.append(f"DELETE FROM a WHERE id >= {base} AND id < {base + 10000};")
        ops.append(f"INSERT INTO a SELECT g, {n}, 'big {n}' FROM "
                   f"generate_series({base}, {base + 999}) g;")
    elif r < 0.06:
        ops.append("TRUNCATE c;" if rnd.random() < 0.5 else
                   f"INSERT INTO c VALUES ({rnd.randint(1, 300)}, {n}, 't{n}') "
                   f"ON CONFLICT (id) DO UPDATE SET v = {n};")
        if ops[0] == "TRUNCATE c;":
            ops.append(f"INSERT INTO c VALUES ({rnd.randint(1, 300)}, {n}, 'after {n}');")
    else:
        for _ in range(rnd.randint(1, 5)):
            t = rnd.choice("abc")
            k = rnd.randint(1, 300)
            q = 0.0 if not ops else rnd.random()
            if q < 0.45:
                ops.append(f"INSERT INTO {t} VALUES ({k}, {n}, 'n{n}') "
                           f"ON CONFLICT (id) DO UPDATE SET v = {n}, note = 'i{n}';")
            elif q < 0.55:
                # A TOASTed value (out of line: ~20 kB of hex).
                ops.append(f"UPDATE b SET note = (SELECT string_agg(md5(g::text || '{n}'), '') "
                           f"FROM generate_series(1, 600) g) WHERE id = {k};")
            elif q < 0.65:
                # Leaves a TOASTed note unchanged.
                ops.append(f"UPDATE b SET v = {n} WHERE id = {k};")
            elif q < 0.8:
                ops.append(f"UPDATE {t} SET v = {n}, note = note || '.' WHERE id = {k};")
            elif q < 0.85:
                ops.append(f"SELECT pg_logical_emit_message(true, 'chaos', 'txn {n}');")
            else:
                ops.append(f"DELETE FROM {t} WHERE id = {k};")
    end = "ROLLBACK;" if rnd.random() < 0.1 else \
        f"INSERT INTO wl VALUES ({n}, txid_current()); COMMIT;"
    out.write("BEGIN; " + " ".join(ops) + " " + end + "\n")
