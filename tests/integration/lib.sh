# Shared setup for the integration tests: built tools on PATH, a scratch
# directory, and a throwaway PostgreSQL 15 (scripts/pg.sh) stopped on exit.
set -euo pipefail
: "${BIN:?set BIN to the directory holding the built tools}"
export PATH="$BIN:$PATH"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../scripts/pg.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-it.XXXXXX")
_cleanups=()
on_exit() {
  local rc=$?
  for c in "${_cleanups[@]}"; do eval "$c" 2>/dev/null || true; done
  pg_stop
  rm -rf "$T"
  exit $rc
}
trap on_exit EXIT
at_exit() { _cleanups+=("$1"); }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
capture() { cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" -q "$@"; }
# Starts cdc-capture in the background; its pid in $CAP.
capture_bg() { cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" -q "$@" 2>>"$T/capture.err" & CAP=$!; }
# Waits until a logical message with this content is in the log.
wait_marker() {
  psql_q -c "SELECT pg_logical_emit_message(true, 'cdc-test', '$1')" >/dev/null
  for _ in $(seq 600); do
    cdc-tail --log "$T/log" --op m 2>/dev/null | grep -q "\"content\":\"$1\"" && return 0
    sleep 0.1
  done
  fail "marker $1 never reached the log"
}
