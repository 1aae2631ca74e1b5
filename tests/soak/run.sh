#!/usr/bin/env bash
# The soak runner: the toolkit as an operator runs it, for hours, at a
# steady rate, with a process killed every few minutes; it samples what
# each process holds and checks that nothing grew and nothing was lost.
#
#   BIN=build/tools tests/soak/run.sh [--hours H | --minutes M] [--rate 5000]
#       [--kill-every 180] [--backup-every 3600] [--sample-every 60]
#       [--retain-bytes 256M] [--json FILE]
#
# Running, each restarted by a supervisor loop (as systemd would) whenever
# it exits: cdc-capture (with --retain-bytes: the log's size is bounded),
# cdc-redis (hash mirror), cdc-nats (into an R3 stream of a 3-node
# JetStream cluster, limited to the newest 2 GB per node) and a consumer
# pipeline cdc-tail -c pipe -f | handler | cdc-ack -c pipe. A workload
# commits --rate row changes a second (20 per transaction over two tables
# of 100,000 rows: upserts and deletes of random keys) for the whole run.
# Every --kill-every seconds one of capture, the Redis sink, the NATS sink
# or the pipeline is SIGKILLed; every --backup-every seconds an
# incremental backup is taken (cdc-backup create --incremental latest).
# Every --sample-every seconds the resident memory, open descriptors and
# threads of each process, and the log's and the backups' sizes, are
# sampled.
#
# At the end, with the workload stopped and everything caught up:
#  - the Redis mirror equals the tables (every row, every field, nothing
#    extra), the stream holds a contiguous run of the log's seqs ending at
#    its last, once each, and the pipeline handled every event the log
#    still holds (at least once: its repeats are counted);
#  - capture exited only when killed or stopped; the log and every backup
#    verify;
#  - flat (judged on runs of 10 minutes or more): each process's median
#    RSS in the last third of the run is at most its median in the first
#    third (after a two-minute warm-up) plus 20% and 16 MiB, its
#    descriptors at most the first third's peak plus 8; and the log stays
#    under --retain-bytes plus two segments.
# Prints a table of the samples (first, peak, last per process) and the
# checks; writes it all as JSON (bench/results/soak.json by default).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/soak"
BIN=${BIN:-$ROOT/build/tools}
SECS=3600
RATE=5000
KILL_EVERY=180
BACKUP_EVERY=3600
SAMPLE_EVERY=60
RETAIN=256M
JSON=$ROOT/bench/results/soak.json
while [ $# -gt 0 ]; do
  case $1 in
    --hours) SECS=$(awk -v h="$2" 'BEGIN { printf "%d", h * 3600 }'); shift 2 ;;
    --minutes) SECS=$(awk -v m="$2" 'BEGIN { printf "%d", m * 60 }'); shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --kill-every) KILL_EVERY=$2; shift 2 ;;
    --backup-every) BACKUP_EVERY=$2; shift 2 ;;
    --sample-every) SAMPLE_EVERY=$2; shift 2 ;;
    --retain-bytes) RETAIN=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
  esac
done
for v in "$SECS" "$RATE" "$KILL_EVERY" "$BACKUP_EVERY" "$SAMPLE_EVERY"; do
  [[ $v =~ ^[0-9]+$ && $v -gt 0 ]] || { echo "run.sh: bad flag value $v" >&2; exit 64; }
done
[ "$RATE" -ge 20 ] || { echo "run.sh: --rate must be at least 20" >&2; exit 64; }
CDC_TEST_KIND=soak
export NATS_MAX_FILE_STORE=${NATS_MAX_FILE_STORE:-8G}
source "$ROOT/tests/common.sh"
source "$ROOT/scripts/pg.sh"
source "$ROOT/scripts/redis.sh"
source "$ROOT/scripts/nats.sh"
PROBE="$BIN/../bench/cdc-nats-probe"
echo "soak: $SECS s at $RATE row changes/s, a kill every $KILL_EVERY s, a backup every $BACKUP_EVERY s, samples every $SAMPLE_EVERY s"
stop_all() {
  touch "$T/stop"
  pkill -TERM -f "$T/log" 2>/dev/null || true
  sleep 0.5
  pkill -KILL -f "$T/log" 2>/dev/null || true
  nats_stop; redis_stop; pg_stop
}
at_exit stop_all
pg_start "$T"
redis_start "$T"
NATS_NO_TRAP=1 nats_start "$T"
L="$T/log"
B="$T/backups"
mkdir -p "$B"
psql_q <<'SQL'
CREATE TABLE soak_a (id int PRIMARY KEY, v bigint, pad text);
CREATE TABLE soak_b (LIKE soak_a INCLUDING ALL);
INSERT INTO soak_a SELECT g, g, repeat('p', 100) FROM generate_series(1, 100000) g;
INSERT INTO soak_b SELECT * FROM soak_a;
SQL

