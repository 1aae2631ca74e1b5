#!/usr/bin/env bash
# Numbers in flags are decimal digits and nothing else, in every tool:
# "0x10", "010" read as octal, " 5", "+5", "1e1" and "-1" are usage errors
# (64) naming the flag, never a value nobody wrote. The options are taken
# from each tool's --help (its subcommands' included), so a flag added
# later is checked too.
source "$(dirname "$0")/lib.sh"

L="$T/log"
gen_events 1 20 1 | cdc-log import --log "$L" -q

# "SUB OPTION KIND" for each option of TOOL whose value is a number (N:
# a count, DURATION: a number with an optional unit), from --help.
numeric_options() {
  local tool=$1 sub
  for sub in "" $("$tool" --help | awk '/^Subcommands:/ { f = 1; next } f && NF { print $1 }'); do
    # shellcheck disable=SC2086
    { "$tool" $sub --help | grep -oE -- '--[a-z][a-z0-9-]* (N|FLOAT|DURATION)\b' || true; } |
      while read -r opt kind; do echo "${sub:--} $opt $kind"; done
  done
}
n=0
for tool in cdc-tail cdc-ack cdc-log cdc-capture cdc-backup cdc-redis cdc-nats; do
  while read -r sub opt kind <&3; do
    [ "$sub" = - ] && sub=
    for v in 0x10 ' 5' '5 ' +5 1e1 -1 0x1p3 ' ' '٥'; do
      # shellcheck disable=SC2086
      expect_exit 64 "$tool" $sub "$opt" "$v"
      grep -qE -- "^$tool: $opt: (not a decimal (integer|number): |invalid duration \")" "$T/err" ||
        fail "$tool $sub $opt '$v': $(cat "$T/err")"
    done
    if [ "$kind" = N ]; then
      # shellcheck disable=SC2086
      expect_exit 64 "$tool" $sub "$opt" 1.5
      # shellcheck disable=SC2086
      expect_exit 64 "$tool" $sub "$opt" 99999999999999999999
      grep -qE -- "^$tool: $opt: value 99999999999999999999 out of range: must be [0-9]+ to [0-9]+$" "$T/err" ||
        fail "$tool $sub $opt too large: $(cat "$T/err")"
    fi
    n=$((n + 1))
  done 3< <(numeric_options "$tool")
done
[ "$n" -ge 20 ] || fail "only $n numeric options found in the tools' --help"
ok "hexadecimal, signed, spaced and exponent numbers refused (64) by each of the $n numeric options"

# Leading zeros are decimal, not octal: 010 is ten.
[ "$(cdc-tail --log "$L" -n 010 | wc -l)" = 10 ] || fail "-n 010 is not ten"
printf 'log = "%s"\nlimit = "0x10"\n' "$L" > "$T/hex.conf"
expect_exit 64 cdc-tail --config "$T/hex.conf"
grep -q -- '^cdc-tail: --limit: not a decimal integer: 0x10' "$T/err" || fail "config: $(cat "$T/err")"
ok "010 is ten; a --config file's numbers are checked alike"

# A seq past what a cursor can hold (SQLite's signed 64 bits) is no seq:
# a bad flag value (64), where a seq the log has not reached is bad input
# (65).
for pos in 9223372036854775808 18446744073709551615 18446744073709551616; do
  expect_exit 64 cdc-ack --log "$L" -c x --create --seek "$pos"
  grep -qx "cdc-ack: invalid position \"$pos\": seqs go up to 9223372036854775807" "$T/err" ||
    fail "--seek $pos: $(cat "$T/err")"
  expect_exit 64 cdc-tail --log "$L" --from "$pos"
  expect_exit 64 cdc-tail --log "$L" --to "$pos"
done
cdc-ack --log "$L" -c x --create
for seq in 9223372036854775808 18446744073709551616 0x10 ' 5'; do
  expect_exit 64 cdc-ack --log "$L" -c x --seek "$seq"
  expect_exit 64 cdc-ack --log "$L" -c x "$seq"
done
expect_exit 65 cdc-ack --log "$L" -c x --seek 9223372036854775807
expect_one_line '^cdc-ack: seq 9223372036854775807 is beyond the end of the log \(last seq 20\)$'
expect_exit 65 cdc-ack --log "$L" -c x 9223372036854775807
[ "$(cdc-log consumers --log "$L" --json | grep -c '"acked_seq":0')" = 1 ] || fail "a refused ack moved the cursor"
ok "a seq beyond 2^63-1 is a usage error (64); one beyond the log's end is bad input (65)"
