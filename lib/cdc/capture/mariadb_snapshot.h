// The initial snapshot of a MariaDB log: every selected table of the
// database copied as op r events, in one transaction of the log at the
// binlog position the copy is consistent with, so that streaming starts
// right after it with no gap and no duplicate.
//
// Consistency without locks: START TRANSACTION WITH CONSISTENT SNAPSHOT
// gives an InnoDB read view and, in the same instant, the binlog position
// (Binlog_snapshot_file/position) whose transactions it shows; the GTID
// there (BINLOG_GTID_POS) is where streaming resumes. Rows are read with
// prepared statements (the binary protocol: floats, decimals and times
// exact) and rendered by the same code as the binlog's row images, so a
// row reads the same through either path.
//
// Log form: as PostgreSQL's initial snapshot (see snapshot.h): per table,
// in name order, a schema event then one op r event per row, the first
// tagged "snapshot":"first", the last "last" (one row: "only"); empty
// tables have no event. Every event has the consistent GTID's sequence
// number as "lsn", its server id as "xid", and the snapshot's binlog file
// and pos; no "gtid" (the rows belong to no transaction). The transaction
// commits at that GTID, so a restart streams from it. Cut short, it is
// never visible: recovery drops it, and the next start takes it again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "cdc/base/status.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/log/writer.h"
#include "cdc/mariadb/conn.h"

namespace cdc::capture {

struct MariaSnapshotInput {
  mariadb::Dsn dsn;
  uint32_t domain = 0;  // the log's GTID domain
  // Whether capture reads db.table (--table).
  std::function<bool(const std::string& db, const std::string& table)> selected;
  // Called often (at least every few thousand rows): metrics, watchdog.
  std::function<void()> tick;
};

struct MariaSnapshotResult {
  bool stopped = false;  // a stop was requested; nothing was committed
  // The consistent GTID (seqno 0: none of the log's domain before it).
  uint64_t seqno = 0;
  uint32_t server_id = 0;
  uint64_t rows = 0;
  uint64_t events = 0;
  // Each copied table's schema event, by its names (,"schema":..,"table":..)
  // to its shape (from ,"key":null on): the stream needs no new one.
  std::map<std::string, std::string> shapes;
};

// Copies the tables over a connection of its own and commits them to
// `writer` (not synced: the caller syncs). Non-transactional tables
// (MyISAM, Aria) are copied as they are when read, with a warning.
Result<MariaSnapshotResult> TakeMariaDbSnapshot(const Options& opts,
                                                const MariaSnapshotInput& in,
                                                log::LogWriter& writer,
                                                Metrics* metrics);

}  // namespace cdc::capture
