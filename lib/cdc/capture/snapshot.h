// The initial snapshot: every table of the publication, copied inside the
// snapshot that CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT exported, into
// the log as one transaction at the slot's consistent point.
//
// Log form (see cdc-capture(1) and cdc-log-format(5)): for each table, in
// schema and name order, one op r event per row; a table's first row
// carries "snapshot":"first", its last "snapshot":"last" (the row of a
// one-row table "snapshot":"only"); an empty table has no event. Every
// event has the consistent point as "lsn" and xid 0; the transaction is
// committed with the consistent point as an exclusive position (as a lone
// message's: a commit starting exactly there is streamed afterwards), so
// streaming resumes at the consistent point with no gap and no duplicate.
// Being one transaction, a snapshot cut short is never visible: recovery
// truncates it, and the next start takes it again on a fresh slot (the
// marker file below says so).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/log/writer.h"
#include "cdc/pg/encoding.h"
#include "cdc/pg/types.h"

namespace cdc::capture {

// The marker file, in the log directory, of an initial snapshot that has
// begun and not yet been committed to the log. It names the slot created
// for it.
std::string SnapshotMarkerPath(const std::string& log_dir);
Status WriteSnapshotMarker(const std::string& log_dir, const std::string& slot);
// The slot the marker names; NotFound when there is no marker.
Result<std::string> ReadSnapshotMarker(const std::string& log_dir);
Status RemoveSnapshotMarker(const std::string& log_dir);

struct SnapshotInput {
  std::string snapshot_name;  // exported by CREATE_REPLICATION_SLOT
  Lsn consistent_point = 0;
  const pg::TypeCatalog* catalog = nullptr;
  pg::ServerText* server_text = nullptr;
  // Called often (at least every few thousand rows): metrics, watchdog.
  std::function<void()> tick;
};

struct SnapshotResult {
  bool stopped = false;  // a stop was requested; nothing was committed
  Lsn server_lsn = 0;    // pg_current_wal_flush_lsn() once copied
  uint64_t rows = 0;
  uint64_t events = 0;
};

// Copies the tables over a second (plain) connection and commits them to
// `writer` (not synced: the caller syncs). The replication connection that
// exported the snapshot must stay idle meanwhile.
Result<SnapshotResult> TakeInitialSnapshot(const Options& opts,
                                           const SnapshotInput& in,
                                           log::LogWriter& writer,
                                           Metrics* metrics);

}  // namespace cdc::capture
