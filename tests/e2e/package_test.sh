#!/usr/bin/env bash
# The .deb, as an operator meets it: built with cpack from the build
# directory, installed with dpkg -i, then used: the tools and man pages are
# where man and PATH look, the units pass systemd-analyze verify and run
# the installed tools, the user cdc exists with the log's home, a second
# local user in group cdc reads the log and acks, the ssh gate lets through
# only what it names; dpkg -r and --purge leave the log as it was.
# Needs root (dpkg -i); it refuses to touch a machine where a package cdc
# is already installed.
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
  echo "skip - package_test needs root (dpkg -i); CI runs it as root"
  exit 0
fi
BUILD=$(cd "$BIN/.." && pwd)
[ -f "$BUILD/CPackConfig.cmake" ] || fail "$BUILD has no CPackConfig.cmake"
if dpkg-query -W -f='${Status}' cdc 2>/dev/null | grep -q "install ok"; then
  fail "a package cdc is installed already; this test would replace it"
fi
had_user=$(getent passwd cdc > /dev/null && echo yes || echo no)
READER=cdc-test-reader
cleanup_pkg() {
  dpkg --purge cdc > /dev/null 2>&1 || true
  userdel -r "$READER" > /dev/null 2>&1 || true
  if [ "$had_user" = no ]; then
    userdel cdc > /dev/null 2>&1 || true
    groupdel cdc > /dev/null 2>&1 || true
    rm -rf /var/lib/cdc
  fi
}
at_exit cleanup_pkg

(cd "$BUILD" && cpack -G DEB -B "$T/pkg") > "$T/cpack.log" 2>&1 ||
  { cat "$T/cpack.log" >&2; fail "cpack -G DEB"; }
DEB=$(ls "$T"/pkg/cdc_*.deb)
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's#^\./#/#' > "$T/contents"
for f in /usr/bin/cdc-capture /usr/bin/cdc-tail /usr/bin/cdc-ack /usr/bin/cdc-log \
  /usr/bin/cdc-run /usr/bin/cdc-redis /usr/bin/cdc-nats /usr/bin/cdc-pg /usr/bin/cdc-backup \
  /usr/share/man/man1/cdc-tail.1 /usr/share/man/man5/cdc-log-format.5 \
  /usr/lib/systemd/system/cdc-capture.service /usr/lib/systemd/system/cdc-run@.service \
  /usr/lib/systemd/system/cdc-pg.service \
  /usr/lib/systemd/system/cdc-backup.timer /usr/lib/sysusers.d/cdc.conf \
  /usr/libexec/cdc/cdc-ssh-gate /usr/share/cdc/prometheus/alerts.yml \
  /usr/share/doc/cdc/examples/capture.conf.example; do
  grep -qx "$f" "$T/contents" || fail "the package lacks $f"
done
! grep -q '^/var/lib/cdc' "$T/contents" || fail "the package ships files in /var/lib/cdc"
dpkg-deb -f "$DEB" Depends | grep -q libpq5 || fail "no libpq5 in Depends: $(dpkg-deb -f "$DEB" Depends)"
ok "cpack -G DEB: $(basename "$DEB"), $(wc -l < "$T/contents") entries"

dpkg -i "$DEB" > "$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log" >&2; fail "dpkg -i"; }
for t in capture tail ack log run redis nats backup; do
  /usr/bin/cdc-$t --version > /dev/null || fail "/usr/bin/cdc-$t --version"
done
[ "$(MANPAGER=cat MANWIDTH=80 man cdc-tail 2> /dev/null | grep -c 'cdc-tail')" -gt 10 ] ||
  fail "man cdc-tail does not show the page"
man -w cdc-log-format | grep -q '^/usr/share/man/man5/cdc-log-format.5' ||
  fail "man -w cdc-log-format: $(man -w cdc-log-format 2>&1)"
ok "dpkg -i: the tools in /usr/bin, man cdc-tail and man 5 cdc-log-format work"

# The units, as installed: ExecStart names /usr/bin, and each verifies
# (templates as an instance), man pages of Documentation= included.
grep -q '^ExecStart=/usr/bin/cdc-capture ' /usr/lib/systemd/system/cdc-capture.service ||
  fail "ExecStart: $(grep ExecStart /usr/lib/systemd/system/cdc-capture.service)"
! grep -rq /usr/local /usr/lib/systemd/system/cdc-* /usr/libexec/cdc/cdc-ssh-gate ||
  fail "an installed unit or the gate still names /usr/local"
mkdir "$T/units"
for u in /usr/lib/systemd/system/cdc-*; do
  cp "$u" "$T/units/$(basename "$u" | sed 's/@\./@test./')"
