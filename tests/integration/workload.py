#!/usr/bin/env python3
"""Prints a SQL workload: random inserts, updates and deletes across tables
a, b and c. Each committed transaction records its xid in table wl (not
published), which is the record the checker compares the log against; about
one in ten transactions rolls back instead.

usage: workload.py FIRST_TXN COUNT SEED"""
import random
import sys

first, count, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
out = sys.stdout
out.write("\\set ON_ERROR_STOP 0\n")
for n in range(first, first + count):
    ops = []
    for _ in range(rnd.randint(1, 5)):
        t = rnd.choice("abc")
        k = rnd.randint(1, 300)
        # The first op always changes a row, so no committed transaction is
        # empty (PostgreSQL sends no empty transactions).
        r = 0.0 if not ops else rnd.random()
        if r < 0.5:
            ops.append(f"INSERT INTO {t} VALUES ({k}, {n}, 'n{n}') "
                       f"ON CONFLICT (id) DO UPDATE SET v = {n}, note = 'i{n}';")
        elif r < 0.8:
            ops.append(f"UPDATE {t} SET v = {n}, note = note || '.' WHERE id = {k};")
        else:
            ops.append(f"DELETE FROM {t} WHERE id = {k};")
    end = "ROLLBACK;" if rnd.random() < 0.1 else \
        f"INSERT INTO wl VALUES ({n}, txid_current()); COMMIT;"
    out.write("BEGIN; " + " ".join(ops) + " " + end + "\n")
