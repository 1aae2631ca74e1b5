#!/usr/bin/env bash
# cdc-capture as an operator should run it: as a least-privilege role
# (LOGIN REPLICATION, SELECT on the published tables, not superuser; the
# publication made by an administrator), over TLS with sslmode=verify-full
# against a server certificate that a CA made here signs, the password from
# PGPASSWORD. Also: a wrong CA, a connection without TLS and a wrong
# password are refused with their exit codes, and the password shows in no
# message and no metrics; what capture and the readers create is private
# (0700 directories, 0600 files; CDC_GROUP_ACCESS=1 for a group of
# readers); a metrics path planted as a symlink is replaced, not followed.
source "$(dirname "$0")/lib.sh"
PG_TCP=1 pg_start "$T"
PW=S3cr3t-Pw-4711
# The certificates: a CA, and the server's for 127.0.0.1 and localhost.
C="$T/certs"
mkdir -p "$C"
(
  cd "$C"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=cdc-test-ca \
    -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca \
    -keyout other.key -out other.pem 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
    -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -days 2 -extfile ext -out server.crt 2>/dev/null
) || fail "openssl"
cp "$C/server.crt" "$C/server.key" "$PG_DIR/pg/"
[ "$(id -u)" = 0 ] && chown postgres "$PG_DIR/pg/server.crt" "$PG_DIR/pg/server.key"
chmod 600 "$PG_DIR/pg/server.key"
cat >> "$PG_DIR/pg/postgresql.conf" <<CONF
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
password_encryption = 'scram-sha-256'
CONF
# The role may come only over TLS, with its password.
{
  echo "hostssl all cdc_reader 127.0.0.1/32 scram-sha-256"
  echo "hostssl replication cdc_reader 127.0.0.1/32 scram-sha-256"
  echo "host all cdc_reader 127.0.0.1/32 reject"
  echo "host replication cdc_reader 127.0.0.1/32 reject"
  cat "$PG_DIR/pg/pg_hba.conf"
} > "$T/hba" && cp "$T/hba" "$PG_DIR/pg/pg_hba.conf"
pg_restart
psql_q <<SQL
CREATE TABLE orders (id int PRIMARY KEY, note text);
INSERT INTO orders VALUES (1, 'before capture');
CREATE PUBLICATION cdc FOR TABLE orders;
CREATE ROLE cdc_reader LOGIN REPLICATION PASSWORD '$PW';
GRANT SELECT ON orders TO cdc_reader;
SQL
[ "$(psql_q -c "SELECT rolsuper FROM pg_roles WHERE rolname = 'cdc_reader'")" = f ] || fail "superuser"
DSN="host=127.0.0.1 port=$PGPORT user=cdc_reader dbname=postgres"
TLS="$DSN sslmode=verify-full sslrootcert=$C/ca.pem"

expect_exit 0 env PGPASSWORD="$PW" cdc-capture --log "$T/log" --dsn "$TLS" \
  --metrics-file "$T/metrics.prom" --exit-when-idle -q
psql_q -c "INSERT INTO orders VALUES (2, 'streamed')"
expect_exit 0 env PGPASSWORD="$PW" cdc-capture --log "$T/log" --dsn "$TLS" \
  --metrics-file "$T/metrics.prom" --exit-when-idle -q
