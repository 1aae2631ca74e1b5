#!/usr/bin/env python3
"""Random transactions on a MariaDB server, through the mariadb client.

maria_workload.py SOCKET TXNS SEED: multi-statement transactions of
inserts, updates and deletes on shop.items and shop.orders (5% rolled
back), a few ALTER TABLEs, and writes to another database (which capture
must leave out). Runs in batches of one client each; a batch cut by a
server restart is retried, so the workload survives restarts (the oracle
is the server's binlog, not this script).
"""
import os
import random
import subprocess
import sys
import time

sock, txns, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
SETUP = """
CREATE TABLE IF NOT EXISTS shop.items (id INT PRIMARY KEY, qty INT,
  note VARCHAR(40) CHARACTER SET utf8mb4, price DECIMAL(12,2));
CREATE TABLE IF NOT EXISTS shop.orders (a INT, b INT, v VARCHAR(10),
  PRIMARY KEY (a, b));
CREATE DATABASE IF NOT EXISTS noise;
CREATE TABLE IF NOT EXISTS noise.n (id INT AUTO_INCREMENT PRIMARY KEY, v INT);
"""


last_error = ""
failures = 0


def client(sql):
    global last_error
    p = subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot",
                        "--default-character-set=utf8mb4"],
                       input=sql.encode(), capture_output=True,
                       env={k: v for k, v in os.environ.items()
                            if k != "MYSQL_PWD"})
    last_error = p.stderr.decode(errors="replace")[-300:]
    return p.returncode == 0


def txn(i):
    out = ["BEGIN;"]
    for _ in range(rnd.randint(1, 6)):
        k = rnd.randint(1, 400)
        r = rnd.random()
        if r < 0.45:
            note = rnd.choice(["", "plain", "caf\u00e9", "\U0001F600", "a'b"])
            out.append("INSERT INTO shop.items (id, qty, note, price) "
                       "VALUES (%d, %d, '%s', %d.%02d) "
                       "ON DUPLICATE KEY UPDATE qty = qty + 1;"
                       % (k, rnd.randint(-5, 1000), note.replace("'", "''"),
                          rnd.randint(0, 9999), rnd.randint(0, 99)))
        elif r < 0.7:
            out.append("UPDATE shop.items SET qty = qty * 2 + %d WHERE id = %d;"
                       % (rnd.randint(0, 9), k))
        elif r < 0.8:
            out.append("DELETE FROM shop.items WHERE id = %d;" % k)
        elif r < 0.9:
            out.append("REPLACE INTO shop.orders VALUES (%d, %d, 'v%d');"
                       % (k % 20, k % 7, i))
        else:
            out.append("INSERT INTO noise.n (v) VALUES (%d);" % i)
    out.append("ROLLBACK;" if rnd.random() < 0.05 else "COMMIT;")
    if rnd.random() < 0.03:
        out.append("INSERT INTO noise.n (v) VALUES (%d);" % i)  # autocommit
    return "\n".join(out)


while not client(SETUP):
    time.sleep(0.2)
done = 0
# IF [NOT] EXISTS: a batch cut by a restart after its ALTER (DDL commits at
# once) is retried whole, and the ALTER must not fail the second time.
alters = {txns // 3:
          "ALTER TABLE shop.items ADD COLUMN IF NOT EXISTS extra INT DEFAULT 7;",
          2 * txns // 3: "ALTER TABLE shop.items DROP COLUMN IF EXISTS extra;"}
while done < txns:
    batch = []
    for i in range(done, min(done + 50, txns)):
        if i in alters:
            batch.append(alters[i])
        batch.append(txn(i))
    if client("\n".join(batch)):
        done += len([b for b in batch if b.startswith("BEGIN")])
        failures = 0
    else:
        failures += 1
        if failures > 200:  # not a restart: a broken statement
            sys.exit("batch keeps failing: " + last_error)
        time.sleep(0.3)
print(done)
