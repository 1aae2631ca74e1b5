#!/usr/bin/env bash
# cdc-nats against a real 3-node JetStream cluster with R3 streams: every
# op, its headers and subject; a larger log stored once, in order; resume
# and replays that publish nothing twice; two sinks racing on one stream;
# the formats; the --stdin pipe; SIGTERM; and the failures' exit codes
# (another log's stream, a foreign publisher, a full stream, no JetStream,
# permission denied, credentials, bad options). NATS_EVENTS: the larger
# log's size (100,000).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../../scripts/nats.sh"
NATS_NO_TRAP=1 nats_start "$T"
[ -n "${NATS_DEBUG:-}" ] && at_exit "cp -r $T /tmp/nt/last"
at_exit nats_stop
L="$T/log"
PROBE="$BIN/../bench/cdc-nats-probe"  # a test client (bench/nats/probe.cpp)
P() { "$PROBE" "$NATS_URLS" "$@"; }
sink() { cdc-nats --log "$L" --server "$NATS_URLS" --replicas 3 -q "$@"; }
acked() { cdc-log consumers --log "${2:-$L}" --json | python3 -c "
import json, sys
for l in sys.stdin:
    c = json.loads(l)
    if c['name'] == '$1': print(c['acked_seq'])"; }

expect_exit 0 cdc-nats --help
for f in --log --server --stream --subject --replicas --stdin --format --creds --tls-ca --metrics-file --max-in-flight --reconnect-max; do
  grep -q -- "$f" "$T/out" || fail "--help does not document $f"
done
expect_exit 0 cdc-nats --version
grep -qE '^cdc-nats \(cdc\) [0-9]+\.[0-9]+\.[0-9]+$' "$T/out" || fail "--version: $(cat "$T/out")"
expect_exit 64 cdc-nats --no-such-flag
expect_exit 64 cdc-nats --log "$L" -c a --server "$NATS_URLS" --stream 'a.b'
expect_exit 64 cdc-nats --log "$L" -c a --server "http://x" --stream S
expect_exit 64 cdc-nats --log "$L" -c a --server "$NATS_URLS" --stream S --subject 'cdc.{schema}'
expect_exit 64 cdc-nats --log "$L" -c a --server "$NATS_URLS" --stream S --subject 'cdc.*.{table}'
expect_exit 64 cdc-nats --stdin -c a --server "$NATS_URLS" --stream S
expect_exit 64 cdc-nats --log "$L" -c a --server "$NATS_URLS" --stream S --stdin --format debezium
ok "help, version, bad options"

# --- every op -----------------------------------------------------------
h() { printf '{"lsn":"0/%X","xid":%d,"ts":"2026-11-29T07:00:00Z"' "$(($1 * 256))" "$1"; }
{
  echo "$(h 1),\"op\":\"c\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"note\":\"a\nb\"}}"
  echo "$(h 1),\"op\":\"c\",\"schema\":\"my.shop\",\"table\":\"it ems\",\"key\":{\"id\":2},\"before\":null,\"after\":{\"id\":2}}"
  echo "$(h 2),\"op\":\"u\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1},\"unchanged\":[\"note\"]}"
  echo "$(h 2),\"op\":\"m\",\"prefix\":\"app\",\"content\":\"hi\",\"transactional\":true}"
  echo "$(h 3),\"op\":\"d\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":1},\"before\":null,\"after\":null}"
  echo "$(h 4),\"op\":\"s\",\"schema\":\"public\",\"table\":\"orders\",\"key\":null,\"before\":null,\"after\":null,\"columns\":[]}"
  echo "$(h 4),\"op\":\"t\",\"schema\":\"public\",\"table\":\"orders\",\"key\":null,\"before\":null,\"after\":null,\"options\":{\"cascade\":false,\"restart_identity\":false}}"
  echo "$(h 5),\"op\":\"r\",\"schema\":\"public\",\"table\":\"orders\",\"key\":{\"id\":3},\"before\":null,\"after\":{\"id\":3}}"
} > "$T/ops.ndjson"
cdc-log import --log "$L" -q < "$T/ops.ndjson"
cdc-tail --log "$L" --schema-changes > "$T/events"
logid=$(python3 -c "import json; print(json.load(open('$L/log.json'))['log_id'])")
sink -c ops --stream OPS --metrics-file "$T/metrics"
P json OPS > "$T/ops.json"
python3 - "$T/events" "$T/ops.json" "$logid" <<'PY' || fail "OPS stream differs from the log"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
msgs = [json.loads(l) for l in open(sys.argv[2])]
logid = sys.argv[3]
assert len(msgs) == len(events), (len(msgs), len(events))
subjects = []
for i, (e, m) in enumerate(zip(events, msgs)):
    h = m["headers"]
    assert m["stream_seq"] == i + 1
    assert m["body"] == e, (m["body"], e)
    assert h["Nats-Msg-Id"] == "%s:%d" % (logid, e["seq"]), h
    assert "Cdc-Log" not in h and h["Cdc-Seq"] == str(e["seq"])
    assert h["Cdc-Lsn"] == e["lsn"] and h["Cdc-Xid"] == str(e["xid"]) and h["Cdc-Op"] == e["op"]
    assert h.get("Cdc-Table", "") == ("%s.%s" % (e["schema"], e["table"]) if "table" in e else "")
    assert (h.get("Cdc-Last") == "true") == bool(e.get("last")), (h, e)
    subjects.append(m["subject"])