# sup NAME CMD...: runs CMD again whenever it ends, until $T/stop.
SUPS=()
sup() {
  local name=$1; shift
  (
    while [ ! -e "$T/stop" ]; do
      local rc=0
      "$@" >> "$T/$name.out" 2>> "$T/$name.err" || rc=$?
      echo "$rc" >> "$T/$name.rc"
      [ -e "$T/stop" ] || sleep 0.5
    done
  ) 2> /dev/null &
  SUPS+=($!)
}
sup capture cdc-capture --log "$L" --dsn "$CDC_TEST_DSN" --table soak_a,soak_b \
  --retain-bytes "$RETAIN" --reconnect-max 120 -q
for _ in $(seq 600); do
  [ -e "$L/log.json" ] && break
  sleep 0.1
done
"$PROBE" "$NATS_URLS" req '$JS.API.STREAM.CREATE.SOAK' \
  '{"name":"SOAK","subjects":["soak.>"],"storage":"file","num_replicas":3,"max_bytes":2147483648,"discard":"old","duplicate_window":120000000000}' >/dev/null
sup redis cdc-redis --log "$L" -c redis --redis "$REDIS_URL" --mode hash --prefix s: -f \
  --reconnect-max 120 -q
sup nats cdc-nats --log "$L" -c nats --server "$NATS_URLS" --stream SOAK \
  --subject 'soak.{schema}.{table}' -f --reconnect-max 120 -q
pipeline() {
  cdc-tail --log "$L" -c pipe -f |
    python3 -u -c '
import json, sys
out = open(sys.argv[1], "a")
for line in sys.stdin:
    out.write("%d\n" % json.loads(line)["seq"])
    out.flush()
    sys.stdout.write(line)
    sys.stdout.flush()' "$T/handled" |
    cdc-ack --log "$L" -c pipe
}
sup pipe pipeline

# The workload: transactions of 20 row changes at RATE/20 a second, paced
# by the clock (a psql that falls behind slows it; the rate reached is
# reported).
python3 -u - "$RATE" "$T/stop-workload" <<'PY' | psql -X -q -v ON_ERROR_STOP=0 > /dev/null 2>> "$T/work.err" &
import os, random, sys, time
rate, stop = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(1)
tx = rate / 20.0
t0 = time.monotonic()
n = 0
while not os.path.exists(stop):
    n += 1
    t, d = rnd.choice(("soak_a", "soak_b")), rnd.choice(("soak_a", "soak_b"))
    ids = sorted(set(rnd.randint(1, 100000) for _ in range(18)))
    vals = ",".join("(%d,%d,'%s')" % (i, n, "w%d" % n + "x" * rnd.randint(0, 120)) for i in ids)
    gone = ",".join(str(rnd.randint(1, 100000)) for _ in range(2))
    sys.stdout.write("BEGIN; INSERT INTO %s VALUES %s ON CONFLICT (id) DO UPDATE SET v = excluded.v, pad = excluded.pad; "
                     "DELETE FROM %s WHERE id IN (%s); COMMIT;\n" % (t, vals, d, gone))
    ahead = n / tx - (time.monotonic() - t0)
    if ahead > 0:
        sys.stdout.flush()
        time.sleep(ahead)
sys.stdout.write("SELECT pg_logical_emit_message(true, 'soak', 'end');\n")
PY
work=$!

