#!/usr/bin/env bash
# cdc-pg (cdc-pg(1)) on what a real target gets wrong: a table of another
# shape, a missing table, a permission denied, a constraint only the target
# has, a keyless table whose events carry no old row, a full disk (a small
# tmpfs tablespace; as root only), and bad flags. Each is one clear line
# and its documented exit code, and the applied seq stays at the last whole
# source transaction before the one refused (which is applied once the
# cause is fixed).
source "$(dirname "$0")/lib.sh"
PG_TCP=1 pg_start "$T"
psql_q <<'SQL'
CREATE TABLE t (id int PRIMARY KEY, v int, note text);
CREATE TABLE k (n int, s text);
CREATE DATABASE tgt;
CREATE ROLE weak LOGIN;
SQL
capture --exit-when-idle
psql_q <<'SQL'
INSERT INTO t VALUES (1, 1, 'a');
INSERT INTO t VALUES (2, 2, 'b');
INSERT INTO t VALUES (3, -5, repeat('x', 200000));
UPDATE t SET v = 4 WHERE id = 1;
SQL
capture --exit-when-idle
TDSN="${CDC_TEST_DSN/dbname=postgres/dbname=tgt}"
on_tgt() { psql_q -d tgt "$@"; }
applied() { on_tgt -c "SELECT coalesce(seq::text, 'none') FROM cdc.applied WHERE consumer = '$1'"; }
# The seq of source row id=N's insert.
seq_of() { cdc-tail --log "$T/log" --table public.t --op c | python3 -c "
import json, sys
print([json.loads(l)['seq'] for l in sys.stdin if json.loads(l)['after']['id'] == $1][0])"; }
# sink_fails CODE PATTERN CONSUMER ARGS...: exits CODE with one line
# matching PATTERN (one source transaction per batch unless BATCH says).
sink_fails() {
  local code=$1 pat=$2 c=$3 rc=0
  shift 3
  cdc-pg --log "$T/log" -c "$c" --batch "${BATCH:-1}" -q "$@" > "$T/out" 2> "$T/err" || rc=$?
  [ "$rc" = "$code" ] || fail "$c: exit $rc, not $code: $(cat "$T/err")"
  [ "$(wc -l < "$T/err")" = 1 ] || fail "$c: not one line: $(cat "$T/err")"
  grep -qE "^cdc-pg: $pat" "$T/err" || fail "$c: $(cat "$T/err")"
}

# The initial snapshot (of empty tables: their schema events) is one
# transaction, which --batch 1 applies in pieces: a sink refused at the
# first insert has applied nothing or some of those schema events.
snap_end=$(cdc-tail --log "$T/log" --schema-changes | python3 -c "
import json, sys
print(next(e['seq'] for e in map(json.loads, sys.stdin) if e.get('last')))")
before_rows() {  # CONSUMER: applied nothing past the snapshot
  local a
  a=$(applied "$1")
  [ "$a" = none ] || [ "$a" -le "$snap_end" ] || fail "$1 applied $a (the snapshot ends at $snap_end)"
}
# A missing table, then one of another shape.
sink_fails 78 "the target has no table public.t \(for public.t\); create it, map it with --table-map, or pass --create-tables" nt --dsn "$TDSN"
before_rows nt
on_tgt -c "CREATE TABLE public.t (id int PRIMARY KEY, v int)"
sink_fails 78 "public.t has no column note \(seq [0-9]+\); add it, or pass --evolve" shape --dsn "$TDSN"
before_rows shape
on_tgt -c "DROP TABLE public.t; CREATE TABLE public.t (id int, v int, note text)"
sink_fails 78 "public.t has no primary key or replica identity index on the target, and the event at seq [0-9]+ does not carry the whole old row \(no v; REPLICA IDENTITY FULL on the source does\): add a key to the target table" nokey --dsn "$TDSN"
ok "a missing table, a missing column and a table without the key: 78, no row applied"

# A constraint only the target has: the rows before it stay applied.
on_tgt -c "DROP TABLE public.t; CREATE TABLE public.t (id int PRIMARY KEY, v int CHECK (v > 0), note text)"
s3=$(seq_of 3)
sink_fails 65 "PostgreSQL refused seq $s3 into public.t: ERROR: new row for relation \"t\" violates check constraint \"t_v_check\" .*\(SQLSTATE 23514\)" chk --dsn "$TDSN"
[ "$(applied chk)" = $((s3 - 1)) ] || fail "chk applied $(applied chk), not $((s3 - 1))"
[ "$(on_tgt -c "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM public.t")" = "1:1,2:2" ] ||
  fail "after the constraint: $(on_tgt -c "TABLE public.t")"
on_tgt -c "ALTER TABLE public.t DROP CONSTRAINT t_v_check"
cdc-pg --log "$T/log" -c chk --dsn "$TDSN" -q || fail "chk after the fix"
[ "$(on_tgt -c "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM public.t")" = "1:4,2:2,3:-5" ] ||
  fail "after the fix: $(on_tgt -c "SELECT id, v FROM public.t")"
ok "a target's own constraint: 65 naming the seq and table, applied seq at the transaction before; applied once fixed"

# A target that holds rows already: inserts go as plain INSERTs until one
# meets a row, then that batch and every later insert into the table as
# upserts (one warning); the rows end as the source's.
on_tgt -c "CREATE SCHEMA pre; CREATE TABLE pre.t (LIKE public.t INCLUDING ALL)"
on_tgt -c "INSERT INTO pre.t VALUES (2, 99, 'stale'), (50, 50, 'only here')"
cdc-pg --log "$T/log" -c pre --dsn "$TDSN" --schema pre --batch 1 2> "$T/err" || fail "pre: $(cat "$T/err")"
[ "$(grep -c "meets a row the target holds already .*applying the batch again, with the inserts into public.t as upserts from now on" "$T/err")" = 1 ] &&
  [ "$(wc -l < "$T/err")" = 1 ] || fail "pre: $(cat "$T/err")"
[ "$(on_tgt -c "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM pre.t")" = "1:4,2:2,3:-5,50:50" ] ||
  fail "pre: $(on_tgt -c "SELECT id, v FROM pre.t")"
ok "a target holding rows already: the batch meeting one is applied again with upserts (one warning)"

# Permission denied: a role that may not write the table.
on_tgt -c "GRANT CREATE ON DATABASE tgt TO weak; GRANT USAGE ON SCHEMA public TO weak; GRANT SELECT ON public.t TO weak"
WDSN="${TDSN/user=postgres/user=weak}"
sink_fails 77 "PostgreSQL refused seq [0-9]+ into public.t: ERROR: permission denied for table t \(SQLSTATE 42501\)" perm --dsn "$WDSN" --state-table weak_state.applied
a=$(on_tgt -c "SELECT coalesce(seq::text, 'none') FROM weak_state.applied WHERE consumer = 'perm'")
[ "$a" = none ] || [ "$a" -le "$snap_end" ] || fail "perm moved to $a (the snapshot ends at $snap_end)"
ok "permission denied: 77, nothing applied"

# A keyless table whose source is not REPLICA IDENTITY FULL: its inserts
# apply, its first delete is refused by name.
psql_q -c "ALTER TABLE k REPLICA IDENTITY FULL"
psql_q -c "INSERT INTO k VALUES (1, 'a'), (2, 'b')"
psql_q -c "ALTER TABLE k REPLICA IDENTITY DEFAULT"
psql_q -c "DELETE FROM k WHERE n = 1" 2>/dev/null && fail "a delete without replica identity was allowed"
psql_q -c "ALTER TABLE k REPLICA IDENTITY FULL; DELETE FROM k WHERE n = 1"
capture --exit-when-idle
on_tgt -c "CREATE TABLE public.k (n int, s text)"
cdc-pg --log "$T/log" -c chk --dsn "$TDSN" -q || fail "keyless FULL table"
[ "$(on_tgt -c "SELECT string_agg(n || s, ',') FROM public.k")" = "2b" ] || fail "k: $(on_tgt -c "TABLE public.k")"
ok "a keyless table under REPLICA IDENTITY FULL is matched on the whole old row"

# TLS: sslmode=verify-full against the server's certificate, signed by a
# CA of this test; a client that trusts another CA is refused at once (78,
# not retried).
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cdc test CA" \
  -keyout "$T/ca.key" -out "$T/ca.crt" 2> /dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$T/server.key" \
  -out "$T/server.csr" 2> /dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$T/san.ext"
openssl x509 -req -in "$T/server.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial \
  -days 2 -extfile "$T/san.ext" -out "$T/server.crt" 2> /dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other CA" \
  -keyout "$T/other.key" -out "$T/other.crt" 2> /dev/null
cp "$T/server.crt" "$T/server.key" "$T/pg/"
[ "$(id -u)" = 0 ] && chown postgres "$T/pg/server.crt" "$T/pg/server.key"
chmod 600 "$T/pg/server.key"
psql_q -c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" > /dev/null
sleep 0.5
SSL_DSN="host=localhost port=$PGPORT user=postgres dbname=tgt sslmode=verify-full"
cdc-pg --log "$T/log" -c tls --dsn "$SSL_DSN sslrootcert=$T/ca.crt" -q --schema tls --create-tables ||
  fail "verify-full"
[ "$(on_tgt -c "SELECT count(*) FROM tls.t")" -gt 0 ] || fail "nothing applied over TLS"
sink_fails 78 "cannot connect to PostgreSQL: .*certificate verify failed" tls2 --dsn "$SSL_DSN sslrootcert=$T/other.crt" --reconnect-max 30
ok "sslmode=verify-full works; another CA is refused at once (78)"

# Passwords: from --password-file (or PGPASSWORD), never the command line;
# none or a wrong one is 77, at once.
psql_q -c "CREATE ROLE pw LOGIN PASSWORD 's3cret'; GRANT ALL ON DATABASE tgt TO pw"
on_tgt -c "GRANT ALL ON SCHEMA public TO pw"
{ echo "host all pw 127.0.0.1/32 scram-sha-256"; cat "$T/pg/pg_hba.conf"; } > "$T/hba" &&
  cat "$T/hba" > "$T/pg/pg_hba.conf"
psql_q -c "SELECT pg_reload_conf()" > /dev/null
sleep 0.5
PW_DSN="host=127.0.0.1 port=$PGPORT user=pw dbname=tgt"
printf 's3cret\n' > "$T/pw" && chmod 600 "$T/pw"
printf 'wrong\n' > "$T/bad_pw"
sink_fails 77 "cannot connect to PostgreSQL: .*(no password supplied|password authentication failed)" pw --dsn "$PW_DSN" --schema pwtab --create-tables
sink_fails 77 "cannot connect to PostgreSQL: .*password authentication failed for user \"pw\"" pw --dsn "$PW_DSN" --password-file "$T/bad_pw"
# (The state table cdc.applied is postgres's: this role may not use it.)
sink_fails 77 "the state table cdc.applied: PostgreSQL: .*permission denied for schema cdc" pw --dsn "$PW_DSN" --password-file "$T/pw"
cdc-pg --log "$T/log" -c pw --dsn "$PW_DSN" --password-file "$T/pw" --schema pwtab --create-tables \
  --state-table pwstate.applied -q || fail "--password-file"
PGPASSWORD=s3cret cdc-pg --log "$T/log" -c pw2 --dsn "$PW_DSN" --schema pwtab --create-tables \
  --state-table pwstate.applied -q || fail "PGPASSWORD"
sink_fails 78 "--password-file $T/nothere: No such file or directory" pw --dsn "$PW_DSN" --password-file "$T/nothere"
ok "passwords from --password-file and PGPASSWORD; none or a wrong one: 77; a missing file: 78"

# --stdin: what cdc-tail prints in, each event echoed once its batch
# committed (so cdc-ack can follow); metrics name the applied seq.
cdc-tail --log "$T/log" --schema-changes > "$T/all.ndjson"
cdc-pg --stdin -c pipe --dsn "$TDSN" --schema piped --create-tables --metrics-file "$T/pg.prom" \
  < "$T/all.ndjson" > "$T/echo.ndjson" 2> "$T/err" || fail "--stdin: $(cat "$T/err")"
cmp -s "$T/all.ndjson" "$T/echo.ndjson" || fail "--stdin echoed other events"
last=$(tail -1 "$T/all.ndjson" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
[ "$(applied pipe)" = "$last" ] || fail "pipe applied $(applied pipe), not $last"
[ "$(metric cdc_pg_applied_seq "$T/pg.prom")" = "$last" ] || fail "metrics: $(cat "$T/pg.prom")"
[ "$(on_tgt -c "SELECT count(*) FROM piped.t")" = "$(psql_q -c "SELECT count(*) FROM t")" ] || fail "piped.t"
ok "--stdin applies and echoes every event; cdc_pg_applied_seq says where it is"

# An applied seq past the log's end is another log's (or a restored
# log's older state): refused (78), the cursor left alone.
on_tgt -c "UPDATE cdc.applied SET seq = 99999999 WHERE consumer = 'chk'"
before=$(cdc-log consumers --log "$T/log" --json | python3 -c 'import json,sys; print([json.loads(l)["acked_seq"] for l in sys.stdin if json.loads(l)["name"] == "chk"][0])')
sink_fails 78 "PostgreSQL says consumer chk applied up to seq 99999999 but the log ends at seq [0-9]+" chk --dsn "$TDSN"
after=$(cdc-log consumers --log "$T/log" --json | python3 -c 'import json,sys; print([json.loads(l)["acked_seq"] for l in sys.stdin if json.loads(l)["name"] == "chk"][0])')
[ "$before" = "$after" ] || fail "the cursor moved from $before to $after"
ok "an applied seq past the log's end: 78, the cursor left alone"

# Bad flags: 64, one line saying why (and where --help is).
expect_flag() {
  local rc=0
  cdc-pg --log "$T/log" -c bad "$@" > /dev/null 2> "$T/err" || rc=$?
  [ "$rc" = 64 ] && head -1 "$T/err" | grep -q "^cdc-pg: .*-" &&
    [ "$(sed -n 2p "$T/err")" = 'Try "cdc-pg --help" for more information.' ] ||
    fail "cdc-pg $*: $rc $(cat "$T/err")"
}
expect_flag --dsn "$TDSN password=secret"
expect_flag --dsn "postgresql://u:secret@localhost/tgt"
expect_flag --dsn ""
expect_flag --dsn "$TDSN" --table-map "public.t"
expect_flag --dsn "$TDSN" --table-map "t=u"
expect_flag --dsn "$TDSN" --table-map "public.t=a.b" --table-map "public.t=c.d"
expect_flag --dsn "$TDSN" --state-table "applied"
expect_flag --dsn "$TDSN" --stdin -f
ok "a password in --dsn, bad --table-map and --state-table: 64"

# A full disk: the table's tablespace on a small tmpfs.
if [ "$(id -u)" = 0 ] && mkdir -p "$T/small" && mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
  at_exit "umount -l $T/small"
  chown postgres "$T/small"
  psql_q -c "INSERT INTO t SELECT g, g, repeat(md5(g::text), 20) FROM generate_series(100, 3000) g"
  capture --exit-when-idle
  on_tgt -c "CREATE TABLESPACE small LOCATION '$T/small'"
  on_tgt -c "CREATE TABLE public.full_t (LIKE public.t INCLUDING ALL) TABLESPACE small"
  first=$(cdc-tail --log "$T/log" --table public.t --op c | python3 -c "
import json, sys
print([json.loads(l)['seq'] for l in sys.stdin if json.loads(l)['after']['id'] == 100][0])")
  sink_fails 74 "PostgreSQL refused seqs? [0-9-]+ into public.full_t: ERROR: could not extend file .*No space left on device.*\(SQLSTATE 53100\)" disk \
    --dsn "$TDSN" --table-map public.t=public.full_t
  [ "$(applied disk)" = $((first - 1)) ] || fail "disk applied $(applied disk), not $((first - 1))"
  ok "a full target disk: 74, applied seq at the transaction before ($((first - 1)))"
else
  ok "a full target disk: skipped (needs root to mount a tmpfs)"
fi

# --create-tables makes the tables from the schema events (here in another
# schema), --evolve adds a column the source added; an enum the target
# lacks is refused by name.
cdc-pg --log "$T/log" -c mk --dsn "$TDSN" --schema made --create-tables --evolve -q ||
  fail "create-tables"
[ "$(on_tgt -c "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM made.t WHERE id < 100")" = "1:4,2:2,3:-5" ] ||
  fail "made.t: $(on_tgt -c "SELECT id, v FROM made.t")"
[ "$(on_tgt -c "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'made.t'::regclass AND contype = 'p'")" = "PRIMARY KEY (id)" ] ||
  fail "made.t has no primary key"
psql_q -c "ALTER TABLE t ADD COLUMN extra numeric(6,2) DEFAULT 1.5; INSERT INTO t (id, v, note, extra) VALUES (4, 4, 'd', 2.25)"
psql_q -c "CREATE TYPE mood AS ENUM ('ok'); CREATE TABLE e (id int PRIMARY KEY, m mood); INSERT INTO e VALUES (1, 'ok')"
capture --exit-when-idle
sink_fails 78 "cannot create made.e: column m has type OID [0-9]+, not a built-in type; create the table first" mk \
  --dsn "$TDSN" --schema made --create-tables --evolve
[ "$(on_tgt -c "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'made.t'::regclass AND attname = 'extra'")" = "numeric(6,2)" ] ||
  fail "--evolve did not add extra numeric(6,2)"
[ "$(on_tgt -c "SELECT extra FROM made.t WHERE id = 4")" = "2.25" ] || fail "made.t row 4: $(on_tgt -c "SELECT * FROM made.t WHERE id = 4")"
ok "--create-tables makes tables with their key, --evolve adds columns; an enum is refused by name (78)"

# An initial snapshot is one transaction in the log: cdc-pg applies it in
# target transactions of --batch rather than holding it whole (which took
# memory of the order of its size). 100,000 rows of 1 KB, captured into a
# log of their own: peak RSS below the snapshot's NDJSON size (unless a
# sanitizer's memory), every row on the target, the applied seq at its end.
psql_q -c "CREATE TABLE snap (id int PRIMARY KEY, pad text)" \
  -c "INSERT INTO snap SELECT g, repeat('x', 1000) FROM generate_series(1, 100000) g" \
  -c "CREATE PUBLICATION snap_pub FOR TABLE snap"
cdc-capture --log "$T/snaplog" --dsn "$CDC_TEST_DSN" --slot snap --publication snap_pub -q --exit-when-idle ||
  fail "snapshot: capture failed"
snap_mb=$(($(cdc-tail --log "$T/snaplog" | wc -c) / 1048576))
[ "$(cdc-tail --log "$T/snaplog" | grep -c '"last":true')" = 1 ] || fail "snapshot: not one transaction"
/usr/bin/time -v -o "$T/time" cdc-pg --log "$T/snaplog" -c snap --dsn "$TDSN" --schema snapped --create-tables -q ||
  { cat "$T/time" >&2; fail "snapshot: cdc-pg failed"; }
peak=$(rss_kb "$T/time")
[ "$(on_tgt -c "SELECT count(*) || ':' || sum(length(pad)) FROM snapped.snap")" = "100000:100000000" ] ||
  fail "snapshot: the target holds $(on_tgt -c "SELECT count(*) FROM snapped.snap") rows"
[ "$(applied snap)" = "$(cdc-log info --log "$T/snaplog" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')" ] ||
  fail "snapshot: applied seq $(applied snap) is not the log's end"
asan_build cdc-pg || [ "$peak" -lt $((snap_mb * 1024)) ] ||
  fail "snapshot: peak RSS $((peak / 1024)) MB applying a $snap_mb MB snapshot transaction (not less than its size)"
ok "a $snap_mb MB initial snapshot (one transaction of 100,000 rows) applied in target transactions of --batch: peak RSS $((peak / 1024)) MB$(asan_build cdc-pg && echo " (a sanitizer's, not weighed)")"