assert subjects == ["cdc.public.orders", "cdc.my%2Eshop.it%20ems", "cdc.public.orders",
                    "cdc._._", "cdc.public.orders", "cdc.public.orders",
                    "cdc.public.orders", "cdc.public.orders"], subjects
PY
[ "$(acked ops)" = 8 ] || fail "ops acked $(acked ops), not 8"
[ "$(metric cdc_nats_events_published_total "$T/metrics")" = 8 ] || { cat "$T/metrics"; fail "metrics"; }
[ "$(metric cdc_nats_acked_seq "$T/metrics")" = 8 ] || fail "metrics acked_seq"
grep -q "^cdc_nats_acked_seq{log_id=\"$logid\",consumer=\"[^\"]*\",stream=\"OPS\"} 8\$" "$T/metrics" ||
  fail "metrics labels: $(grep acked_seq "$T/metrics")"
# A replay (the cursor moved back) and a new consumer publish nothing: the
# stream's last message wins.
cdc-ack --log "$L" -c ops --seek earliest
sink -c ops --stream OPS
sink -c ops2 --stream OPS
[ "$(P dump OPS | wc -l)" = 8 ] || fail "a replay published again"
[ "$(acked ops)" = 8 ] && [ "$(acked ops2)" = 8 ] || fail "replays not acked"
ok "every op: body, headers, subjects, last-event marker, metrics; replays publish nothing"

# --- a transaction larger than the batch -------------------------------
# One transaction of 100,000 events of 1 KB (an initial snapshot's shape)
# is read, published and acked in pieces of --batch: the sink holds a few
# batches, not the transaction (it held it whole, and its messages again).
# A sanitizer's build (its runtime in the binary) sends fewer and its
# memory, the sanitizer's, is not weighed.
LB="$T/bigtxn"
big=100000 asan=0
asan_build cdc-nats && big=20000 asan=1
python3 - "$big" > "$T/big.ndjson" <<'PY'
import sys
pad = "x" * 1000
for i in range(1, int(sys.argv[1]) + 1):
    sys.stdout.write('{"lsn":"0/100","xid":7,"ts":"2026-11-29T07:00:00Z","op":"r",'
                     '"schema":"public","table":"big","key":{"id":%d},"before":null,'
                     '"after":{"id":%d,"pad":"%s"}}\n' % (i, i, pad))
PY
cdc-log import --log "$LB" -q < "$T/big.ndjson"
[ "$(cdc-tail --log "$LB" | grep -c '"last":true')" = 1 ] || fail "the big log is not one transaction"
/usr/bin/time -v -o "$T/time" cdc-nats --log "$LB" --server "$NATS_URLS" --replicas 1 -q -c big \
  --stream ONETXN --subject 'onetxn.{schema}.{table}' ||
  { cat "$T/time" >&2; fail "big transaction: cdc-nats failed"; }
