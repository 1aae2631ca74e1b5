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
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/capture/mariadb_table.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/log/writer.h"
#include "cdc/mariadb/conn.h"

namespace cdc::capture {

// What the initial and the incremental snapshots share: how a table is
// read over the binary protocol and its rows rendered as the binlog's.
namespace maria {

// `name` as a backquoted identifier.
std::string QuoteName(std::string_view name);

// Character sets by name, loaded once; columns point into it.
class Charsets {
 public:
  Result<const mariadb::Charset*> Get(const std::string& name);

 private:
  std::map<std::string, mariadb::Charset> sets_;
};

// How one table is read: its description (as a table map gives it), how
// the prepared statement fetches each column, and the SELECT list.
struct ReadPlan {
  Table table;
  std::vector<mariadb::RowStream::Kind> kinds;
  std::vector<std::string> sql_types;   // information_schema's DATA_TYPE
  std::vector<std::string> collations;  // of text columns, else empty
  std::string columns;                  // the SELECT list
  uint64_t estimate = 0;                // information_schema.TABLES
  std::string engine;
  bool transactional() const { return engine == "InnoDB"; }
};

// The base tables of `database` that `want` takes (only the one named
// `only`, when given), in name order, described by information_schema as
// the server sees them now. Config for a column type the snapshot does
// not read. `charsets` must outlive the plans.
Result<std::vector<std::unique_ptr<ReadPlan>>> PlanTables(
    mariadb::Connection& conn, const std::string& database,
    const std::function<bool(const std::string& table)>& want,
    const std::string* only, Charsets* charsets);

// The current row of `rows` (a SELECT of p.columns) as JSON values, one
// per column.
Status RowValues(const ReadPlan& p, const mariadb::RowStream& rows,
                 std::vector<std::string>* values);

// ,"schema":..,"table":..,"key":..,"before":null,"after":.. of an op r
// event of those values.
void AppendRowBody(const Table& t, const std::vector<std::string>& values,
                   std::string* row);

}  // namespace maria

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
