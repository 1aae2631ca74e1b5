#!/usr/bin/env bash
# One vocabulary: every flag in every tool's --help (subcommands too) is in
# docs/flags.md with the value kind it takes there; no short option means
# two things; no row of the table is left that no tool has. Then the
# shared grammar itself: the same duration text works in every duration
# flag, the earlier names still work, and -q keeps warnings.
source "$(dirname "$0")/lib.sh"

TABLE="$(dirname "$0")/../../docs/flags.md"
[ -f "$TABLE" ] || fail "no $TABLE"

# "FLAG KINDS" from the table, e.g. "--log DIR,NEWDIR"; "-" for a switch.
# Short options as "-c --consumer".
python3 - "$TABLE" > "$T/table" 3> "$T/shorts" <<'PY'
import os, re, sys
shorts = os.fdopen(3, "w")
for line in open(sys.argv[1]):
    m = re.match(r"^\| (`-[a-z]`, )?`(--[a-z][a-z0-9-]*)` \| ([^|]+) \|", line)
    if not m:
        continue
    kinds = ",".join(k.strip() for k in m.group(3).split(","))
    print(m.group(2), kinds)
    if m.group(1):
        shorts.write(m.group(1)[1:3] + " " + m.group(2) + "\n")
PY
[ "$(wc -l < "$T/table")" -ge 60 ] || fail "docs/flags.md: only $(wc -l < "$T/table") rows read"

# "TOOL[ SUB]|-s,--flag KIND" for every option in --help.
for tool in cdc-capture cdc-tail cdc-ack cdc-redis cdc-nats cdc-pg cdc-backup cdc-run cdc-log; do
  subs=$("$tool" --help | awk '/^Subcommands:/ { f = 1; next } f && NF { print $1 }')
  for sub in "" $subs; do
    # shellcheck disable=SC2086
    "$tool" $sub --help > "$T/help" || fail "$tool $sub --help"
    grep -oE '^\s+(-[a-zA-Z],)?--[a-z][a-z0-9-]*( [A-Z]+([= ]|$))?' "$T/help" |
      sed -E 's/^\s+//; s/[= ]$//' | sed "s/^/$tool${sub:+ $sub}|/"
  done
done > "$T/used"
[ "$(wc -l < "$T/used")" -ge 150 ] || fail "only $(wc -l < "$T/used") options found in --help"

python3 - "$T/table" "$T/shorts" "$T/used" <<'PY' || fail "the tools' flags and docs/flags.md differ"
import sys
table = {}
for line in open(sys.argv[1]):
    flag, kinds = line.split()
    table[flag] = set(kinds.split(","))
shorts = dict(line.split() for line in open(sys.argv[2]))
bad, seen, seen_kind, short_of = [], set(), set(), {}
for line in open(sys.argv[3]):
    where, opt = line.rstrip("\n").split("|")
    parts = opt.split(" ")
    names, kind = parts[0], parts[1] if len(parts) > 1 else "-"
    short = None
    if names.startswith("-") and not names.startswith("--"):
        short, names = names.split(",")
    flag = names
    seen.add(flag)
    seen_kind.add((flag, kind))
    if flag not in table:
        bad.append(f"{where}: {flag} is not in docs/flags.md")
    elif kind not in table[flag]:
        bad.append(f"{where}: {flag} takes {kind}, docs/flags.md says {','.join(sorted(table[flag]))}")
    if short:
        if short_of.setdefault(short, flag) != flag:
            bad.append(f"{where}: {short} is {flag} here and {short_of[short]} elsewhere")
        if shorts.get(short) != flag:
            bad.append(f"{where}: {short},{flag} is not in docs/flags.md as such")
for flag, kinds in table.items():
    if flag not in seen:
        bad.append(f"docs/flags.md: no tool has {flag}")
    for k in kinds:
        if (flag, k) not in seen_kind:
            bad.append(f"docs/flags.md: no tool has {flag} {k}")