peak=$(rss_kb "$T/time")
P dump ONETXN > "$T/big.dump"
python3 - "$T/big.dump" "$big" <<'PY' || fail "stream ONETXN: not each seq once in order, or Cdc-Last not on the last alone"
import sys
n = int(sys.argv[2])
rows = [l.split() for l in open(sys.argv[1])]
assert len(rows) == n, len(rows)
for i, r in enumerate(rows, 1):
    assert int(r[0]) == i and int(r[2]) == i, r
    assert (r[3] == "true") == (i == n), r
PY
[ "$(acked big "$LB")" = "$big" ] || fail "big acked $(acked big "$LB"), not $big"
# (The same events in transactions of 1,000 take as much, 69 MB: the
# messages --max-in-flight 1024 lets wait are most of it; 24 MB at 64.)
mb=$(($(stat -c %s "$T/big.ndjson") / 1048576))
[ "$asan" = 1 ] || [ "$peak" -lt $((mb * 1024)) ] ||
  fail "peak RSS $((peak / 1024)) MB publishing a $mb MB transaction (not less than its size)"
ok "a $big-event transaction ($mb MB) published in pieces of --batch: peak RSS $((peak / 1024)) MB$([ "$asan" = 1 ] && echo ' (a sanitizer'"'"'s, not weighed)'), each seq once, Cdc-Last on its last event alone"

# Formats: the bodies are cdc-tail's, in the same order.
for f in debezium cloudevents; do
  sink -c "f$f" --stream "F$f" --subject "$f.{schema}.{table}" --format "$f"
  P json "F$f" | python3 -c "
import json, sys
print('\n'.join(json.dumps(json.loads(l)['body'], sort_keys=True) for l in sys.stdin))" > "$T/got.$f"
  cdc-tail --log "$L" --schema-changes --format "$f" | python3 -c "
import json, sys
print('\n'.join(json.dumps(json.loads(l), sort_keys=True) for l in sys.stdin))" > "$T/want.$f"
  python3 - "$T/got.$f" "$T/want.$f" "$f" <<'PY' || fail "$f bodies differ"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
strip = lambda d: {k: v for k, v in d.items() if k not in ("ts_ms", "ts_us", "ts_ns")}
assert len(got) == len(want), (len(got), len(want))
for g, w in zip(got, want):
    assert strip(g) == strip(w), (g, w)
PY
done
ok "--format debezium and cloudevents: cdc-tail's bodies"

# Debezium's value modes: cdc-tail's flags, cdc-tail's bodies.
{
  echo "$(h 1),\"op\":\"s\",\"schema\":\"public\",\"table\":\"prices\",\"key\":null,\"before\":null,\"after\":null,\"columns\":[{\"name\":\"id\",\"type_oid\":23,\"key\":true},{\"name\":\"amount\",\"type_oid\":1700,\"type_mod\":655366,\"key\":false},{\"name\":\"raw\",\"type_oid\":17,\"key\":false},{\"name\":\"at\",\"type_oid\":1083,\"key\":false}]}"
  echo "$(h 1),\"op\":\"c\",\"schema\":\"public\",\"table\":\"prices\",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"amount\":\"-12.50\",\"raw\":\"AQL/\",\"at\":\"07:41:02.123456\"}}"
} > "$T/typed.ndjson"
cdc-log import --log "$T/typed" -q < "$T/typed.ndjson"
modes=(--decimal-handling string --time-precision connect --binary-handling hex)
cdc-nats --log "$T/typed" -c m --server "$NATS_URLS" --stream MODES \
  --subject "modes.{schema}.{table}" --format debezium "${modes[@]}" -q ||
  fail "cdc-nats with the debezium modes"
P json MODES | python3 -c "
import json, sys
for l in sys.stdin:
    b = json.loads(l)['body']
    print(json.dumps({k: b[k] for k in ('before', 'after', 'op')}, sort_keys=True))" > "$T/got.modes"
cdc-tail --log "$T/typed" --format debezium "${modes[@]}" | python3 -c "
import json, sys
for l in sys.stdin:
    b = json.loads(l)
    print(json.dumps({k: b[k] for k in ('before', 'after', 'op')}, sort_keys=True))" > "$T/want.modes"
