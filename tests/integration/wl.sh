# Workload helpers shared by the crash and restart tests.
wl_schema() {
  psql_q <<'SQL'
CREATE TABLE a (id int PRIMARY KEY, v int, note text);
CREATE TABLE b (id int PRIMARY KEY, v int, note text);
CREATE TABLE c (id int PRIMARY KEY, v int, note text);
CREATE TABLE wl (n int PRIMARY KEY, xid bigint);
SQL
}
# wl_check: compares the log with what committed.
wl_check() {
  cdc-log verify --log "$T/log" -q || fail "verify"
  cdc-tail --log "$T/log" --schema-changes > "$T/events.ndjson"
  psql_q -F $'\t' -c "SELECT n, xid FROM wl" > "$T/wl.tsv"
  for t in a b c; do psql_q -F $'\t' -c "SELECT id, v, note FROM $t" > "$T/$t.tsv"; done
  python3 "$HERE/check_workload.py" "$T/events.ndjson" "$T/wl.tsv" "$T/a.tsv" "$T/b.tsv" "$T/c.tsv"
}
