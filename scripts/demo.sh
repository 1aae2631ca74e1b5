#!/usr/bin/env bash
# Demo: installs dependencies (as root), builds, starts a throwaway local
# PostgreSQL 15, runs cdc-capture and shows changes flowing as NDJSON
# through cdc-tail. Everything runs in a temporary directory that is removed
# at the end, PostgreSQL included.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
export PATH="$ROOT/build/tools:$PATH"
source scripts/pg.sh
D=$(mktemp -d "${TMPDIR:-/tmp}/cdc-demo.XXXXXX")
cleanup() {
  [ -n "${TAIL:-}" ] && kill "$TAIL" 2>/dev/null
  [ -n "${CAP:-}" ] && kill "$CAP" 2>/dev/null && wait "$CAP" 2>/dev/null
  pg_stop
  rm -rf "$D"
}
trap cleanup EXIT

echo "== starting a throwaway PostgreSQL 15 (wal_level=logical) in $D"
pg_start "$D"
psql_q -c "CREATE TABLE orders (id int PRIMARY KEY, status text, total numeric(10,2), tags text[], meta jsonb)"

echo "== cdc-capture --log $D/log --dsn '$CDC_TEST_DSN'"
cdc-capture --log "$D/log" --dsn "$CDC_TEST_DSN" 2> "$D/capture.err" &
CAP=$!
for _ in $(seq 100); do grep -q streaming "$D/capture.err" 2>/dev/null && break; sleep 0.1; done
sed 's/^/   /' "$D/capture.err"

echo "== cdc-tail --log $D/log -c demo -f   (changes appear below as they commit)"
cdc-tail --log "$D/log" -c demo -f &
TAIL=$!
psql_q >/dev/null <<'SQL'
BEGIN;
INSERT INTO orders VALUES (1, 'new', 12.50, '{gift,express}', '{"source": "web"}');
INSERT INTO orders VALUES (2, 'new', 99.99, NULL, NULL);
COMMIT;
UPDATE orders SET status = 'paid' WHERE id = 1;
DELETE FROM orders WHERE id = 2;
SELECT pg_logical_emit_message(true, 'demo', 'hello from PostgreSQL');
SQL
sleep 1.5
kill "$TAIL"; TAIL=
echo "== acknowledge what we saw, and look at the log"
cdc-ack --log "$D/log" -c demo "$(cdc-log info --log "$D/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')"
cdc-log consumers --log "$D/log"
cdc-log verify --log "$D/log"
echo "== done: stopping cdc-capture and PostgreSQL"