cmp -s "$T/got.modes" "$T/want.modes" || fail "bodies with modes differ from cdc-tail's"
grep -q '"amount": "-12.50"' "$T/got.modes" && grep -q '"raw": "0102ff"' "$T/got.modes" ||
  fail "the modes were not applied: $(cat "$T/got.modes")"
expect_exit 64 cdc-nats --log "$T/typed" -c m2 --server "$NATS_URLS" --stream MODES2 --decimal-handling double
expect_exit 64 cdc-nats --log "$T/typed" -c m2 --server "$NATS_URLS" --stream MODES2 --format debezium --binary-handling hexx
ok "--decimal-handling, --time-precision, --binary-handling: cdc-tail's values"

# --- the pipe ------------------------------------------------------------
cdc-tail --log "$L" --schema-changes | cdc-nats --stdin --log "$L" -c pipe \
  --server "$NATS_URLS" --stream PIPE --subject 'pipe.{schema}.{table}' -q > "$T/echo"
cmp -s "$T/echo" "$T/events" || fail "--stdin did not echo every stored event"
cdc-tail --log "$L" --schema-changes | cdc-nats --stdin --log-id "$logid" -c pipe \
  --server "$NATS_URLS" --stream PIPE --subject 'pipe.{schema}.{table}' -q > "$T/echo2"
[ "$(P dump PIPE | wc -l)" = 8 ] || fail "--stdin replay published again"
# What the stream already held is echoed all the same, so a cdc-ack
# downstream moves past it.
cmp -s "$T/echo2" "$T/events" || fail "--stdin replay did not echo what the stream holds"
ok "--stdin: echoes what is stored; a replay publishes nothing and echoes it all"

# A malformed line after 20 good ones (no "last", so the 20th event's
# transaction is still open when the bad line comes): 65, and the 19
# events stored are echoed, so a cdc-ack downstream moves past them.
gen_events 1 20 1 | cdc-log import --log "$T/twenty" -q
{ cdc-tail --log "$T/twenty" | sed 's/,"last":true//'; echo '{"seq":21,"lsn":'; } > "$T/bad.ndjson"
expect_exit 65 cdc-nats --stdin --log "$T/twenty" -c badin --server "$NATS_URLS" --stream BADIN \
  --subject 'badin.{schema}.{table}' -q < "$T/bad.ndjson"
expect_one_line 'stdin line 21: '
[ "$(P dump BADIN | wc -l)" = 19 ] || fail "bad input: the stream holds $(P dump BADIN | wc -l) events, want 19"
head -19 "$T/bad.ndjson" | cmp -s - "$T/out" || fail "bad input: echoed $(wc -l < "$T/out") lines, want the 19 stored"
ok "--stdin: malformed line 65, the events stored before it echoed"

# --- a larger log, two sinks racing on one stream, SIGTERM -----------------
N=${NATS_EVENTS:-100000}
L2="$T/big"
gen_events 1 $((N / 10)) 10 | cdc-log import --log "$L2" -q
cdc-nats --log "$L2" -c r1 --server "$NATS_URLS" --stream BIG --subject 'big.{table}' --replicas 3 -f 2>"$T/r1.err" &
r1=$!
cdc-nats --log "$L2" -c r2 --server "$NATS_URLS" --stream BIG --subject 'big.{table}' --replicas 3 -f 2>"$T/r2.err" &
r2=$!
for ((w = 0; w < 600; w++)); do
  [ "$(acked r1 "$L2")" = "$N" ] && [ "$(acked r2 "$L2")" = "$N" ] && break
  sleep 0.1
