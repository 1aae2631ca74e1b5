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

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "cdc/base/logging.h"
#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/base/time.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/capture/tables.h"
#include "cdc/log/writer.h"
#include "cdc/pg/encoding.h"
#include "cdc/pg/types.h"

namespace cdc::capture {

inline constexpr int64_t kTtyProgressEveryUs = 500000;
inline constexpr int64_t kLogProgressEveryUs = 60000000;

// An initial snapshot's progress on stderr: a line kept up to date on a
// terminal, else one line a minute (the log of a service).
class SnapshotProgress {
 public:
  SnapshotProgress(bool quiet, uint64_t tables, uint64_t estimate,
                   bool all_known)
      : quiet_(quiet),
        tty_(isatty(STDERR_FILENO) == 1),
        tables_(tables),
        estimate_(estimate),
        all_known_(all_known),
        start_(MonoMicros()),
        last_(start_) {}

  void Update(const Table& t, uint64_t table_index, uint64_t table_rows,
              uint64_t total_rows, bool force) {
    if (quiet_) return;
    const int64_t now = MonoMicros();
    if (!force &&
        now - last_ < (tty_ ? kTtyProgressEveryUs : kLogProgressEveryUs))
      return;
    last_ = now;
    const double secs = static_cast<double>(now - start_) / 1e6;
    const double rate = secs > 0 ? static_cast<double>(total_rows) / secs : 0;
    char left[64] = "";
    if (rate > 0 && all_known_ && estimate_ > total_rows)
      snprintf(left, sizeof left, ", ~%.0f s left",
               static_cast<double>(estimate_ - total_rows) / rate);
    char buf[512];
    snprintf(buf, sizeof buf,
             "snapshot: table %llu/%llu %s.%s %llu rows (%s); %llu %s, %.0f "
             "rows/s%s",
             static_cast<unsigned long long>(table_index + 1),
             static_cast<unsigned long long>(tables_), t.schema.c_str(),
             t.name.c_str(), static_cast<unsigned long long>(table_rows),
             EstimateText(t.estimate).c_str(),
             static_cast<unsigned long long>(total_rows), OfTotal().c_str(),
             rate, left);
    if (tty_) {
      fprintf(stderr, "\r%s\033[K", buf);
      live_ = true;
    } else {
      LogInfo(buf);
    }
  }
  void Done() {
    if (live_) fputc('\n', stderr);
    live_ = false;
  }
  // After the rows copied so far: "of ~N rows", or "rows" alone.
  std::string OfTotal() const {
    return all_known_ && estimate_ > 0
               ? "of " + EstimateText(estimate_) + " rows"
               : "rows";
  }
  // The rows of all tables: "~N rows" when every table has an estimate,
  // else a floor or nothing.
  std::string TotalText() const {
    if (estimate_ == 0) return "estimate unknown";
    if (all_known_) return EstimateText(estimate_) + " rows";
    return "at least " + EstimateText(estimate_) +
           " rows; some tables never analysed";
  }

 private:
  bool quiet_, tty_;
  uint64_t tables_, estimate_;
  bool all_known_;
  int64_t start_, last_;
  bool live_ = false;
};

// Where an initial snapshot's events go, in order. `event` is a whole
// stored event; the sink may take its contents.
using SnapshotSink = std::function<Status(std::string* event, bool schema)>;

// The sink into the log: schema events through AppendSchema, rows taken;
// each event after the transaction's first is announced (EventFollows),
// so that a large frame is written out rather than held beside the next.
// Counts the events and their bytes.
SnapshotSink LogSnapshotSink(log::LogWriter& w, Metrics* m, uint64_t* events);

// The rows of an initial snapshot on their way to a sink. Each row is held
// until the next comes, so that a table's first row can carry
// "snapshot":"first", its last "last", and the row of a table of one
// "only".
class HeldSnapshotRow {
 public:
  explicit HeldSnapshotRow(SnapshotSink sink) : sink_(std::move(sink)) {}
  // Passes on the row held, if any (another follows it), and holds *row (a
  // whole event, closing brace included; *row is left with the old
  // buffer), the first of its table when `first`.
  Status Hold(std::string* row, bool first);
  // Passes on the row held, the last of its table when `last`.
  Status Flush(bool last);

 private:
  SnapshotSink sink_;
  std::string held_;
  bool first_ = false;
};

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
  // A snapshot connection, out of its transaction and its settings reset,
  // for the catalog lookups of the stream (TypeLookup::Adopt); null if
  // stopped.
  std::unique_ptr<pg::Connection> conn;
};

// Copies the tables over a second (plain) connection, or over
// opts.snapshot_jobs connections side by side, and commits them to
// `writer` (not synced: the caller syncs). The replication connection that
// exported the snapshot must stay idle meanwhile.
//
// With one job, tables are copied one after another in schema and name
// order. With N jobs, N connections, opened together, import the same
// exported snapshot; each copies a table at a time, the largest (by
// estimate) first;
// the rows of the tables being copied reach the log interleaved, in
// batches, each table's in its own order and still tagged first and last.
// The writer stays on the calling thread; a bounded number of batches is
// in flight, so memory does not grow with a table.
Result<SnapshotResult> TakeInitialSnapshot(const Options& opts,
                                           const SnapshotInput& in,
                                           log::LogWriter& writer,
                                           Metrics* metrics);

}  // namespace cdc::capture
