#!/usr/bin/env bash
# What a user reads agrees with what the tools do, and installs where they
# look: `cmake --install` puts every tool in bin and every man page where
# man(1) finds it; every option a tool's --help lists (its subcommands'
# included) is in its man page, and every option the man page's SYNOPSIS
# and OPTIONS name is one the tool accepts; every systemd example passes
# `systemd-analyze verify` against the installed tools and pages.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$BIN/.." && pwd)
[ -f "$BUILD/cmake_install.cmake" ] || fail "$BUILD is not a CMake build directory"

P="$T/prefix"
cmake --install "$BUILD" --prefix "$P" > "$T/install.log" ||
  { cat "$T/install.log" >&2; fail "cmake --install failed"; }
tools=$(cd "$BIN" && ls cdc-* | grep -v '\.' | sort)
[ -n "$tools" ] || fail "no tools in $BIN"
for t in $tools; do
  [ -x "$P/bin/$t" ] || fail "$t is not installed in bin"
  [ -f "$P/share/man/man1/$t.1" ] || fail "$t.1 is not installed"
  man -M "$P/share/man" -w "$t" > /dev/null 2>&1 || fail "man cannot find $t"
  # The page renders without groff warnings (unknown macros, bad escapes).
  warn=$(MANWIDTH=80 man -M "$P/share/man" --warnings "$t" 2>&1 > /dev/null || true)
  [ -z "$warn" ] || fail "man $t: $warn"
done
man -M "$P/share/man" -w 5 cdc-log-format > /dev/null 2>&1 ||
  fail "man cannot find cdc-log-format(5)"
ok "cmake --install: $(echo $tools | wc -w) tools and their man pages"

# Long options a tool accepts, from its --help and its subcommands'.
help_options() {
  local b=$1 s
  {
    "$b" --help
    for s in $("$b" --help | awk '/^Subcommands:/ { f = 1; next } f && NF { print $1 }'); do
      "$b" "$s" --help
    done
  } | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
# Long options a man page names; with SECTIONS, only in those sections.
man_options() {
  sed 's/\\-/-/g' "$1" |
    awk -v want="$2" '/^\.SH/ { f = (want == "" || index(want, " " $2 " ")) } f' |
    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
for t in $tools; do
  page="$ROOT/man/$t.1"
  help_options "$BIN/$t" > "$T/help"
  [ -s "$T/help" ] || fail "$t --help lists no options"
  man_options "$page" "" > "$T/man"
  undocumented=$(comm -23 "$T/help" "$T/man" | tr '\n' ' ')
  [ -z "$undocumented" ] || fail "$t: --help lists options its man page lacks: $undocumented"
  man_options "$page" " SYNOPSIS OPTIONS " > "$T/man"
  unknown=$(comm -13 "$T/help" "$T/man" | tr '\n' ' ')
  [ -z "$unknown" ] || fail "$t: man page's SYNOPSIS/OPTIONS name options --help lacks: $unknown"
done
ok "--help and man pages name the same options"

# The systemd units as cmake --install writes them: ExecStart names the
# prefix's tools (never /usr/local when the prefix is elsewhere), and
# each verifies against the installed tools and pages.
command -v systemd-analyze > /dev/null || fail "systemd-analyze missing (scripts/deps.sh installs systemd)"
mkdir "$T/units"
units=0
for u in "$P"/lib/systemd/system/cdc-*; do
  [ -e "$u" ] || continue
  grep -q /usr/local "$u" && fail "$u names /usr/local"
  # A template is verified as one of its instances.
  cp "$u" "$T/units/$(basename "$u" | sed 's/@\./@test./')"
  units=$((units + 1))
done
[ "$units" = "$(ls "$ROOT"/contrib/systemd/*.service "$ROOT"/contrib/systemd/*.timer | wc -l)" ] ||
  fail "cmake --install wrote $units units, contrib/systemd has more"
grep -q "^ExecStart=$P/bin/cdc-capture " "$P/lib/systemd/system/cdc-capture.service" ||
  fail "ExecStart does not name $P/bin"
grep -q "^bindir=$P/bin$" "$P/libexec/cdc/cdc-ssh-gate" || fail "the ssh gate does not name $P/bin"
MANPATH="$P/share/man" systemd-analyze verify "$T"/units/* > "$T/verify" 2>&1 ||
  { cat "$T/verify" >&2; fail "systemd-analyze verify failed"; }
[ ! -s "$T/verify" ] || { cat "$T/verify" >&2; fail "systemd-analyze verify warned"; }
ok "systemd-analyze verify: $units units"

# The Prometheus alert rules parse, and name only metrics the tools write.
command -v promtool > /dev/null || fail "promtool missing (scripts/deps.sh installs prometheus)"
promtool check rules "$ROOT/contrib/prometheus/alerts.yml" > "$T/promtool" 2>&1 ||
  { cat "$T/promtool" >&2; fail "promtool check rules"; }
# Each alert quiet on a healthy series and firing on a broken one.
promtool test rules "$ROOT/contrib/prometheus/alerts_test.yml" > "$T/promtool" 2>&1 ||
  { cat "$T/promtool" >&2; fail "promtool test rules"; }
for a in $(grep -o 'alert: [A-Za-z]*' "$ROOT/contrib/prometheus/alerts.yml" | cut -d' ' -f2); do
  grep -q "alertname: $a\$" "$ROOT/contrib/prometheus/alerts_test.yml" ||
    fail "alert $a has no test in contrib/prometheus/alerts_test.yml"
done
names=$(grep -ho 'cdc_[a-z_]*' "$ROOT/contrib/prometheus/alerts.yml" | sed 's/_bucket$//' | sort -u)
for n in $names; do
  # cdc-redis and cdc-nats put their prefix before each name.
  grep -rqs -e "$n" -e "\"${n#cdc_*_}" "$ROOT/lib" "$ROOT/tools" ||
    fail "alerts.yml names $n, which no tool writes"
done
ok "contrib/prometheus/alerts.yml: promtool accepts it; its $(echo "$names" | wc -l) metrics exist"

# Every exit code in the README's table is described in a man page's EXIT
# STATUS section.
python3 - "$ROOT" <<'PY' || fail "exit codes"
import glob, re, sys
root = sys.argv[1]
readme = open(root + "/README.md").read()
table = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
codes = sorted({int(c) for c in re.findall(r"(?:^|· )(\d{1,2}) ", table, re.M)})
assert {0, 1, 10, 11, 64, 65, 66, 69, 70, 73, 74, 75, 77, 78} <= set(codes), codes
described = set()
for page in glob.glob(root + "/man/*.[15]"):
    text = open(page).read()
    if ".SH EXIT STATUS" not in text:
        continue
    section = text.split(".SH EXIT STATUS", 1)[1].split("\n.SH ", 1)[0]
    described |= {int(c) for c in re.findall(r"^\.B (\d+)$", section, re.M)}
missing = [c for c in codes if c not in described]
assert not missing, f"README exit codes no man page describes: {missing}"
print(f"{len(codes)} exit codes")
PY
ok "every exit code of the README's table is in a man page's EXIT STATUS"
