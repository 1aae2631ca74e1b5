"""Random transactions for tests/integration/pg_sink_test.sh, as SQL.

Every transaction changes a few rows of the type matrix (types), a table
whose large column stays unchanged by most updates (big), a table with a
composite key whose key changes (comp) and a table without a key under
REPLICA IDENTITY FULL (nopk), and inserts its number into audit.
"""
import random
import sys

n_txns = int(sys.argv[1])
seed = int(sys.argv[2])
rnd = random.Random(seed)

VALUES = {
    "i2": ["-32768", "32767", "0", "NULL"],
    "i8": ["9223372036854775807", "-9223372036854775808", "42", "NULL"],
    "num": ["'12345678901234.56789'", "'NaN'", "'-0.00001'", "NULL", "'1e-20'"],
    "f4": ["1.5", "'Infinity'", "'-Infinity'", "'NaN'", "3.4028235e38", "NULL"],
    "f8": ["0.1", "1e-300", "'NaN'", "-2.2250738585072014e-308", "NULL"],
    "b": ["true", "false", "NULL"],
    "t": ["'hé \"quoted\"\\n'", "E'tab\\tnew\\nline'", "''", "'NULL'", "NULL", "'日本語 🐘'"],
    "vc": ["'var'", "''", "NULL"],
    "ch": ["'ab'", "'abcde'", "NULL"],
    "by": ["'\\x00ff10'", "''::bytea", "'\\x5c22'", "NULL"],
    "j": ["'{\"a\": [1, 2.50]}'", "'null'", "'\"s\"'", "NULL", "'[]'"],
    "jb": ["'{\"b\": {\"c\": null}}'", "'null'", "'12345678901234567890'", "NULL"],
    "u": ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "NULL"],
    "d": ["'2026-11-29'", "'0044-03-15 BC'", "'infinity'", "'10000-01-01'", "NULL"],
    "tm": ["'07:41:02.5'", "'24:00:00'", "NULL"],
    "tmtz": ["'07:41:02+05:30'", "NULL"],
    "ts": ["'2026-11-29 07:41:02.123456'", "'0001-12-31 23:59:59.5 BC'", "'-infinity'", "NULL"],
    "tstz": ["'2026-11-29 13:11:02.5+05:30'", "'4713-11-24 12:00:00+00 BC'", "'infinity'", "NULL"],
    "iv": ["'1 day 02:03:04'", "'-1 year 2 mons'", "NULL"],
    "ia": ["'{1,NULL,3}'", "'{}'", "'{{1,2},{3,4}}'", "NULL"],
    "ta": ["'{\"a b\",\"c,d\",NULL,\"NULL\",\"q\\\\\"x\"}'", "'{\"\"}'", "NULL"],
    "da": ["'{\"0001-12-31 BC\",2026-01-01,NULL}'", "NULL"],
    "jba": ["ARRAY['null'::jsonb, NULL, '{\"k\":\"]\"}']", "NULL"],
    "m": ["'sad'", "'happy'", "NULL"],
    "dom": ["7", "NULL"],
    "ip": ["'192.168.0.1/24'", "'::1'", "NULL"],
}
COLS = list(VALUES)


def row():
    return ", ".join(rnd.choice(VALUES[c]) for c in COLS)


def op():
    r = rnd.random()
    if r < 0.30:
        return "INSERT INTO types (%s) VALUES (%s);" % (", ".join(COLS), row())
    if r < 0.45:
        cols = rnd.sample(COLS, 3)
        sets = ", ".join("%s = %s" % (c, rnd.choice(VALUES[c])) for c in cols)
        return "UPDATE types SET %s WHERE id = (SELECT id FROM types ORDER BY random() LIMIT 1);" % sets
    if r < 0.50:
        return "DELETE FROM types WHERE id = (SELECT id FROM types ORDER BY random() LIMIT 1);"
    if r < 0.58:
        k = rnd.randrange(200)
        return ("INSERT INTO big VALUES (%d, 'v', repeat('x', 3000 + %d)) "
                "ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v || '!';" % (k, rnd.randrange(5000)))
    if r < 0.66:
        return "UPDATE big SET v = v || '%d' WHERE id = %d;" % (rnd.randrange(10), rnd.randrange(200))
    if r < 0.72:
        return ("INSERT INTO comp VALUES (%d, '%s', %d) ON CONFLICT DO NOTHING;"
                % (rnd.randrange(50), rnd.choice("xyz"), rnd.randrange(1000)))
    if r < 0.78:
        return ("UPDATE comp SET a = a + 1000 WHERE (a, b) = (SELECT a, b FROM comp "
                "ORDER BY random() LIMIT 1) AND a < 100000;")
    if r < 0.80:
        return "DELETE FROM comp WHERE a = %d;" % rnd.randrange(50)
    if r < 0.88:
        return "INSERT INTO nopk VALUES (%d, %s, '%s');" % (
            rnd.randrange(20), rnd.choice(VALUES["jb"]), rnd.choice(["a", "b", "a"]))
    if r < 0.94:
        return ("UPDATE nopk SET n = n + 1 WHERE ctid = (SELECT ctid FROM nopk "
                "ORDER BY random() LIMIT 1);")
    if r < 0.995:
        return "DELETE FROM nopk WHERE ctid = (SELECT ctid FROM nopk ORDER BY random() LIMIT 1);"
    return "TRUNCATE nopk;"


for n in range(1, n_txns + 1):
    print("BEGIN;")
    for _ in range(rnd.randrange(1, 6)):
        print(op())
    print("INSERT INTO audit VALUES (%d);" % n)
    if rnd.random() < 0.05:
        print("ROLLBACK;")
    else:
        print("COMMIT;")
    if n % 20 == 0:
        print("SELECT pg_sleep(0.01);")