done
kill -TERM $r1 $r2
rc1=0; wait $r1 || rc1=$?
rc2=0; wait $r2 || rc2=$?
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] || { cat "$T/r1.err" "$T/r2.err" >&2; fail "racing sinks exited $rc1 $rc2 on SIGTERM"; }
P dump ONETXN > "$T/big.dump"
python3 - "$T/big.dump" "$N" <<'PY' || fail "BIG does not hold each seq once, in order"
import sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
seqs = [int(r[2]) for r in rows]
assert seqs == list(range(1, n + 1)), (len(seqs), [s for i, s in enumerate(seqs) if s != i + 1][:5])
assert [int(r[0]) for r in rows] == list(range(1, n + 1))
PY
[ "$(acked r1 "$L2")" = "$N" ] && [ "$(acked r2 "$L2")" = "$N" ] || fail "racing sinks not acked to the end"
ok "$N events by two racing sinks: each seq once, in order ($(cat "$T/r1.err" "$T/r2.err" | grep -c 'moved under') refusals seen)"

# A sink with a stale view, beyond the duplicate window: B reads the
# stream's end (empty) and waits on its stdin while A publishes everything;
# once the window has passed, B is given the same events. Only the
# expected-last-sequence check stands between B and a second copy of each.
mkfifo "$T/stale.fifo"
cdc-nats --stdin --log "$L2" -c staleb --server "$NATS_URLS" --stream STALE \
  --subject 'stale.{table}' --replicas 3 --duplicate-window 1s < "$T/stale.fifo" \
  > "$T/stale.echo" 2> "$T/stale.err" &
staleb=$!
exec 7> "$T/stale.fifo"
for ((w = 0; w < 100; w++)); do
  P req '$JS.API.STREAM.INFO.STALE' 2>/dev/null | grep -q '"state"' && break
  sleep 0.1
done
sleep 0.5  # B has read the stream's (empty) end
cdc-nats --log "$L2" -c stalea --server "$NATS_URLS" --stream STALE --subject 'stale.{table}' -q
sleep 1.5  # past the duplicate window
cdc-tail --log "$L2" >&7
exec 7>&-
rc=0; wait $staleb || rc=$?
[ "$rc" = 0 ] || { cat "$T/stale.err" >&2; fail "stale sink exited $rc"; }
P dump STALE > "$T/stale.dump"
python3 - "$T/stale.dump" "$N" <<'PY' || fail "STALE does not hold each seq once, in order"
import sys
seqs = [int(l.split()[2]) for l in open(sys.argv[1])]
n = int(sys.argv[2])
assert seqs == list(range(1, n + 1)), (len(seqs), n)
PY
grep -q 'moved under this sink' "$T/stale.err" || { cat "$T/stale.err" >&2; fail "the stale sink was not refused"; }
ok "a sink with a stale view past the duplicate window: refused, resynced, each seq once"

# --- failures -------------------------------------------------------------
# Another log's stream: 78, nothing published, nothing acked.
gen_events 1 3 2 | cdc-log import --log "$T/other" -q
expect_exit 78 cdc-nats --log "$T/other" -c x --server "$NATS_URLS" --stream OPS -q
expect_one_line 'holds the events of log'
# A foreign publisher in the stream: 75.
P req cdc.foreign.x '{}' >/dev/null
expect_exit 75 cdc-nats --log "$L" -c ops --server "$NATS_URLS" --stream OPS -q
expect_one_line 'not published by cdc-nats'
# One whose Nats-Msg-Id has cdc-nats's form (LOG_ID:SEQ) but no Cdc-Seq.
P pub cdc.foreign.x '{}' "Nats-Msg-Id: $logid:999999" >/dev/null
expect_exit 75 cdc-nats --log "$L" -c ops --server "$NATS_URLS" --stream OPS -q
expect_one_line 'not published by cdc-nats'
# A full stream (--max-bytes, discard new): 74; acked = what it stored.
expect_exit 74 cdc-nats --log "$L2" -c full --server "$NATS_URLS" --stream FULL --subject 'full.{table}' \
  --replicas 3 --max-bytes 20k -q
expect_one_line 'stream is full'
last=$(P dump FULL | tail -1 | cut -d' ' -f3)
[ -n "$last" ] && [ "$(acked full "$L2")" = "$last" ] || fail "full: acked $(acked full "$L2"), stream holds up to $last"
ok "another log's stream 78, a foreign publisher 75, a full stream 74 (acked $last = stored)"

