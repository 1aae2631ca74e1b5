#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan and UBSan) and runs
# each on its corpus (fuzz/corpus/TARGET, kept in the repository).
#   scripts/fuzz.sh                      every target for 10 s (what CI runs)
#   scripts/fuzz.sh --seconds 600        every target for 10 minutes
#   scripts/fuzz.sh --seconds 600 --merge fuzz_segment
#       ... and fold the new inputs that found new coverage into the corpus
# A crash, a leak, a timeout (10 s for one input) or a sanitizer report
# fails the run; the input that caused it is kept in fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SECONDS_EACH=10
MERGE=0
TARGETS=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_EACH=${2:?--seconds needs a number}; shift 2 ;;
    --merge) MERGE=1; shift ;;
    -*) echo "fuzz.sh: unknown flag $1" >&2; exit 64 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
JOBS=${JOBS:-$(nproc)}
# FUZZ_BUILD: a build directory configured with -DCDC_FUZZ=ON already (as
# scripts/test.sh's build-san is); else build-fuzz is made here.
if [ -n "${FUZZ_BUILD:-}" ]; then
  B=$FUZZ_BUILD
else
  scripts/deps.sh
  B="$ROOT/build-fuzz"
  mkdir -p "$B"
  t0=$SECONDS
  CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCDC_FUZZ=ON -DCDC_TESTS=OFF > "$B.configure.log" 2>&1 ||
    { cat "$B.configure.log"; exit 1; }
  echo "--- configured $B: $((SECONDS - t0)) s"
fi
t0=$SECONDS
cmake --build "$B" -j"$JOBS" --target fuzzers
echo "--- build $B: $((SECONDS - t0)) s"
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=($(sed -n 's/^  \(fuzz_[a-z_ ]*\).*/\1/p' fuzz/CMakeLists.txt | tr ' ' '\n' | grep fuzz_))
# Scratch files on tmpfs when there is one: the targets write and fsync.
[ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
W=$(mktemp -d "${TMPDIR:-/tmp}/cdc-fuzz.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p fuzz/crashes
failed=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${TARGETS[@]}"; do
  mkdir -p "$W/$t" "fuzz/corpus/$t"
  echo "=== $t: $SECONDS_EACH s"
  if ! "$B/fuzz/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$ROOT/fuzz/crashes/$t-" \
       "$W/$t" "fuzz/corpus/$t" > "$W/$t.log" 2>&1; then
    tail -40 "$W/$t.log"
    echo "FAILED: $t (the input is in fuzz/crashes/)"
    failed=$((failed + 1))
    continue
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$W/$t.log" | tr '\n' ' '
  echo
  if [ "$MERGE" = 1 ]; then
    "$B/fuzz/$t" -merge=1 "fuzz/corpus/$t" "$W/$t" > "$W/$t.merge.log" 2>&1 ||
      { tail -5 "$W/$t.merge.log"; failed=$((failed + 1)); }
  fi
done
rmdir fuzz/crashes 2>/dev/null || true
echo "fuzz: ${#TARGETS[@]} targets, $failed failed"
[ "$failed" = 0 ]
