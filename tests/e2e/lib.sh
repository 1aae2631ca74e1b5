# Shared helpers for the end-to-end tests. Each test script sources this,
# gets $BIN (the built tools) and a scratch directory $T removed on exit.
CDC_TEST_KIND=e2e
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

# The stderr of the last expect_exit must be exactly one line matching $1.
expect_one_line() {
  local lines
  lines=$(grep -c '' "$T/err" || true)
  [ "$lines" = 1 ] || { cat "$T/err" >&2; fail "expected one line on stderr, got $lines"; }
  grep -qE -- "$1" "$T/err" || { cat "$T/err" >&2; fail "stderr does not match /$1/"; }
}

# gen_events FIRST_TXN TXNS [PER_TXN] : NDJSON for cdc-log import; txn t has
# lsn 0/(t*256), xid t and PER_TXN events (random 1-20 when 0).
gen_events() {
  python3 - "$@" <<'PY'
import json, random, sys
first, n = int(sys.argv[1]), int(sys.argv[2])
per = int(sys.argv[3]) if len(sys.argv) > 3 else 0
rnd = random.Random(first)
words = "alpha beta gamma delta order paid shipped refund customer".split()
out = sys.stdout
for t in range(first, first + n):
    k = per or rnd.randint(1, 20)
    for i in range(k):
        ev = {"lsn": "0/%X" % (t * 256), "xid": t,
              "ts": "2026-11-29T07:41:02.%06dZ" % (t % 1000000), "op": "c",
              "schema": "public", "table": "orders",
              "key": {"id": i}, "before": None,
              "after": {"id": i, "txn": t, "note": " ".join(rnd.choice(words) for _ in range(6))}}
        out.write(json.dumps(ev, separators=(",", ":")) + "\n")
PY
}
