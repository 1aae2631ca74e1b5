#!/usr/bin/env bash
# scripts/demo.sh from a fresh clone of the repository (with the tools
# already built: --bin), the way the README's first command runs it: the
# shop's rows and changes come out as NDJSON and as a Debezium event, the
# Redis mirror matches, the backup verifies, and it leaves nothing behind.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
git clone -q "$ROOT" "$T/clone" || fail "git clone"
chmod 755 "$T"  # PostgreSQL runs as its own user under it
TMPDIR="$T" bash "$T/clone/scripts/demo.sh" --bin "$BIN" > "$T/demo.out" 2>&1 ||
  { cat "$T/demo.out"; fail "demo.sh failed"; }
python3 - "$T/demo.out" <<'PY' || { cat "$T/demo.out"; fail "the demo's output"; }
import json, sys
lines = open(sys.argv[1]).read().splitlines()
ev = [json.loads(l) for l in lines if l.startswith('{"seq"')]
ops = [(e["op"], e["table"]) for e in ev]
assert sorted(o for o in ops if o[0] == "r") == [
    ("r", "customers"), ("r", "customers"), ("r", "orders"), ("r", "products"), ("r", "products")], ops
assert ops[5:] == [("c", "orders"), ("u", "products"), ("u", "orders"), ("d", "orders")], ops
deb = [json.loads(l) for l in lines if l.startswith('{"before"')]
assert len(deb) == 1 and deb[0]["op"] == "u" and deb[0]["after"]["status"] == "shipped", deb
assert "   mirror matches PostgreSQL's orders" in lines, "mirror"
assert any(l.startswith("ok ") and "backup: seq 1-12" in l for l in lines), "backup"
assert "== demo ok: stopping cdc-redis, cdc-capture, Redis and PostgreSQL" in lines
PY
left=$(find "$T" -maxdepth 1 -name 'cdc-demo.*' | wc -l)
[ "$left" = 0 ] || fail "the demo left its directory behind"
! pgrep -f "$T/cdc-demo" > /dev/null || fail "the demo left a process running"
ok "demo.sh from a fresh clone: snapshot rows, changes, a Debezium event, the Redis mirror, a verified backup; nothing left behind"
