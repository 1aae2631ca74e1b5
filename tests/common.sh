# Scaffolding shared by the end-to-end and integration test libraries:
# strict mode, the built tools on PATH, a scratch directory $T removed on
# exit, cleanup hooks, and the ok/fail reporting. Set CDC_TEST_KIND (used in
# the scratch directory's name) and optionally define `on_exit_extra`
# before sourcing.
set -euo pipefail
: "${BIN:?set BIN to the directory holding the built tools}"
export PATH="$BIN:$PATH"
T=$(mktemp -d "${TMPDIR:-/tmp}/cdc-${CDC_TEST_KIND:-test}.XXXXXX")
_cleanups=()
on_exit() {
  local rc=$?
  for c in "${_cleanups[@]}"; do eval "$c" 2>/dev/null || true; done
  if declare -F on_exit_extra >/dev/null; then on_exit_extra; fi
  # A failure shows what the tools said (CI keeps no scratch directory).
  if [ "$rc" != 0 ]; then
    local f
    for f in "$T"/*.err; do
      [ -s "$f" ] || continue
      echo "--- last lines of $(basename "$f"):" >&2
      tail -n 12 "$f" | cut -c1-400 >&2
    done
  fi
  rm -rf "$T"
  exit $rc
}
trap on_exit EXIT
at_exit() { _cleanups+=("$1"); }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
# expect_exit CODE CMD...: runs CMD (stdout in $T/out, stderr in $T/err)
# and fails unless it exits CODE.
expect_exit() {
  local want=$1; shift
  local got=0
  "$@" > "$T/out" 2> "$T/err" || got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stderr:" >&2; cat "$T/err" >&2
    fail "expected exit $want, got $got: $*"
  fi
}
# The value of metric NAME, whatever its labels, in Prometheus text FILE.
metric() { awk -v n="$1" '$1 == n || index($1, n "{") == 1 { print $NF; exit }' "$2"; }
# asan_build TOOL: true when $BIN's TOOL was built with AddressSanitizer
# (its runtime is in the binary), whose memory is then the sanitizer's.
asan_build() { grep -qa __asan_init "$BIN/$1"; }
# The peak RSS in KB that `/usr/bin/time -v -o FILE` wrote to FILE.
rss_kb() { awk '/Maximum resident set size/ {print $6}' "$1"; }
