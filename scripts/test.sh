#!/usr/bin/env bash
# Runs every test: installs dependencies (as root), builds with -Werror,
# runs the unit tests, the end-to-end tests on the built binaries, and the
# unit tests again in an ASan+UBSan build. Prints one summary line.
#   scripts/test.sh            everything
#   SKIP_SANITIZE=1 scripts/test.sh   skip the sanitizer build
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}

scripts/deps.sh

passed=0
failed=0
failures=()
run() {  # run NAME CMD...
  local name=$1; shift
  echo "=== $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
  fi
}

build() {  # build DIR CMAKE-ARGS...
  local dir=$1; shift
  cmake -S "$ROOT" -B "$dir" -DCDC_WERROR=ON "$@" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j"$JOBS"
}

mkdir -p build
build "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo

run "unit tests" build/tests/cdc_tests
for t in tests/e2e/*_test.sh; do
  run "e2e $(basename "$t" .sh)" env BIN="$ROOT/build/tools" bash "$t"
done
# Against a real PostgreSQL 15 each script starts (and stops) itself.
for t in tests/integration/*_test.sh; do
  run "integration $(basename "$t" .sh)" env BIN="$ROOT/build/tools" bash "$t"
done

if [ -z "${SKIP_SANITIZE:-}" ]; then
  mkdir -p build-asan
  build "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug -DCDC_SANITIZE=ON
  run "unit tests (ASan+UBSan)" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 build-asan/tests/cdc_tests
  for t in cli hostile; do
    run "e2e $t (ASan+UBSan)" env BIN="$ROOT/build-asan/tools" bash "tests/e2e/${t}_test.sh"
  done
  for t in capture_types capture_ops capture_restart; do
    run "integration $t (ASan+UBSan)" env BIN="$ROOT/build-asan/tools" \
      bash "tests/integration/${t}_test.sh"
  done
fi

echo
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