# sample: one line per process: t role pid rss_kib fds threads inotify.
role_pid() { pgrep -n -f "$1" || true; }
sample() {
  local t=$1 role pat pid
  for role in capture:"^cdc-capture --log $L" redis:"^cdc-redis --log $L" nats:"^cdc-nats --log $L" \
              tail:"^cdc-tail --log $L -c pipe" ack:"^cdc-ack --log $L -c pipe"; do
    pat=${role#*:}
    pid=$(role_pid "$pat")
    [ -n "$pid" ] || continue
    python3 - "$t" "${role%%:*}" "$pid" <<'PY' >> "$T/samples.tsv" 2>/dev/null || true
import os, sys
t, role, pid = sys.argv[1:4]
st = dict(l.split(":", 1) for l in open("/proc/%s/status" % pid) if ":" in l)
fds = os.listdir("/proc/%s/fd" % pid)
ino = sum(1 for f in fds if os.readlink("/proc/%s/fd/%s" % (pid, f)) == "anon_inode:inotify")
print(t, role, pid, st["VmRSS"].split()[0], len(fds), st["Threads"].strip(), ino, sep="\t")
PY
  done
  printf '%s\tlog\t0\t%s\t0\t0\t0\n' "$t" "$(du -sk "$L" | cut -f1)" >> "$T/samples.tsv"
  printf '%s\tbackups\t0\t%s\t0\t0\t0\n' "$t" "$(du -sk "$B" | cut -f1)" >> "$T/samples.tsv"
  printf '%s\tlast_seq\t0\t%s\t0\t0\t0\n' "$t" \
    "$(cdc-log info --log "$L" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])' 2>/dev/null || echo 0)" >> "$T/samples.tsv"
}
backup() {
  cdc-backup create --log "$L" --out-dir "$B" --incremental latest -q 2>> "$T/backup.err" &&
    echo backup >> "$T/actions"
}
: > "$T/samples.tsv"
: > "$T/actions"
start=$SECONDS
next_sample=0 next_kill=$KILL_EVERY next_backup=0
RANDOM=1
while [ $((SECONDS - start)) -lt "$SECS" ]; do
  now=$((SECONDS - start))
  if [ "$now" -ge "$next_sample" ]; then
    sample "$now"
    next_sample=$((next_sample + SAMPLE_EVERY))
  fi
  if [ "$now" -ge "$next_backup" ]; then
    backup || echo "soak: backup failed: $(tail -1 "$T/backup.err")" >&2
    next_backup=$((next_backup + BACKUP_EVERY))
  fi
  if [ "$now" -ge "$next_kill" ]; then
    case $((RANDOM % 4)) in
      0) pkill -KILL -f "^cdc-capture --log $L" && echo kill_capture >> "$T/actions" ;;
      1) pkill -KILL -f "^cdc-redis --log $L" && echo kill_redis >> "$T/actions" ;;
      2) pkill -KILL -f "^cdc-nats --log $L" && echo kill_nats >> "$T/actions" ;;
      3) pkill -KILL -f "^cdc-tail --log $L -c pipe" && echo kill_pipeline >> "$T/actions" ;;
    esac || true
    next_kill=$((next_kill + KILL_EVERY))
  fi
  kill -0 "$work" 2>/dev/null || fail "the workload stopped: $(tail -3 "$T/work.err")"
  sleep 1
done
sample "$((SECONDS - start))"
touch "$T/stop-workload"
wait "$work" || true
echo "soak: workload stopped; waiting for everything to catch up" >&2

acked_min() {
  cdc-log consumers --log "$L" --json 2>/dev/null | python3 -c '
import json, sys
acks = [json.loads(l)["acked_seq"] for l in sys.stdin]
print(min(acks) if len(acks) == 3 else 0)'
}
last=0
for _ in $(seq 3000); do
  last=$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
  if cdc-tail --log "$L" --op m 2>/dev/null | grep -q '"content":"end"' && [ "$(acked_min)" = "$last" ]; then break; fi
  sleep 0.2
