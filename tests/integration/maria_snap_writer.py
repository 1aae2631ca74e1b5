#!/usr/bin/env python3
"""Random writes on shop.s1..s3 while a snapshot copies them.

maria_snap_writer.py SOCKET STOPFILE SEED: small transactions of inserts
(new ids above the loaded ones), updates and deletes, through one mariadb
client, until STOPFILE exists. Prints how many transactions it sent.
"""
import os
import random
import subprocess
import sys
import time

sock, stop, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rnd = random.Random(seed)
p = subprocess.Popen(["mariadb", "--no-defaults", "--force", "-S", sock,
                      "-uroot", "shop"], stdin=subprocess.PIPE,
                     stdout=subprocess.DEVNULL,
                     env={k: v for k, v in os.environ.items()
                          if k != "MYSQL_PWD"})
n = 0
while not os.path.exists(stop):
    out = ["BEGIN;"]
    for _ in range(rnd.randint(1, 4)):
        t = "s%d" % rnd.randint(1, 3)
        k = rnd.randint(1, 240000)
        r = rnd.random()
        if r < 0.4:
            out.append("INSERT INTO %s VALUES (%d, %d, 'w%d', %d.%02d) "
                       "ON DUPLICATE KEY UPDATE k = k + 1;"
                       % (t, k, rnd.randint(0, 10**6), n, rnd.randint(0, 999),
                          rnd.randint(0, 99)))
        elif r < 0.75:
            out.append("UPDATE %s SET k = k * 3 + 1, pad = 'u%d' WHERE id = %d;"
                       % (t, n, k))
        else:
            out.append("DELETE FROM %s WHERE id = %d;" % (t, k))
    out.append("COMMIT;\n")
    p.stdin.write("\n".join(out).encode())
    p.stdin.flush()
    n += 1
    if n % 50 == 0:
        time.sleep(0.005)
p.stdin.close()
p.wait()
print(n)
