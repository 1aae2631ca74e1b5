#!/usr/bin/env bash
# What earlier releases left on disk, in this release's hands. Each
# directory of tests/upgrade/fixtures was written by one release's own
# binaries (scripts/make-upgrade-fixture.sh): a log, its consumers.db and a
# full and an incremental backup, with what that release printed. This
# release must verify the log and print the same events; honour each
# consumer's cursor and stored selection; follow the log while another
# writer appends to it; move cursors; verify and restore the backups to
# the same log; and take an incremental backup on top of the old chain.
# The log of format 1 (tests/log/fixtures/format1, the release before
# grouped frames) is read, verified and appended to, which raises its
# format version. The in-place upgrade of running tools is
# tests/upgrade/inplace_test.sh (it needs the old release's binaries).
source "$(dirname "$0")/../e2e/lib.sh"
UP=$(cd "$(dirname "$0")" && pwd)
n=0
for F in "$UP"/fixtures/*/; do
  F=${F%/}
  rel=$(basename "$F")
  n=$((n + 1))
  W=$T/$rel
  mkdir -p "$W"
  cp -a "$F/log" "$W/log"
  cp -a "$F/backup" "$W/backup"
  L=$W/log

  # Read: the same events, cursors and selections.
  cdc-log verify --log "$L" -q || fail "$rel: cdc-log verify"
  cdc-tail --log "$L" --schema-changes > "$W/tail.ndjson"
  cmp -s "$W/tail.ndjson" "$F/expect/tail.ndjson" ||
    fail "$rel: cdc-tail prints other events than the release did: $(diff "$F/expect/tail.ndjson" "$W/tail.ndjson" | head -3)"
  cdc-tail --log "$L" -c early --schema-changes | cmp -s - "$F/expect/early.ndjson" ||
    fail "$rel: consumer early does not resume where the release left it"
  cdc-tail --log "$L" -c sel | cmp -s - "$F/expect/sel.ndjson" ||
    fail "$rel: consumer sel's stored selection is not honoured"
  cdc-log consumers --log "$L" --json > "$W/consumers.json"
  python3 - "$F/expect/consumers.json" "$W/consumers.json" <<'PY' || fail "$rel: consumers differ"
import json, sys
def load(p):
    return {c["name"]: (c["acked_seq"], c.get("selection")) for c in map(json.loads, open(p))}
want, got = load(sys.argv[1]), load(sys.argv[2])
if want != got:
    print(want, got)
    sys.exit(1)
PY
  last=$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
  ok "$rel: the log verifies and prints byte for byte what the release printed ($last events); cursors and selections as it left them"

  # Follow while this release appends; move cursors.
  cdc-tail --log "$L" -c done -f --schema-changes > "$W/followed.ndjson" 2> "$W/follow.err" &
  follower=$!
  python3 "$UP/workload.py" 61 80 | cdc-log import --log "$L" -q || fail "$rel: appending"
  end=$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
  for _ in $(seq 100); do
    [ "$(wc -l < "$W/followed.ndjson")" -ge $((end - last)) ] && break
    sleep 0.05
  done
  kill "$follower"; wait "$follower" 2>/dev/null || true
  cdc-tail --log "$L" --from "$((last + 1))" --schema-changes | cmp -s - "$W/followed.ndjson" ||
    fail "$rel: the follower of consumer done printed $(wc -l < "$W/followed.ndjson") of $((end - last)) appended events"
  cdc-log verify --log "$L" -q || fail "$rel: verify after appending"
  cdc-ack --log "$L" -c early "$end"
  cdc-ack --log "$L" -c sel --seek 1
  cdc-log consumers --log "$L" --json | python3 -c '
import json, sys
c = {x["name"]: x["acked_seq"] for x in map(json.loads, sys.stdin)}
want = {"early": int(sys.argv[1]), "sel": 0}
sys.exit(any(c.get(k) != v for k, v in want.items()))' "$end" || fail "$rel: cdc-ack on the old consumers.db"
  ok "$rel: followed while appended to ($((end - last)) events), and its cursors moved"

  # The old backups: verified, restored to the same log, and extended.
  cdc-backup verify "$W/backup/incr" --base-dir "$W/backup" -q || fail "$rel: cdc-backup verify"
  cdc-backup restore "$W/backup/incr" --base-dir "$W/backup" --log "$W/restored" -q ||
    fail "$rel: cdc-backup restore"
  cdc-log verify --log "$W/restored" -q || fail "$rel: the restored log does not verify"
  cdc-tail --log "$W/restored" --schema-changes | cmp -s - "$F/expect/tail.ndjson" ||
    fail "$rel: the restored log differs from the one backed up"
  cdc-log consumers --log "$W/restored" --json > "$W/restored.json"
  cmp -s <(python3 -c 'import json,sys; [print(j["name"], j["acked_seq"]) for j in map(json.loads, open(sys.argv[1]))]' "$W/restored.json") \
    <(python3 -c 'import json,sys; [print(j["name"], j["acked_seq"]) for j in map(json.loads, open(sys.argv[1]))]' "$F/expect/consumers.json") ||
    fail "$rel: the restored consumers differ"
  cdc-backup create --log "$L" --out "$W/backup/incr2" --incremental "$W/backup/incr" -q ||
    fail "$rel: an incremental backup on the old chain"
  cdc-backup restore "$W/backup/incr2" --base-dir "$W/backup" --log "$W/restored2" -q ||
    fail "$rel: restoring the extended chain"
  cmp -s <(cdc-tail --log "$W/restored2" --schema-changes) <(cdc-tail --log "$L" --schema-changes) ||
    fail "$rel: the extended chain restores another log"
  ok "$rel: its backups verify and restore the same log and consumers; a new incremental backup extends the chain"
done
[ "$n" -gt 0 ] || fail "no fixtures in $UP/fixtures"

# Format 1: read as it is; the first append raises the format version.
F1=$(cd "$UP/../log/fixtures" && pwd)/format1
cp -a "$F1" "$T/f1"
cdc-log verify --log "$T/f1" -q || fail "format 1: verify"
cdc-tail --log "$T/f1" | cmp -s - "$F1.ndjson" || fail "format 1: cdc-tail differs from the release's"
v() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["format_version"])' "$T/f1/log.json"; }
[ "$(v)" = 1 ] || fail "format 1: read-only use changed log.json"
python3 "$UP/workload.py" 61 70 | cdc-log import --log "$T/f1" -q || fail "format 1: appending"
[ "$(v)" = 2 ] || fail "format 1: the version was not raised on the first append"
cdc-log verify --log "$T/f1" -q || fail "format 1: verify after appending"
cdc-tail --log "$T/f1" | head -n "$(wc -l < "$F1.ndjson")" | cmp -s - "$F1.ndjson" ||
  fail "format 1: the old events changed on append"
ok "format 1: read and verified as it is; the first append raises it to format 2 and keeps the old events"