[ "$(cdc-tail --log "$T/log" | python3 -c '
import json, sys
print(" ".join(e["op"] + str(e["after"]["id"]) for e in map(json.loads, sys.stdin)))')" = "r1 c2" ] ||
  fail "events: $(cdc-tail --log "$T/log")"
ok "a REPLICATION role with SELECT only, over TLS verify-full: snapshot and stream"

# A certificate the client refuses is configuration: 78 at once, even with
# time left to retry.
expect_exit 78 env PGPASSWORD="$PW" cdc-capture --log "$T/log" --reconnect-max 60 \
  --dsn "$DSN sslmode=verify-full sslrootcert=$C/other.pem" -q
grep -q "certificate verify failed" "$T/err" || fail "wrong CA: $(cat "$T/err")"
! grep -q "$PW" "$T/err" || fail "the password is in the message"
expect_exit 77 env PGPASSWORD="$PW" cdc-capture --log "$T/log" --dsn "$DSN sslmode=disable" -q
! grep -q "$PW" "$T/err" || fail "the password is in the message"
expect_exit 77 env PGPASSWORD=Wrong-Pw-0815 cdc-capture --log "$T/log" --dsn "$TLS" -q
grep -q "password authentication failed" "$T/err" || fail "wrong password: $(cat "$T/err")"
! grep -q "Wrong-Pw-0815" "$T/err" || fail "the password is in the message"
! grep -rq "$PW" "$T/metrics.prom" "$T/log" || fail "the password is in the metrics or the log"
ok "an unknown CA (78, not retried), no TLS (77), a wrong password (77); no password in a message, the metrics or the log"

# The role may not create a publication: 77, and the message says the
# statement an administrator runs.
expect_exit 77 env PGPASSWORD="$PW" cdc-capture --log "$T/log-nopub" --dsn "$TLS" \
  --slot nopub --publication nopub -q
[ "$(grep -c '' "$T/err")" = 1 ] || fail "more than one line: $(cat "$T/err")"
grep -qE 'cannot create publication nopub: .*; have a superuser run, in this database: CREATE PUBLICATION "?nopub"? FOR ALL TABLES WITH \(publish_via_partition_root = true.*\); then start cdc-capture again$' "$T/err" ||
  fail "no statement to run: $(cat "$T/err")"
ok "a role that may not create the publication: 77 naming the statement to run"

# Modes: the log private to its owner; the metrics file readable by a
# collector; with CDC_GROUP_ACCESS=1, readable by the group.
cdc-tail --log "$T/log" -c reader > /dev/null
modes() { find "$1" -printf '%m %y %P\n' | sort -k3; }
bad=$(modes "$T/log" | awk '($2 == "d" && $1 != 700) || ($2 == "f" && $1 != 600)')
[ -z "$bad" ] || fail "not private: $bad"
[ "$(stat -c %a "$T/metrics.prom")" = 644 ] || fail "metrics mode $(stat -c %a "$T/metrics.prom")"
# A schema event too, so schemas.ndjson is made.
printf '%s\n' '{"lsn":"0/10","xid":1,"ts":"2026-01-01T00:00:00Z","op":"s","schema":"s","table":"t","key":null,"before":null,"after":null,"columns":[]}' \
  '{"lsn":"0/20","xid":2,"ts":"2026-01-01T00:00:00Z","op":"c","schema":"s","table":"t","key":null,"before":null,"after":{"a":1}}' |
  CDC_GROUP_ACCESS=1 cdc-log import --log "$T/shared" -q
[ -f "$T/shared/schemas.ndjson" ] || fail "no schemas.ndjson to check the mode of"
CDC_GROUP_ACCESS=1 cdc-tail --log "$T/shared" -c reader > /dev/null
# consumers.db and its -wal and -shm (kept, so the group can ack) are 0660.
bad=$(modes "$T/shared" | awk '($2 == "d" && $1 != 750) || ($2 == "f" && $3 !~ /^consumers\.db/ && $1 != 640) || ($3 ~ /^consumers\.db/ && $1 != 660)')
[ -z "$bad" ] || fail "group access: $bad"
ok "directories 0700 and files 0600 (0750/0640, consumers.db 0660 with CDC_GROUP_ACCESS=1); metrics 0644"

# A metrics path planted as a symlink to a file of someone else's: the
# rename replaces the link, the victim is never written.
echo "victim" > "$T/victim"
rm -f "$T/metrics.prom"
ln -s "$T/victim" "$T/metrics.prom"
expect_exit 0 env PGPASSWORD="$PW" cdc-capture --log "$T/log" --dsn "$TLS" \
  --metrics-file "$T/metrics.prom" --exit-when-idle -q
[ "$(cat "$T/victim")" = victim ] || fail "the symlink's target was written"
[ -f "$T/metrics.prom" ] && [ ! -L "$T/metrics.prom" ] || fail "the metrics file is still a symlink"
ln -s "$T/victim" "$T/planted.conf"
expect_exit 78 cdc-capture --config "$T/planted.conf"
ok "a planted metrics symlink is replaced, not followed; a symlinked --config is refused (78)"