# No JetStream, permission denied, bad password: single servers.
read -r p1 p2 p3 <<<"$(_nats_free_ports 3)"
nats-server -a 127.0.0.1 -p "$p1" >"$T/nojs.log" 2>&1 &
nojs=$!
at_exit "kill -9 $nojs"
cat > "$T/auth.conf" <<EOF
listen: 127.0.0.1:$p2
jetstream { store_dir: "$T/authjs" }
authorization {
  users = [
    {user: admin, password: s3cret}
    {user: ro, password: s3cret, permissions: {publish: {deny: ["cdc.>"]}}}
  ]
}
EOF
nats-server -c "$T/auth.conf" >"$T/auth.log" 2>&1 &
auth=$!
at_exit "kill -9 $auth"
sleep 0.5
expect_exit 78 cdc-nats --log "$L" -c nojs --server "nats://127.0.0.1:$p1" --stream S --reconnect-max 2 -q
expect_one_line 'JetStream is not enabled'
NATS_USER=admin NATS_PASSWORD=Wr0ngPassw0rdXyz expect_exit 77 cdc-nats --log "$L" -c pw \
  --server "nats://127.0.0.1:$p2" --stream S --reconnect-max 2 -q
expect_one_line 'uthorization'
! grep -q Wr0ngPassw0rdXyz "$T/err" || fail "the error shows the password"
expect_exit 77 cdc-nats --log "$L" -c pw --server "nats://admin:Wr0ngPassw0rdXyz@127.0.0.1:$p2" \
  --stream S --reconnect-max 2 -q
! grep -q Wr0ngPassw0rdXyz "$T/err" || fail "the error shows the URL's password"
NATS_USER=ro NATS_PASSWORD=s3cret expect_exit 77 cdc-nats --log "$L" -c ro \
  --server "nats://127.0.0.1:$p2" --stream S --timeout 2 --reconnect-max 5 -q
expect_one_line 'Permissions Violation'
[ -z "$(acked ro)" ] || [ "$(acked ro)" = 0 ] || fail "permission denied, yet acked $(acked ro)"
ok "no JetStream 78, wrong password 77 (never shown), publish denied 77 (nothing acked)"

# Replicas a single server cannot hold: bad configuration (78), not a bug
# (70) that a service manager would restart forever.
NATS_USER=admin NATS_PASSWORD=s3cret expect_exit 78 cdc-nats --log "$L" -c r5 \
  --server "nats://127.0.0.1:$p2" --stream R5 --replicas 5 --reconnect-max 2 -q
expect_one_line 'create stream R5: .*replicas'
ok "--replicas 5 against a single server: 78"

# TLS: a server whose certificate a CA made here signs. With --tls-ca the
# sink verifies it and publishes; without, the handshake fails (78).
( cd "$T" &&
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca \
    -keyout ca.key -out ca.pem 2>/dev/null &&
  openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
    -keyout srv.key -out srv.csr 2>/dev/null &&
  printf 'subjectAltName=IP:127.0.0.1\n' > srv.ext &&
  openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -days 2 -extfile srv.ext -out srv.pem 2>/dev/null ) || fail "openssl"
cat > "$T/tls.conf" <<EOF
listen: 127.0.0.1:$p3
jetstream { store_dir: "$T/tlsjs" }
tls { cert_file: "$T/srv.pem", key_file: "$T/srv.key", timeout: 2 }
EOF
nats-server -c "$T/tls.conf" >"$T/tls.log" 2>&1 &
tlspid=$!
at_exit "kill -9 $tlspid"
sleep 0.5
expect_exit 0 cdc-nats --log "$L" -c tls --server "tls://127.0.0.1:$p3" --tls-ca "$T/ca.pem" \
  --stream TLS --subject 'tls.{schema}.{table}' -q
[ "$(acked tls)" = "$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')" ] ||
  fail "TLS: acked $(acked tls)"
expect_exit 78 cdc-nats --log "$L" -c tls2 --server "tls://127.0.0.1:$p3" \
  --stream TLS --subject 'tls.{schema}.{table}' --reconnect-max 2 -q
expect_one_line 'SSL|TLS|certificate|handshake'
[ -z "$(acked tls2)" ] || [ "$(acked tls2)" = 0 ] || fail "TLS refused, yet acked $(acked tls2)"
ok "TLS: verified with --tls-ca and published; an unknown CA refused (78)"

