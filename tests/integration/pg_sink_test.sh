#!/usr/bin/env bash
# cdc-pg (cdc-pg(1)) applies a live log to a second PostgreSQL server
# (TARGET_PG_BIN; the source's version by default, 18 in scripts/test.sh)
# exactly once: a random workload over the type matrix, a table whose
# unchanged TOAST column must survive updates, composite-key changes, a
# table without a key under REPLICA IDENTITY FULL, truncates and rolled-back
# transactions, while the sink is SIGKILLed KILLS times (20) and the target
# server restarted twice. At the end every target table equals its source
# table (EXCEPT both ways, on the target, against a copy of the source
# rows), a trigger on the target's audit table saw every source transaction
# applied once, and the applied seq, the consumer's cursor and the log's
# end agree.
source "$(dirname "$0")/lib.sh"
KILLS=${KILLS:-20}
TXNS=${TXNS:-3000}
TARGET_PG_BIN=${TARGET_PG_BIN:-$PG_BIN}
pg_start "$T"

# The target server, beside the source.
TPORT=$((PGPORT + 1))
mkdir -p "$T/tgt/sock" "$T/tgt/pg"
[ "$(id -u)" -eq 0 ] && chown postgres "$T/tgt" "$T/tgt/sock" "$T/tgt/pg"
_pg_as "$TARGET_PG_BIN/initdb" -D "$T/tgt/pg" -U postgres -A trust --no-sync -E UTF8 \
  --locale=C.UTF-8 > "$T/tgt/initdb.log" 2>&1 || fail "target initdb: $(cat "$T/tgt/initdb.log")"
cat >> "$T/tgt/pg/postgresql.conf" <<CONF
listen_addresses = ''
port = $TPORT
unix_socket_directories = '$T/tgt/sock'
fsync = on
log_min_messages = warning
CONF
tgt_ctl() { _pg_as "$TARGET_PG_BIN/pg_ctl" -D "$T/tgt/pg" -l "$T/tgt/pg.log" -w -t 60 "$@" > /dev/null; }
tgt_ctl start || fail "target: $(cat "$T/tgt/pg.log")"
at_exit "_pg_as $TARGET_PG_BIN/pg_ctl -D $T/tgt/pg -w -m immediate stop >/dev/null 2>&1"
TDSN="host=$T/tgt/sock port=$TPORT user=postgres dbname=postgres"
on_target() { psql -X -q -v ON_ERROR_STOP=1 -At -h "$T/tgt/sock" -p "$TPORT" -d postgres "$@"; }
TMAJOR=$(on_target -c "SELECT current_setting('server_version_num')::int / 10000")

SCHEMA=$(cat <<'SQL'
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TABLE types (
  id serial PRIMARY KEY, i2 int2, i8 int8, num numeric(30,10), f4 float4,
  f8 float8, b bool, t text, vc varchar(10), ch char(5), by bytea, j json,
  jb jsonb, u uuid, d date, tm time, tmtz timetz, ts timestamp,
  tstz timestamptz, iv interval, ia int4[], ta text[], da date[], jba jsonb[],
  m mood, dom posint, ip inet);
CREATE TABLE big (id int PRIMARY KEY, v text, big text);
ALTER TABLE big ALTER COLUMN big SET STORAGE EXTERNAL;
CREATE TABLE comp (a int, b text, n int, PRIMARY KEY (a, b));
CREATE TABLE nopk (n int, jb jsonb, tag text);
ALTER TABLE nopk REPLICA IDENTITY FULL;
CREATE TABLE audit (n int PRIMARY KEY);
SQL
)
psql_q <<< "$SCHEMA"
on_target <<< "$SCHEMA"
# Every apply of an audit row (an upsert's UPDATE included) is logged.
on_target <<'SQL'
CREATE TABLE audit_log (n int, at timestamptz DEFAULT clock_timestamp());
CREATE FUNCTION audit_seen() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO audit_log (n) VALUES (NEW.n); RETURN NEW; END$$;
CREATE TRIGGER audit_seen AFTER INSERT OR UPDATE ON audit
  FOR EACH ROW EXECUTE FUNCTION audit_seen();
SQL

capture_bg
python3 "$HERE/pg_sink_workload.py" "$TXNS" "${SEED:-$RANDOM}" > "$T/workload.sql"
psql -X -q -f "$T/workload.sql" > /dev/null 2> "$T/workload.err" & WL=$!

