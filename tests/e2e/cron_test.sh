#!/usr/bin/env bash
# Every crontab line the README and the man pages show runs as cron runs
# it: /bin/sh, PATH=/usr/bin:/bin, an empty environment, '%' turned into
# a newline unless written '\%'. Paths are moved into the test's
# directory; capture's line needs a server and is only checked for its
# form. A recipe whose tools cron cannot find, or that is split over two
# lines, fails here.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
L="$T/log"
gen_events 1 50 3 | cdc-log import --log "$L" -q
mkdir -p "$T/backup" "$T/replays" "$T/textfile"
cdc-backup create --log "$L" --out-dir "$T/backup" -q  # a base for "latest"

python3 - "$ROOT" > "$T/lines" <<'PY'
import re, sys, pathlib
root = pathlib.Path(sys.argv[1])
sched = re.compile(r"^(@\w+|([0-9*/,-]+\s+){4}[0-9*/,-]+)\s")
def man_text(l):
    return (l.replace("\\-", "-").replace("\\e", "\\").replace("\\(aq", "'")
             .replace("\\(dq", '"'))
out = []
for f in [root / "README.md"] + sorted((root / "man").glob("*.1")):
    block = False
    for line in f.read_text().splitlines():
        if f.suffix == ".1":
            if line.startswith(".EX"): block = True; continue
            if line.startswith(".EE"): block = False; continue
            if not block: continue
            line = man_text(line)
        if sched.match(line):
            out.append(f"{f.name}\t{line}")
print("\n".join(out))
PY
n=$(grep -c '' "$T/lines")
[ "$n" -ge 6 ] || fail "only $n crontab lines found: $(cat "$T/lines")"

ran=0
while IFS=$'\t' read -r file line; do
  cmd=$(python3 - "$line" <<'PY'
import re, sys
line = sys.argv[1]
m = re.match(r"^(@\w+|(?:[0-9*/,-]+\s+){4}[0-9*/,-]+)\s+(.*)$", line)
cmd = m.group(2)
# /etc/cron.d and /etc/crontab lines name a user first.
first = cmd.split()[0]
if not first.startswith("/") and re.fullmatch(r"[a-z_][a-z0-9_-]*", first):
    cmd = cmd.split(None, 1)[1]
# cron: an unescaped % ends the command (the rest is its stdin).
out, i = "", 0
while i < len(cmd):
    if cmd[i] == "\\" and i + 1 < len(cmd) and cmd[i + 1] == "%":
        out += "%"; i += 2; continue
    if cmd[i] == "%": break
    out += cmd[i]; i += 1
print(out)
PY
)
  case $cmd in
    /usr/local/bin/*) ;;
    *) fail "$file: a crontab line names a tool cron's PATH cannot find: $line" ;;
  esac
  case $cmd in
    *cdc-capture*) continue ;;  # needs a server: its form is checked above
  esac
  cmd=${cmd//\/usr\/local\/bin/$BIN}
  cmd=${cmd//\/var\/lib\/cdc\/log/$L}
  cmd=${cmd//\/backup\/cdc/$T/backup}
  cmd=${cmd//\/srv\/replays/$T/replays}
  cmd=${cmd//\/var\/lib\/prometheus\/node-exporter/$T/textfile}
  env -i PATH=/usr/bin:/bin HOME="$T" LOGNAME=cdc SHELL=/bin/sh /bin/sh -c "$cmd" > "$T/cron.out" 2>&1 ||
    fail "$file: exit $?: $cmd: $(cat "$T/cron.out")"
  ran=$((ran + 1))
done < "$T/lines"
[ "$(ls -d "$T"/backup/cdc-backup-* | wc -l)" -ge 2 ] || fail "no nightly backup made"
ls "$T"/replays/orders-*.ndjson > /dev/null || fail "no replay file written"
grep -q '^cdc_log_last_seq{' "$T/textfile/cdc-log.prom" || fail "no textfile written"
ok "$ran crontab lines of the README and man pages run as cron runs them ($n found)"
