# Shared setup for the MariaDB integration tests: built tools on PATH, a
# scratch directory, and throwaway MariaDB servers (scripts/mariadb.sh)
# stopped on exit.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../scripts/mariadb.sh"
on_exit_extra() { maria_stop; }
CDC_TEST_KIND=maria
source "$HERE/../common.sh"

mcapture() { cdc-capture --log "$T/log" --dsn "$MARIA_DSN" -q "$@"; }
mcapture_bg() {
  cdc-capture --log "$T/log" --dsn "$MARIA_DSN" -q "$@" 2>>"$T/capture.err" &
  CAP=$!
}
# The SQL client as root, quiet, over the last server's socket.
msql() { maria_root -N -B "$@"; }

# Every row change of database shop the server's binlog holds, as
# mariadb-binlog --verbose decodes it: one line "GTID OP TABLE" per row, in
# binlog order (the peer oracle; OP is c, u or d).
binlog_rows() {
  local dir=${1:-$MARIA_DIR}
  mariadb-binlog --no-defaults --verbose --base64-output=decode-rows \
    "$dir"/data/binlog.[0-9]* 2>/dev/null | python3 -c '
import re, sys
gtid = None
for line in sys.stdin:
    m = re.search(r"\bGTID (\d+-\d+-\d+)", line)
    if m:
        gtid = m.group(1)
        continue
    m = re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) `([^`]*)`\.`([^`]*)`", line)
    if m and m.group(2) == "shop":
        op = {"INSERT INTO": "c", "UPDATE": "u", "DELETE FROM": "d"}[m.group(1)]
        print(gtid, op, m.group(3))
'
}

# The same from the log: "GTID OP TABLE" per row event.
log_rows() {
  cdc-tail --log "${1:-$T/log}" | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e["op"] in "cud":
        print(e["gtid"], e["op"], e["table"])
'
}