# Credentials: a server in operator mode trusts an operator whose JWTs
# nats_jwt.py mints (as nsc would); a .creds file by flag and by
# $NATS_CREDS, a user of an account the server does not know, a user
# denied publishing, unreadable and malformed files; then a token server.
python3 "$(dirname "$0")/nats_jwt.py" "$T/jwt" || fail "nats_jwt.py"
read -r p4 p5 <<<"$(_nats_free_ports 2)"
cat > "$T/jwt/nats.conf" <<EOF
listen: 127.0.0.1:$p4
jetstream { store_dir: "$T/jwtjs" }
include server.conf
EOF
cat > "$T/token.conf" <<EOF
listen: 127.0.0.1:$p5
jetstream { store_dir: "$T/tokenjs" }
authorization { token: "t0kenXyz123" }
EOF
nats-server -c "$T/jwt/nats.conf" >"$T/jwt.log" 2>&1 &
jwtpid=$!
at_exit "kill -9 $jwtpid"
nats-server -c "$T/token.conf" >"$T/token.log" 2>&1 &
tokenpid=$!
at_exit "kill -9 $tokenpid"
sleep 0.5
last_seq=$(cdc-log info --log "$L" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
J="nats://127.0.0.1:$p4"
expect_exit 0 cdc-nats --log "$L" -c creds --server "$J" --creds "$T/jwt/user.creds" --stream CREDS -q
[ "$(acked creds)" = "$last_seq" ] || fail "creds: acked $(acked creds) of $last_seq"
# Resuming reads the stream's end through the same credentials: a second
# consumer (its cursor at 0) finds everything stored and publishes nothing.
NATS_CREDS="$T/jwt/user.creds" expect_exit 0 cdc-nats --log "$L" -c creds2 --server "$J" \
  --stream CREDS --metrics-file "$T/creds.prom" -q
[ "$(metric cdc_nats_events_published_total "$T/creds.prom")" = 0 ] || fail "creds: the resumed sink published again"
[ "$(acked creds2)" = "$last_seq" ] || fail "creds: the resumed sink acked $(acked creds2)"
expect_exit 77 cdc-nats --log "$L" -c rogue --server "$J" --creds "$T/jwt/rogue.creds" \
  --stream CREDS --reconnect-max 2 -q
expect_one_line 'uthorization'
NATS_CREDS="$T/jwt/nopub.creds" expect_exit 77 cdc-nats --log "$L" -c nopub --server "$J" \
  --stream DENIED --subject 'denied.{table}' --timeout 2 --reconnect-max 5 -q
expect_one_line 'Permissions Violation'
[ -z "$(acked nopub)" ] || [ "$(acked nopub)" = 0 ] || fail "creds: publish denied, yet acked $(acked nopub)"
expect_exit 78 cdc-nats --log "$L" -c miss --server "$J" --creds "$T/jwt/none.creds" --stream CREDS -q
expect_one_line 'credentials file .*none.creds: No such file'
echo 'not a creds file' > "$T/jwt/bad.creds"
expect_exit 78 cdc-nats --log "$L" -c bad --server "$J" --creds "$T/jwt/bad.creds" --stream CREDS -q
expect_one_line 'credentials file .*bad.creds'
expect_exit 77 cdc-nats --log "$L" -c anon --server "$J" --stream CREDS --reconnect-max 2 -q
NATS_TOKEN=t0kenXyz123 expect_exit 0 cdc-nats --log "$L" -c token --server "nats://127.0.0.1:$p5" --stream TOKEN -q
[ "$(acked token)" = "$last_seq" ] || fail "token: acked $(acked token) of $last_seq"
NATS_TOKEN=wr0ngT0kenAbc expect_exit 77 cdc-nats --log "$L" -c token2 --server "nats://127.0.0.1:$p5" \
  --stream TOKEN --reconnect-max 2 -q
! grep -q wr0ngT0kenAbc "$T/err" || fail "the error shows the token"
ok "credentials: .creds by flag and \$NATS_CREDS, unknown account 77, publish denied 77, missing/malformed file 78; token 0, wrong token 77"
