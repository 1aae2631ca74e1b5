#!/usr/bin/env python3
"""Prints a SQL workload for the snapshot tests: small transactions that
insert new rows, update and delete existing ones in tables a, b and c
(made by snapshot_schema in snap.sh with ROWS rows each).

usage: snap_workload.py ROWS TXNS SEED"""
import random
import sys

rows, txns, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
out = sys.stdout
out.write("\\set ON_ERROR_STOP 1\n")
for n in range(txns):
    ops = []
    for _ in range(rnd.randint(1, 4)):
        t = rnd.choice("abc")
        r = rnd.random()
        k = rnd.randint(1, rows)
        new = rows + 1 + n * 4 + len(ops)
        if t == "a":
            if r < 0.4:
                ops.append(f"INSERT INTO a VALUES ({new}, {n}, 'new {n}');")
            elif r < 0.8:
                ops.append(f"UPDATE a SET v = {n}, note = note || '+' WHERE id = {k};")
            else:
                ops.append(f"DELETE FROM a WHERE id = {k};")
        elif t == "b":
            if r < 0.4:
                ops.append(f"INSERT INTO b VALUES ({new}, 'k{new}', {n});")
            elif r < 0.6:
                # A key change: the stream carries the old key.
                ops.append(f"UPDATE b SET k1 = k1 + {10 * rows} WHERE k1 = {k};")
            elif r < 0.8:
                ops.append(f"UPDATE b SET v = v + 1 WHERE k1 = {k};")
            else:
                ops.append(f"DELETE FROM b WHERE k1 = {k};")
        else:
            if r < 0.4:
                ops.append(f"INSERT INTO c VALUES ({new}, '{{\"n\": {n}}}', {n}.5);")
            elif r < 0.8:
                ops.append(f"UPDATE c SET doc = jsonb_set(doc, '{{u}}', '{n}'), "
                           f"num = num + 1 WHERE id = {k};")
            else:
                ops.append(f"DELETE FROM c WHERE id = {k};")
    out.write("BEGIN; " + " ".join(ops) + " COMMIT;\n")
