# Helpers shared by the snapshot tests: three tables of ROWS rows each (a
# plain key, a composite text key, jsonb and numeric under REPLICA IDENTITY
# FULL), and a check that replaying the log yields them exactly.
snapshot_schema() {
  psql_q <<SQL
CREATE TABLE a (id int PRIMARY KEY, v int, note text);
CREATE TABLE b (k1 int, k2 text, v bigint, PRIMARY KEY (k1, k2));
CREATE TABLE c (id bigint PRIMARY KEY, doc jsonb, num numeric);
ALTER TABLE c REPLICA IDENTITY FULL;
INSERT INTO a SELECT g, g, 'row ' || g FROM generate_series(1, $1) g;
INSERT INTO b SELECT g, 'k' || g, g * 10 FROM generate_series(1, $1) g;
INSERT INTO c SELECT g, jsonb_build_object('g', g, 's', repeat('x', g % 50)),
  g / 7.0 FROM generate_series(1, $1) g;
ANALYZE a, b, c;
SQL
}
# snapshot_check LOGDIR [--incremental]: replays the log (strictly, or as
# check_snapshot.py --incremental says) and compares with SQL.
snapshot_check() {
  cdc-log verify --log "$1" -q || fail "verify $1"
  cdc-tail --log "$1" --schema-changes --watermarks > "$T/events.ndjson"
  psql_q -F $'\t' -c "SELECT id, v, note FROM a" > "$T/a.tsv"
  psql_q -F $'\t' -c "SELECT k1, k2, v FROM b" > "$T/b.tsv"
  psql_q -F $'\t' -c "SELECT id, doc::text, num::text FROM c" > "$T/c.tsv"
  python3 "$HERE/check_snapshot.py" ${2:+"$2"} "$T/events.ndjson" "$T/a.tsv" "$T/b.tsv" "$T/c.tsv"
}