for s, flag in shorts.items():
    if short_of.get(s) != flag:
        bad.append(f"docs/flags.md: no tool has {s},{flag}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
ok "every flag of every tool is in docs/flags.md with its value kind ($(wc -l < "$T/used") options)"

# One duration grammar: the same text in every kind of duration flag.
L="$T/log"
gen_events 1 30 4 | cdc-log import --log "$L" --commit-delay 0.5s -q ||
  fail "import --commit-delay 0.5s"
for d in 1s 1500ms 0.5m 2 1h; do
  printf '%s\n' 1 | cdc-ack --log "$L" -c "d${d//./_}" --create --interval "$d" > /dev/null ||
    fail "cdc-ack --interval $d"
done
cdc-log retain --log "$L" --retain-age 2w --dry-run > /dev/null || fail "--retain-age 2w"
cdc-log wait --log "$L" --lsn 0/100 --timeout 1500ms || fail "wait --timeout 1500ms"
# The example the reviews tried: a unit where a bare number was wanted.
expect_exit 69 cdc-capture --log "$T/cap" --dsn "host=$T/nosock port=1" --reconnect-max 0s
expect_exit 69 cdc-capture --log "$T/cap" --dsn "host=$T/nosock port=1" --reconnect-max 1ms \
  --status-interval 1s --commit-delay 5ms --metrics-interval 250ms
for bad in 1e3 0x10 5sec 1.s -1s; do
  expect_exit 64 cdc-capture --log "$T/cap" --dsn host=x --reconnect-max "$bad"
  grep -q -- "^cdc-capture: --reconnect-max: invalid duration \"$bad\"" "$T/err" ||
    fail "--reconnect-max $bad: $(cat "$T/err")"
  expect_exit 64 cdc-log retain --log "$L" --retain-age "$bad"
  grep -q -- "^cdc-log: --retain-age: invalid duration \"$bad\"" "$T/err" ||
    fail "--retain-age $bad: $(cat "$T/err")"
done
[ ! -e "$T/cap" ] || fail "a refused capture left a log behind"
ok "one duration grammar (500ms, 1.5s, 5m, 2h, 7d, 2w) in every duration flag"

# The earlier names, hidden from --help, still work.
cdc-log retain --log "$L" --max-age 1000d --max-bytes 1G --max-segments 100 --dry-run > /dev/null ||
  fail "cdc-log retain --max-*"
expect_exit 64 cdc-log retain --log "$L" --max-age 1d --retain-age 2d
grep -qx -- 'cdc-log: --max-age is the earlier name of --retain-age; give one of them' "$T/err" ||
  fail "--max-age with --retain-age: $(cat "$T/err")"
# Errors name the earlier flag as given; CLI11 has no name for a hidden one.
for bad in "--max-age x|--max-age: invalid duration \"x\"" \
           "--max-bytes -5|--max-bytes: invalid size \"-5\"" \
           "--max-segments 0|--max-segments: value 0 out of range" \
           "--max-age |--max-age must not be empty" \
           "--retain-bytes 1Q|--retain-bytes: invalid size \"1Q\""; do
  read -r flag value <<< "${bad%%|*}"
  expect_exit 64 cdc-log retain --log "$L" "$flag" "$value"
  grep -q -- "^cdc-log: ${bad#*|}" "$T/err" || fail "$flag '$value': $(cat "$T/err")"
done
expect_exit 64 cdc-capture --log "$T/cap" --dsn host=x --tables ''
grep -qx -- 'cdc-capture: --tables must not be empty' "$T/err" || fail "--tables '': $(cat "$T/err")"
cdc-log retain --help > "$T/help"
! grep -q 'Excludes' "$T/help" || fail "retain --help lists hidden exclusions: $(cat "$T/help")"
expect_exit 69 cdc-capture --log "$T/cap" --dsn "host=$T/nosock port=1" --reconnect-max 0 --tables a,b
! grep -qE -- '^cdc-capture\|--tables |^cdc-log retain\|--max-' "$T/used" ||
  fail "an earlier name is still shown in --help"
ok "cdc-capture --tables and cdc-log retain --max-* still read, not shown"

# stats: text by default, --json for JSON, as every other subcommand.
cdc-log stats --log "$L" > "$T/stats"
grep -qx 'last_seq     120' "$T/stats" || fail "stats text: $(cat "$T/stats")"
cdc-log stats --log "$L" --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["last_seq"] == 120' ||
  fail "stats --json"
ok "cdc-log stats prints text, --json JSON"

# -q leaves warnings: a sink that cannot reach its server warns of each
# retry with or without -q; only the informational lines go.
expect_exit 69 cdc-redis --log "$L" -c q --redis "unix://$T/no.sock" --mode hash \
  --reconnect-max 300ms -q
grep -q "warning: .*retrying in" "$T/err" || fail "-q hid the retry warnings: $(cat "$T/err")"
ok "-q keeps warnings in the sinks, as in capture"
