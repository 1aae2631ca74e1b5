#!/usr/bin/env bash
# The ten-minute demo, on a fresh Debian machine: installs what is missing
# (as root; as another user it prints the apt-get line), builds, and in a
# temporary directory starts a throwaway PostgreSQL and Redis. A small shop
# with rows already in it; cdc-capture copies them (the initial snapshot)
# and streams what changes next; the changes shown through cdc-tail, native
# and as Debezium's events; a Redis mirror kept by cdc-redis; a backup
# taken online and verified. Then it stops everything it started, removes
# the directory, and prints how to run it for real.
#   scripts/demo.sh              build, then run
#   scripts/demo.sh --bin DIR    run the tools already built in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=
while [ $# -gt 0 ]; do
  case $1 in
    --bin) BIN=$(cd "${2:?--bin needs a directory}" && pwd); shift 2 ;;
    *) echo "demo.sh: unknown argument $1 (usage: demo.sh [--bin DIR])" >&2; exit 64 ;;
  esac
done
if [ -z "$BIN" ]; then
  scripts/deps.sh
  echo "== building (cmake, once: a few minutes on two cores)"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" >/dev/null
  BIN=$ROOT/build/tools
fi
export PATH="$BIN:$PATH"
source scripts/pg.sh
source scripts/redis.sh
D=$(mktemp -d "${TMPDIR:-/tmp}/cdc-demo.XXXXXX")
L="$D/log"
cleanup() {
  for p in ${SINK:-} ${CAP:-}; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  redis_stop 2>/dev/null || true
  pg_stop
  rm -rf "$D"
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }
last_seq() { cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])'; }

say "a throwaway PostgreSQL (wal_level=logical) and Redis in $D"
pg_start "$D"
redis_start "$D"
psql_q <<'SQL'
CREATE TABLE customers (id int PRIMARY KEY, name text, city text);
CREATE TABLE products (sku text PRIMARY KEY, title text, price numeric(10,2));
CREATE TABLE orders (id int PRIMARY KEY, customer int REFERENCES customers,
  sku text REFERENCES products, qty int, status text, placed timestamptz);
INSERT INTO customers VALUES (1, 'Ada', 'Lisbon'), (2, 'Grace', 'Berlin');
INSERT INTO products VALUES ('tea', 'Green tea', 4.50), ('mug', 'Blue mug', 12.00);
INSERT INTO orders VALUES (1, 1, 'tea', 2, 'paid', now() - interval '1 day');
SQL
echo "   shop: 2 customers, 2 products, 1 order already there"

say "cdc-capture: creates the slot and publication, copies the rows already there, then streams"
cdc-capture --log "$L" --dsn "$CDC_TEST_DSN" 2> "$D/capture.err" &
CAP=$!
for _ in $(seq 200); do grep -q "^cdc-capture: streaming" "$D/capture.err" 2>/dev/null && break; sleep 0.1; done
grep -q "^cdc-capture: streaming" "$D/capture.err" || { cat "$D/capture.err"; exit 1; }
sed 's/^/   /' "$D/capture.err"

say "cdc-redis: a hash per row in Redis, kept up to date (effectively once)"
cdc-redis --log "$L" -c mirror --redis "$REDIS_URL" --mode hash -f -q &
SINK=$!

say "changes, committed in PostgreSQL"
psql_q -e <<'SQL'
BEGIN;
INSERT INTO orders VALUES (2, 2, 'mug', 1, 'new', now());
UPDATE products SET price = 11.00 WHERE sku = 'mug';
COMMIT;
UPDATE orders SET status = 'shipped' WHERE id = 1;
DELETE FROM orders WHERE id = 2;
SQL
lsn=$(psql_q -c "SELECT pg_current_wal_lsn()")
show cdc-log wait --log "$L" --lsn "$lsn" --timeout 10s

say "the log as NDJSON: the snapshot rows (op r), then the changes (c, u, d)"
show cdc-tail --log "$L"
say "one change as Debezium's PostgreSQL connector shows it"
show cdc-tail --log "$L" --format debezium --op u --table public.orders
for _ in $(seq 100); do
  [ "$(rcli GET cdc:__cdc_applied:mirror)" = "$(last_seq)" ] && break
  sleep 0.1
done
say "the Redis mirror (order 2 was deleted, so it has no hash)"
show rcli --no-raw HGETALL "cdc:public.orders:[1]"
mirror=differs
[ "$(rcli --scan --pattern 'cdc:public.orders:*' | wc -l)" = "$(psql_q -c "SELECT count(*) FROM orders")" ] &&
  [ "$(rcli HGET "cdc:public.orders:[1]" status)" = "$(psql_q -c "SELECT status FROM orders WHERE id = 1")" ] &&
  mirror=matches
echo "   mirror $mirror PostgreSQL's orders"

say "an online backup, verified"
show cdc-backup create --log "$L" --out "$D/backup" -q
show cdc-backup verify "$D/backup"
show cdc-log consumers --log "$L"

say "demo ok: stopping cdc-redis, cdc-capture, Redis and PostgreSQL"
cat <<EOF

To run it for real (man cdc-capture, man cdc-tail, ...):
  sudo cmake --install build                          # tools, man pages, systemd examples
  # PostgreSQL: wal_level=logical; a role with REPLICATION and SELECT
  export CDC_LOG=/var/lib/cdc/log
  cdc-capture --dsn 'host=/run/postgresql dbname=app user=cdc' &
  cdc-tail -c billing -f | ./handle-events | cdc-ack -c billing
  # or as services: contrib/systemd/ (cdc-capture.service, cdc-redis.service, ...)
EOF