sink() { cdc-pg --log "$T/log" -c replica --dsn "$TDSN" -q "$@"; }
kills=0 restarts=0
while [ "$kills" -lt "$KILLS" ]; do
  sink -f --batch $((RANDOM % 300 + 1)) 2>> "$T/sink.err" & SINK=$!
  sleep "0.$((RANDOM % 6 + 2))"
  if [ "$kills" = $((KILLS / 3)) ] || [ "$kills" = $((2 * KILLS / 3)) ]; then
    tgt_ctl -m fast restart || fail "target restart: $(tail -3 "$T/tgt/pg.log")"
    restarts=$((restarts + 1))
    sleep 0.5
  fi
  kill -9 "$SINK" 2>/dev/null || true
  wait "$SINK" 2>/dev/null || true
  kills=$((kills + 1))
done
wait "$WL" || fail "workload: $(cat "$T/workload.err")"
[ "$restarts" = 2 ] || fail "the target restarted $restarts times"
wait_marker done
echo "t=$SECONDS"; kill -TERM "$CAP"; wait "$CAP" || fail "capture: $(cat "$T/capture.err")"
# What the killed sinks said: only the target's restarts (reconnects).
# (and a killed sink's last transaction, committed after the next one
# started: its guard notices and it reads the applied seq again).
# libpq itself may print the server's farewell to a session it cuts
# during the restart ("FATAL:  terminating connection due to administrator
# command"), rarely, when it arrives between two statements.
grep -v -e "PostgreSQL" -e "a killed sink.s last transaction" \
  -e "^FATAL:  terminating connection due to administrator command$" "$T/sink.err" > "$T/other.err" || true
[ -s "$T/other.err" ] && fail "the sink said: $(head -5 "$T/other.err")"
sink 2> "$T/final.err" || fail "final drain: $(cat "$T/final.err")"
ok "$TXNS transactions, the sink SIGKILLed $kills times, the target ($TMAJOR) restarted twice"

# The source's rows, copied onto the target beside the applied ones.
on_target -c "CREATE SCHEMA src"
for t in types big comp nopk audit; do
  on_target -c "CREATE TABLE src.$t (LIKE public.$t)"
  psql_q -c "COPY $t TO STDOUT" | on_target -c "COPY src.$t FROM STDIN"
done
# json compares as jsonb: the log carries it compacted.
cols_types="id, i2, i8, num, f4, f8, b, t, vc, ch, by, j::jsonb, jb, u, d, tm, tmtz, ts, tstz, iv, ia, ta, da, jba, m, dom, ip"
for spec in "types:$cols_types" "big:*" "comp:*" "nopk:*" "audit:*"; do
  t=${spec%%:*} cols=${spec#*:}
  n=$(on_target -c "SELECT (SELECT count(*) FROM (SELECT $cols FROM src.$t EXCEPT ALL SELECT $cols FROM public.$t) x)
                        + (SELECT count(*) FROM (SELECT $cols FROM public.$t EXCEPT ALL SELECT $cols FROM src.$t) y)")
  [ "$n" = 0 ] || fail "$t differs from its source in $n rows"
  rows=$(on_target -c "SELECT count(*) FROM public.$t")
  echo "  $t: $rows rows equal"
done
[ "$(on_target -c "SELECT count(*) FROM public.big WHERE length(big) < 3000")" = 0 ] ||
  fail "an unchanged TOAST column was lost"
ok "every target table equals its source (EXCEPT ALL both ways), unchanged TOAST values kept"

dups=$(on_target -c "SELECT count(*) - count(DISTINCT n) FROM audit_log")
seen=$(on_target -c "SELECT count(DISTINCT n) FROM audit_log")
[ "$dups" = 0 ] || fail "$dups source transactions were applied twice"
[ "$seen" = "$(psql_q -c "SELECT count(*) FROM audit")" ] || fail "the audit trigger saw $seen transactions"
last=$(cdc-log info --log "$T/log" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_seq"])')
applied=$(on_target -c "SELECT seq FROM cdc.applied WHERE consumer = 'replica'")
[ "$applied" = "$last" ] || fail "applied seq $applied, the log ends at $last"
acked=$(cdc-log consumers --log "$T/log" --json | python3 -c 'import json,sys; print([json.loads(l)["acked_seq"] for l in sys.stdin if json.loads(l)["name"] == "replica"][0])')
[ "$acked" = "$last" ] || fail "the cursor is at $acked, the log ends at $last"
ok "no transaction applied twice ($seen); applied seq = cursor = the log's end ($last)"
