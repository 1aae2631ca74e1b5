#!/usr/bin/env bash
# A password in --dsn (or CDC_DSN) is refused with status 64 in every form
# libpq reads, before anything connects or touches the log, and the
# password never appears in the message.
source "$(dirname "$0")/lib.sh"
n=0
for dsn in "host=/nonexistent dbname=d password=hunter2x" \
           "password='hunter2x' host=/nonexistent" \
           "postgresql://u:hunter2x@localhost/db" \
           "postgres://u:hunter2x@localhost:5432/db" \
           "postgresql://u@localhost/db?password=hunter2x" \
           "postgresql://localhost/db?sslmode=disable&password=hunter2x" \
           "postgresql://localhost/db?pass%77ord=hunter2x" \
           "dbname='postgresql://u:hunter2x@localhost/db'"; do
  expect_exit 64 cdc-capture --log "$T/log" --dsn "$dsn"
  [ "$(head -1 "$T/err")" = "cdc-capture: --dsn must not carry a password; use PGPASSWORD, ~/.pgpass or passfile=" ] ||
    fail "--dsn $dsn: $(cat "$T/err")"
  ! grep -q hunter2x "$T/err" || fail "the password was echoed: $(cat "$T/err")"
  CDC_DSN="$dsn" expect_exit 64 cdc-capture --log "$T/log"
  grep -q "must not carry a password" "$T/err" || fail "CDC_DSN=$dsn: $(cat "$T/err")"
  n=$((n + 1))
done
[ ! -e "$T/log" ] || fail "a refused --dsn created the log"
ok "$n forms of a password in --dsn refused with 64, never echoed"

expect_exit 78 cdc-capture --log "$T/log" --dsn "postgresql://u:hunter2x@[::1/db"
expect_one_line '^cdc-capture: invalid --dsn: '
! grep -q hunter2x "$T/err" || fail "an unparseable --dsn echoed its password: $(cat "$T/err")"
[ ! -e "$T/log" ] || fail "an unparseable --dsn created the log"
ok "an unparseable --dsn with a password: 78, not echoed"

# A server that is not there: 69, and no empty log left behind; a log
# directory that was there before stays.
expect_exit 69 cdc-capture --log "$T/nolog" --dsn "host=127.0.0.1 port=1 dbname=x" --reconnect-max 0 -q
[ ! -e "$T/nolog" ] || fail "a capture that never connected left $(find "$T/nolog")"
mkdir "$T/mine"
expect_exit 69 cdc-capture --log "$T/mine" --dsn "host=127.0.0.1 port=1 dbname=x" --reconnect-max 0 -q
[ -d "$T/mine" ] || fail "a directory that was there before was removed"
# A log with events in it is never removed, even when capture fails.
gen_events 1 2 2 | cdc-log import --log "$T/used" -q
expect_exit 69 cdc-capture --log "$T/used" --dsn "host=127.0.0.1 port=1 dbname=x" --reconnect-max 0 -q
[ -s "$T/used/log.json" ] || fail "a used log was touched"
ok "a capture that never connected leaves no empty log behind (and touches nothing else)"