done
[ "$(acked_min)" = "$last" ] || { cdc-log consumers --log "$L" >&2; fail "the consumers did not catch up"; }
backup || fail "the last backup failed: $(tail -1 "$T/backup.err")"
touch "$T/stop"
pkill -TERM -f "$T/log" 2>/dev/null || true
wait "${SUPS[@]}" 2>/dev/null || true
! grep -qvE '^(0|137|143)$' "$T/capture.rc" ||
  fail "capture exited with $(grep -vE '^(0|137|143)$' "$T/capture.rc" | sort -u | tr '\n' ' '): $(tail -3 "$T/capture.err")"

cdc-log verify --log "$L" -q || fail "the log does not verify"
nb=0
for b in "$B"/cdc-backup-*; do
  cdc-backup verify "$b" -q || fail "backup $b does not verify"
  nb=$((nb + 1))
done
for t in soak_a soak_b; do psql_q -F $'\t' -c "SELECT id, v, pad FROM $t" > "$T/$t.tsv"; done
"$PROBE" "$NATS_URLS" dump SOAK > "$T/nats.txt"
# What the pipeline's reader is handed: the default view of what the log
# still holds.
cdc-tail --log "$L" | python3 -c 'import json,sys; [print(json.loads(l)["seq"]) for l in sys.stdin]' > "$T/view.txt"
python3 - "$T" "$REDIS_SOCK" "$ROOT/tests/e2e" "$last" "$SECS" "$RATE" "$KILL_EVERY" "$BACKUP_EVERY" "$SAMPLE_EVERY" "$RETAIN" "$JSON" "$nb" <<'PY'
import collections, json, os, platform, statistics, sys
T, sock, e2e, last = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
secs, rate, kill_every, backup_every, sample_every = map(int, sys.argv[5:10])
retain, out_json, backups = sys.argv[10], sys.argv[11], int(sys.argv[12])
sys.path.insert(0, e2e)
from redis_model import Redis
problems = []
# The Redis mirror against the tables.
r = Redis(sock)
want = {}
for t in ("soak_a", "soak_b"):
    for line in open("%s/%s.tsv" % (T, t)):
        i, v, pad = line.rstrip("\n").split("\t")
        want["s:public.%s:[%s]" % (t, i)] = {"id": i, "v": v, "pad": pad}
keys = {k for k in r.scan("s:public.*") if not k.startswith("s:__cdc")}
for k in sorted(keys - set(want))[:5]:
    problems.append("Redis: extra key %s" % k)
for k in sorted(set(want) - keys)[:5]:
    problems.append("Redis: missing key %s" % k)
bad = 0
for k, fields in want.items():
    if k in keys:
        flat = r.cmd("HGETALL", k)
        if dict(zip(flat[::2], flat[1::2])) != fields:
            bad += 1
            if bad <= 3:
                problems.append("Redis: %s differs" % k)
# The stream: a contiguous run of seqs, once each, ending at the log's last.
seqs = [int(l.split()[2]) for l in open(T + "/nats.txt")]
if not seqs or seqs[-1] != last or seqs != list(range(seqs[0], seqs[0] + len(seqs))):
    problems.append("NATS: %d messages, first %s, last %s, log last %d, %d twice"
                    % (len(seqs), seqs[:1], seqs[-1:], last, len(seqs) - len(set(seqs))))
# The pipeline: every event of the default view the log still holds, at
# least once (what retention removed was handled before, or the consumer
# would be expired).
handled = [int(l) for l in open(T + "/handled") if l.strip()]
hs = set(handled)
view = [int(l) for l in open(T + "/view.txt") if l.strip()]
gaps = [s for s in view if s not in hs]
if gaps or not view:
    problems.append("pipeline: %d of %d events never handled, e.g. %s" % (len(gaps), len(view), gaps[:5]))
repeats = len(handled) - len(hs)
# Samples.
rows = [l.rstrip("\n").split("\t") for l in open(T + "/samples.tsv")]
by = collections.defaultdict(list)
for t, role, pid, rss, fds, thr, ino in rows:
    by[role].append((int(t), int(pid), int(rss), int(fds), int(thr), int(ino)))
