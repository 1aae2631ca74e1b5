#!/usr/bin/env bash
# Runs every test: installs dependencies (as root), builds with -Werror,
# runs the unit tests, the end-to-end tests on the built binaries, the
# integration tests on PostgreSQL 15 (Debian) and 18, a smoke set of them on
# 16 and 17 (servers from scripts/pg-fetch.sh), the chaos harness (short),
# and in a clang ASan+UBSan build the unit tests, some end-to-end and
# integration tests again and each fuzz target briefly. Prints each test's
# time, then one summary line.
#   scripts/test.sh            everything
#   SKIP_SANITIZE=1 scripts/test.sh   skip the sanitizer build
#   CDC_PG_VERSIONS="16 17 18" scripts/test.sh   the other servers to test
#     ("" for Debian's 15 alone)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}
PG_VERSIONS=${CDC_PG_VERSIONS-16 17 18}
start_all=$(date +%s)

scripts/deps.sh

passed=0
failed=0
failures=()
timings=()
run() {  # run NAME CMD...
  local name=$1 t0 secs; shift
  echo "=== $name"
  t0=$(date +%s.%N)
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
  fi
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "--- $name: $secs s"
  timings+=("$secs	$name")
}
# run_together NAME CMD -- NAME CMD -- ...: tests that mostly wait (on
# timeouts, blackholes, sleeps) side by side, each into its own file;
# then each one's output and verdict in order, as run prints them.
run_together() {
  local dir n=0 i
  dir=$(mktemp -d "${TMPDIR:-/tmp}/cdc-test-group.XXXXXX")
  local names=() pids=()
  while [ $# -gt 0 ]; do
    local name=$1 cmd=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    names+=("$name")
    (
      t0=$(date +%s.%N)
      rc=0
      "${cmd[@]}" > "$dir/$n.out" 2>&1 || rc=$?
      awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }' > "$dir/$n.secs"
      exit "$rc"
    ) &
    pids+=($!)
    n=$((n + 1))
  done
  for i in "${!pids[@]}"; do
    local rc=0 secs
    wait "${pids[$i]}" || rc=$?
    echo "=== ${names[$i]} (side by side)"
    cat "$dir/$i.out"
    secs=$(cat "$dir/$i.secs" 2>/dev/null || echo 0)
    if [ "$rc" -eq 0 ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      failures+=("${names[$i]}")
    fi
    echo "--- ${names[$i]}: $secs s"
    timings+=("$secs	${names[$i]}")
  done
  rm -rf "$dir"
}

build() {  # build DIR CMAKE-ARGS...
  local dir=$1 t0=$SECONDS; shift
  cmake -S "$ROOT" -B "$dir" -DCDC_WERROR=ON "$@" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j"$JOBS"
  echo "--- build $dir: $((SECONDS - t0)) s"
}

mkdir -p build
build "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo

# The sanitizer build compiles while the tests below run, at idle
# priority (SCHED_IDLE): it takes only the CPU time they leave, which is
# much of it, since most of them wait on servers, kills and timeouts.
san_pid=
if [ -z "${SKIP_SANITIZE:-}" ]; then
  mkdir -p build-san
  (
    chrt -i -p 0 "$BASHPID" > /dev/null 2>&1 || renice -n 19 -p "$BASHPID" > /dev/null
    CC=clang-14 CXX=clang++-14 build "$ROOT/build-san" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCDC_FUZZ=ON
  ) > build-san.log 2>&1 &
  san_pid=$!
fi

run "unit tests" build/tests/cdc_tests
for t in tests/e2e/*_test.sh; do
  # (crash_test's defaults, 25 kills in 30,000 transactions, are its long
  # mode.)
  short=()
  [ "$t" = tests/e2e/crash_test.sh ] && short=(KILLS=12 TXNS=15000)
  run "e2e $(basename "$t" .sh)" env BIN="$ROOT/build/tools" "${short[@]}" bash "$t"
done
# What earlier releases left on disk (tests/upgrade/fixtures), read,
# followed, appended to and restored by this one.
run "upgrade fixtures" env BIN="$ROOT/build/tools" bash tests/upgrade/upgrade_test.sh
# Against a real PostgreSQL 15 each script starts (and stops) itself.
for t in tests/integration/*_test.sh; do
  run "integration $(basename "$t" .sh)" env BIN="$ROOT/build/tools" bash "$t"
done
# Capture's scripts against newer servers (scripts/pg.sh's PG_BIN): on 18
# all of them, the randomized and bulk ones shortened; on 16 and 17 a smoke
# set (17 also crashes and fails over, its first version with failover
# slots).
for v in $PG_VERSIONS; do
  if ! bin=$(scripts/pg-fetch.sh "$v"); then
    run "fetch PostgreSQL $v" false
    continue
  fi
  case $v in
    18) tests=$(for t in tests/integration/capture_*_test.sh; do basename "$t" _test.sh; done) ;;
    17) tests="capture_types capture_crash capture_restart capture_failover" ;;
    *) tests="capture_types capture_restart" ;;
  esac
  for t in $tests; do
    run "integration $t [pg $v]" env BIN="$ROOT/build/tools" PG_BIN="$bin" \
      KILLS=8 TXNS=4000 ROWS=500000 bash "tests/integration/${t}_test.sh"
  done
  # cdc-pg from Debian's 15 into this version.
  if [ "$v" = 18 ]; then
    run "integration pg_sink [15 -> $v]" env BIN="$ROOT/build/tools" \
      TARGET_PG_BIN="$bin" bash tests/integration/pg_sink_test.sh
  fi
done

# Quiet network faults between each capture and sink and its server, short
# (NETFAULT_LONG=1 adds a 5-minute blackhole and one during the snapshot).
# They mostly wait out blackholes, so they run side by side.
group=()
for t in tests/netfault/*_test.sh; do
  group+=("netfault $(basename "$t" _test.sh)" env BIN="$ROOT/build/tools" bash "$t" --)
done
run_together "${group[@]}"
# A real full disk under capture and a sink (a tmpfs of its own), and a
# slow one (a loop device whose writes a blkio cgroup throttles); root.
run "faults full_disk" env BIN="$ROOT/build/tools" bash tests/faults/full_disk_test.sh
run "faults slow_disk" env BIN="$ROOT/build/tools" bash tests/faults/slow_disk_test.sh
# The soak runner, a minute of it (tests/soak/run.sh --hours 1 is the
# long mode, reported in the README).
run "soak (60 s)" env BIN="$ROOT/build/tools" bash tests/soak/run.sh --minutes 1 \
  --kill-every 12 --backup-every 30 --sample-every 5 --json "${TMPDIR:-/tmp}/cdc-soak-ci.json"

# The chaos harness, short (tests/chaos/run.sh --seconds 1000 --pace 0.25
# --backup-every 20 is the long mode).
run "chaos (${CHAOS_SECONDS:-60} s)" env BIN="$ROOT/build/tools" \
  bash tests/chaos/run.sh --seconds "${CHAOS_SECONDS:-60}"

if [ -z "${SKIP_SANITIZE:-}" ]; then
  # One clang build with ASan and UBSan serves the unit tests, the tools of
  # the sanitized end-to-end and integration runs, and the fuzz targets
  # (with libFuzzer's coverage too).
  # (built in the background since the unit tests began)
  if ! wait "$san_pid"; then
    tail -60 build-san.log
    echo "FAILED: the sanitizer build"
    exit 1
  fi
  grep -- "^--- build" build-san.log
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run "unit tests (ASan+UBSan)" build-san/tests/cdc_tests
  for t in cli hostile; do
    run "e2e $t (ASan+UBSan)" env BIN="$ROOT/build-san/tools" bash "tests/e2e/${t}_test.sh"
  done
  # cdc-nats's client hands answers between nats.c's thread and its own.
  run "e2e nats_ops (ASan+UBSan)" env BIN="$ROOT/build-san/tools" NATS_EVENTS=20000 \
    bash tests/e2e/nats_ops_test.sh
  for t in capture_types capture_ops capture_restart pg_sink pg_sink_bad \
    mariadb_types mariadb_ops; do
    run "integration $t (ASan+UBSan)" env BIN="$ROOT/build-san/tools" \
      bash "tests/integration/${t}_test.sh"
  done
  # (The age bound on InnoDB transactions is held at full speed above;
  # here, 3 to 4 times slower, it is loosened.)
  run "integration mariadb_snapshot (ASan+UBSan)" env BIN="$ROOT/build-san/tools" \
    ROWS=30000 TRX_AGE_LIMIT=20 bash tests/integration/mariadb_snapshot_test.sh
  # Each fuzz target briefly on its corpus (scripts/fuzz.sh --seconds 600
  # is the long run).
  run "fuzz (${FUZZ_SECONDS:-5} s each)" env FUZZ_BUILD="$ROOT/build-san" \
    scripts/fuzz.sh --seconds "${FUZZ_SECONDS:-5}"
  unset ASAN_OPTIONS UBSAN_OPTIONS
fi

echo
echo "slowest:"
printf '%s\n' "${timings[@]}" | sort -rn | head -15 | awk -F'\t' '{ printf "  %7.1f s  %s\n", $1, $2 }'
echo "total: $(( $(date +%s) - start_all )) s"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
