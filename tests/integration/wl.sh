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
# wl_loop TXNS PAUSE: batches of TXNS workload transactions, PAUSE seconds
# apart, until $T/stop exists (run it in the background).
wl_loop() {
  local i=1
  while [ -d "$T" ] && [ ! -e "$T/stop" ]; do
    python3 "$HERE/workload.py" "$i" "$1" "$i" | psql -X -q > /dev/null 2>&1 || true
    i=$((i + $1))
    sleep "$2"
  done
}