done
systemd-analyze verify "$T"/units/* > "$T/verify" 2>&1 ||
  { cat "$T/verify" >&2; fail "systemd-analyze verify"; }
[ ! -s "$T/verify" ] || { cat "$T/verify" >&2; fail "systemd-analyze verify warned"; }
ok "systemd-analyze verify: $(ls "$T/units" | wc -l) installed units, ExecStart in /usr/bin"

# The user the units run as, whose home holds the log.
IFS=: read -r _ _ _ _ _ home shell < <(getent passwd cdc) || fail "no user cdc"
[ "$home" = /var/lib/cdc ] && [ "$shell" = /bin/sh ] || fail "user cdc: home $home, shell $shell"
[ "$(stat -c '%U:%G %a' /var/lib/cdc)" = "cdc:cdc 750" ] ||
  fail "/var/lib/cdc is $(stat -c '%U:%G %a' /var/lib/cdc)"
ok "user cdc: home /var/lib/cdc (cdc:cdc 0750), shell /bin/sh"

# The log as the units make it (User=cdc, CDC_GROUP_ACCESS=1), and a second
# local user in group cdc that reads it and acks a consumer of its own.
gen_events 1 5 4 > "$T/events.ndjson"
chmod 644 "$T/events.ndjson"
chmod 755 "$T"
runuser -u cdc -- env CDC_GROUP_ACCESS=1 /usr/bin/cdc-log import --log /var/lib/cdc/log -q \
  < "$T/events.ndjson" || fail "import as cdc"
useradd -m -G cdc "$READER" || fail "useradd $READER"
[ "$(runuser -u "$READER" -- /usr/bin/cdc-tail --log /var/lib/cdc/log | wc -l)" = 20 ] ||
  fail "$READER cannot read the log"
runuser -u "$READER" -- /usr/bin/cdc-ack --log /var/lib/cdc/log -c reader --create --seek 7 ||
  fail "$READER cannot create its consumer"
runuser -u "$READER" -- /usr/bin/cdc-ack --log /var/lib/cdc/log -c reader --seek 11 ||
  fail "$READER cannot ack"
runuser -u "$READER" -- /usr/bin/cdc-log consumers --log /var/lib/cdc/log --json |
  grep -q '"name":"reader","acked_seq":10' || fail "reader's cursor is not at 10"
# ...and cannot write events or delete what is not its own.
! runuser -u "$READER" -- /usr/bin/cdc-log import --log /var/lib/cdc/log -q < "$T/events.ndjson" 2> /dev/null ||
  fail "a group member could append to the log"
ok "a user in group cdc reads the log and acks its consumer, and cannot append"

# The ssh gate: what the key's forced command lets through.
gate() { SSH_ORIGINAL_COMMAND="$1" runuser -u cdc -- /usr/libexec/cdc/cdc-ssh-gate indexer; }
runuser -u cdc -- /usr/bin/cdc-ack --log /var/lib/cdc/log -c indexer --create > /dev/null
timeout 3 bash -c "$(declare -f gate); gate 'cdc-tail -c indexer -f'" > "$T/gate.out" 2> /dev/null || true
[ "$(wc -l < "$T/gate.out")" = 20 ] || fail "gate: cdc-tail -c indexer -f printed $(wc -l < "$T/gate.out") lines"
timeout 3 bash -c "$(declare -f gate); gate 'cdc-tail -c indexer -f --format debezium'" > "$T/gate.dbz" 2> /dev/null || true
grep -q '"op":"c"' "$T/gate.dbz" || fail "gate: --format debezium printed nothing"
printf '%s\n' '{"seq":12}' | gate 'cdc-ack -c indexer' || fail "gate: cdc-ack -c indexer"
runuser -u cdc -- /usr/bin/cdc-log consumers --log /var/lib/cdc/log --json |
  grep -q '"name":"indexer","acked_seq":12' || fail "gate: the ack did not land"
for bad in 'cdc-tail -c reader -f' 'cdc-ack -c indexer --seek earliest' \
  'cdc-tail -c indexer -f; rm -rf /var/lib/cdc' 'sh' '' 'cdc-log retain --retain-bytes 0'; do
  rc=0
  gate "$bad" > /dev/null 2> "$T/gate.err" < /dev/null || rc=$?
  [ "$rc" = 77 ] || fail "gate let '$bad' through (exit $rc)"
done
rc=0; SSH_ORIGINAL_COMMAND='cdc-ack -c x' runuser -u cdc -- /usr/libexec/cdc/cdc-ssh-gate 'x*' 2> /dev/null || rc=$?
[ "$rc" = 64 ] || fail "gate took a pattern as a consumer name (exit $rc)"
ok "ssh gate: tail and ack of its consumer pass; anything else exits 77"

# Removal and purge keep the log.
before=$(cdc-tail --log /var/lib/cdc/log | sha256sum)
dpkg -r cdc > "$T/dpkg-r.log" 2>&1 || { cat "$T/dpkg-r.log" >&2; fail "dpkg -r"; }
[ ! -e /usr/bin/cdc-tail ] && [ ! -e /usr/lib/systemd/system/cdc-capture.service ] ||
  fail "dpkg -r left the tools or units"
dpkg --purge cdc > "$T/dpkg-p.log" 2>&1 || { cat "$T/dpkg-p.log" >&2; fail "dpkg --purge"; }
[ "$(cdc-tail --log /var/lib/cdc/log | sha256sum)" = "$before" ] || fail "the log changed on removal"
cdc-log verify --log /var/lib/cdc/log -q || fail "the log no longer verifies"
cdc-log consumers --log /var/lib/cdc/log --json | grep -q '"name":"reader","acked_seq":10' ||
  fail "the cursors changed on removal"
getent passwd cdc > /dev/null || fail "purge removed the user cdc"
ok "dpkg -r and --purge: tools gone, the log, its cursors and the user kept"