# Flat: the median RSS of the run's last third against that of its first
# (after a warm-up), so that one sample just after a kill (a fresh
# process, small) or during a catch-up (the initial snapshot is one
# transaction, held whole) does not decide. A run under 10 minutes is too
# short to judge: it reports, and says so.
warm = min(120, secs // 4)
third = max(1, (secs - warm) // 3)
judged = secs >= 600
flat = {}
for role in ("capture", "redis", "nats", "tail", "ack"):
    s = by.get(role, [])
    early = [x for x in s if warm <= x[0] < warm + third] or s[:1]
    late = [x for x in s if x[0] >= secs - third] or s[-1:]
    if not s:
        problems.append("no samples of %s" % role)
        continue
    e_rss, l_rss = statistics.median(x[2] for x in early), statistics.median(x[2] for x in late)
    e_fds, l_fds = max(x[3] for x in early), max(x[3] for x in late)
    ok = l_rss <= e_rss * 1.2 + 16384 and l_fds <= e_fds + 8
    if judged and not ok:
        problems.append("%s grew: median RSS %d -> %d KiB, fds %d -> %d" % (role, e_rss, l_rss, e_fds, l_fds))
    flat[role] = {"rss_kib_first": s[0][2], "rss_kib_peak": max(x[2] for x in s),
                  "rss_kib_early_median": e_rss, "rss_kib_late_median": l_rss, "rss_kib_last": s[-1][2],
                  "fds_peak": max(x[3] for x in s), "fds_early_peak": e_fds, "fds_late_peak": l_fds,
                  "threads_peak": max(x[4] for x in s), "inotify_peak": max(x[5] for x in s),
                  "pids": len({x[1] for x in s}), "flat": ok}
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
rb = int(retain[:-1]) * units[retain[-1].upper()] if retain[-1].upper() in units else int(retain)
log_peak = max(x[2] for x in by["log"]) * 1024
if log_peak > rb + 2 * 64 * 1024 * 1024:
    problems.append("log grew to %d bytes, beyond --retain-bytes %s" % (log_peak, retain))
actions = collections.Counter(l.strip() for l in open(T + "/actions") if l.strip())
seq_samples = sorted((x[0], x[2]) for x in by["last_seq"])
reached = (seq_samples[-1][1] - seq_samples[0][1]) / max(1, seq_samples[-1][0] - seq_samples[0][0])
print("%-8s %6s %13s %13s %13s %13s %6s %8s %8s" % ("process", "pids", "RSS peak", "median 1/3", "median 3/3",
      "RSS last", "fds", "threads", "inotify"))
for role, f in flat.items():
    print("%-8s %6d %9d KiB %9d KiB %9d KiB %9d KiB %6d %8d %8d" % (role, f["pids"], f["rss_kib_peak"],
          f["rss_kib_early_median"], f["rss_kib_late_median"], f["rss_kib_last"], f["fds_peak"],
          f["threads_peak"], f["inotify_peak"]))
if not judged:
    print("(a run under 10 minutes: flatness reported, not judged)")
print("log: peak %.0f MiB (--retain-bytes %s); backups: %d, %.0f MiB" % (log_peak / 2**20, retain, backups, max(x[2] for x in by["backups"]) / 1024))
print("events: %d in the log's seqs, %.0f a second reached (target %d row changes a second)" % (last, reached, rate))
print("actions:", ", ".join("%s %d" % kv for kv in sorted(actions.items())))
print("pipeline repeats (at least once): %d" % repeats)
out = {"bench": "soak", "seconds": secs, "rate_target": rate, "events_per_second": reached, "last_seq": last,
       "kill_every": kill_every, "backup_every": backup_every, "sample_every": sample_every,
       "retain_bytes": rb, "log_peak_bytes": log_peak, "backups": backups, "actions": dict(actions),
       "pipeline_repeats": repeats, "processes": flat, "problems": problems,
       "host": {"cpus": os.cpu_count(), "machine": platform.machine()},
       "samples": [dict(zip(("t", "role", "pid", "rss_kib", "fds", "threads", "inotify"), r)) for r in rows]}
os.makedirs(os.path.dirname(out_json) or ".", exist_ok=True)
json.dump(out, open(out_json, "w"), indent=1)
print("wrote", out_json)
for p in problems:
    print("PROBLEM", p)
sys.exit(1 if problems else 0)
PY
if [ "$SECS" -ge 600 ]; then ok "soak: nothing lost, nothing grew"; else ok "soak: nothing lost (too short to judge growth)"; fi
