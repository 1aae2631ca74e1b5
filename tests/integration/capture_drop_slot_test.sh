#!/usr/bin/env bash
# cdc-capture --drop-slot: the clean-up that needed SQL. It drops the log's
# slot and the publication capture created, keeps a publication made by
# hand and the log itself; it refuses while a capture runs on the log or a
# client streams from the slot, for another source's log, and for a slot
# the log does not record. A capture started again on the log stops at the
# gap (exit 11) instead of skipping what happened meanwhile.
source "$(dirname "$0")/lib.sh"
pg_start "$T"
psql_q -c "CREATE TABLE d (id int PRIMARY KEY)" -c "INSERT INTO d VALUES (1)"
slots() { psql_q -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$1'"; }
pubs() { psql_q -c "SELECT count(*) FROM pg_publication WHERE pubname = '$1'"; }

capture --table d --exit-when-idle
[ "$(slots cdc)" = 1 ] && [ "$(pubs cdc)" = 1 ] || fail "capture made no slot or publication"
before=$(cdc-tail --log "$T/log" | sha256sum)

# Refused while a capture holds the log (75), the slot and publication kept.
capture_bg --status-interval 1
at_exit "kill -9 \$CAP 2>/dev/null || true"
wait_slot "active" 50 0.1 || fail "capture did not start streaming"
expect_exit 75 cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --drop-slot
grep -q "is in use (a cdc-capture runs on it); stop it before --drop-slot" "$T/err" ||
  fail "busy log: $(cat "$T/err")"
kill "$CAP"; wait "$CAP" || true
[ "$(slots cdc)" = 1 ] || fail "the slot went while capture ran"

# Refused for names the log does not record (78), and for another source.
expect_exit 78 cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --slot other --drop-slot
grep -q "give --slot cdc --publication cdc" "$T/err" || fail "wrong slot: $(cat "$T/err")"
psql_q -c "CREATE DATABASE other"
expect_exit 78 cdc-capture --log "$T/log" --dsn "${CDC_TEST_DSN/dbname=postgres/dbname=other}" --drop-slot
grep -q -- "--dsn names another source" "$T/err" || fail "other database: $(cat "$T/err")"

# Refused while another client streams from the slot (75).
pg_recvlogical -d "$CDC_TEST_DSN" -S cdc -o proto_version=1 -o publication_names=cdc \
  --start -f /dev/null 2> "$T/recv.err" & RECV=$!
at_exit "kill $RECV 2>/dev/null || true"
wait_slot "active" 50 0.1 || fail "pg_recvlogical did not start: $(cat "$T/recv.err")"
expect_exit 75 cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --drop-slot
grep -q "replication slot cdc is in use by server process [0-9]*; stop the client" "$T/err" ||
  fail "active slot: $(cat "$T/err")"
kill "$RECV"; wait "$RECV" || true
ok "refused (75, 78) while in use or for another source; nothing dropped"

# Dropped: the slot and capture's publication; the log untouched.
for _ in $(seq 50); do
  [ "$(psql_q -c "SELECT active FROM pg_replication_slots WHERE slot_name = 'cdc'")" = f ] && break
  sleep 0.1
done
cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --drop-slot 2> "$T/drop.err" ||
  fail "--drop-slot: $(cat "$T/drop.err")"
grep -q "dropped replication slot cdc" "$T/drop.err" || fail "$(cat "$T/drop.err")"
grep -q "dropped publication cdc" "$T/drop.err" || fail "$(cat "$T/drop.err")"
[ "$(slots cdc)" = 0 ] && [ "$(pubs cdc)" = 0 ] || fail "slot or publication left"
[ "$(cdc-tail --log "$T/log" | sha256sum)" = "$before" ] || fail "the log changed"
cdc-log verify --log "$T/log" -q || fail "the log no longer verifies"
# Again: nothing left to drop is not an error.
cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --drop-slot 2> "$T/again.err" ||
  fail "second --drop-slot: $(cat "$T/again.err")"
grep -q "replication slot cdc does not exist" "$T/again.err" || fail "$(cat "$T/again.err")"
ok "slot and capture's publication dropped, the log kept; a second run is a no-op"

# A capture on the retired log: a new slot starts after what it lacks.
psql_q -c "INSERT INTO d VALUES (2)"
expect_exit 11 cdc-capture --log "$T/log" --dsn "$CDC_TEST_DSN" --table d --exit-when-idle -q
ok "a capture started again on the log stops at the gap (11)"
psql_q -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'cdc'" > /dev/null

# A publication made by hand is kept.
L2="$T/log2"
psql_q -c "CREATE PUBLICATION mine FOR TABLE d"
cdc-capture --log "$L2" --dsn "$CDC_TEST_DSN" --slot s2 --publication mine --exit-when-idle -q ||
  fail "capture with its own publication"
cdc-capture --log "$L2" --dsn "$CDC_TEST_DSN" --slot s2 --publication mine --drop-slot 2> "$T/mine.err" ||
  fail "--drop-slot: $(cat "$T/mine.err")"
grep -q "publication mine was not created by cdc-capture: kept" "$T/mine.err" || fail "$(cat "$T/mine.err")"
[ "$(slots s2)" = 0 ] && [ "$(pubs mine)" = 1 ] || fail "s2 left or mine dropped"
ok "a publication made by hand is kept"
