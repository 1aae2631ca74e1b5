// Incremental snapshots: the rows of a table read while streaming goes on,
// in primary-key chunks, with the watermark algorithm of Netflix's DBLog
// (Andreakis and Papapanagiotou, 2020). See cdc-capture(1), "Incremental
// snapshots".
//
// For each chunk a worker thread, over a plain connection of its own:
//   1. commits a low watermark: pg_logical_emit_message(true,
//      'cdc.snapshot', '{"id":..,"attempt":..,"w":"low"}');
//   2. in one short transaction, locks the table against DDL (ACCESS
//      SHARE), describes it, reads the next `chunk_rows` rows after the
//      last key (COPY (SELECT ... WHERE key > last ORDER BY key LIMIT n)),
//      hands them to the capture thread, and commits a high watermark
//      naming the chunk's last key.
// The capture thread, reading the stream in commit order, opens the chunk's
// window at the low watermark and notes the key of every change to the
// table until the high one; there it writes the chunk's rows whose key
// no change in the window touched (op r, "snapshot":"incremental") and the
// high watermark's own event, all in the watermark's transaction. A row the
// stream changed meanwhile is left out: the stream already holds newer
// news of it. No transaction stays open longer than one chunk's read.
//
// Only the high watermarks of chunks whose rows were written reach the log
// (hidden from readers unless asked for); low watermarks, and watermarks of
// attempts this process does not know (another capture's, or one from
// before a restart), do not. The log is therefore the truth about progress:
// after a crash, the chunks after the request's recorded progress are found
// by reading the watermarks the log holds after it.
//
// One snapshot runs at a time, in request order (log/snapshots.h). Used
// from the capture thread only (the worker is internal).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/log/writer.h"
#include "cdc/pg/event_builder.h"
#include "cdc/pg/pgoutput.h"

namespace cdc::capture {

class Incremental {
 public:
  // `builder` renders the chunks' rows in the stream's transaction; it,
  // `writer` and `metrics` must outlive this object.
  Incremental(const Options& o, log::LogWriter* writer,
              pg::EventBuilder* builder, Metrics* metrics);
  ~Incremental();

  // Reads the requests and, for a running one, the progress the log holds
  // beyond its file's. Corruption for an unreadable request or watermark.
  Status Load();

  // Forgets the chunk in flight (a new replication session: watermarks
  // still to come no longer match).
  void Reset();

  // From the capture loop, often. Picks up new requests, records the
  // progress of chunks now durable, and starts the next chunk when none is
  // in flight and the stream leaves room (`dry`: nothing to read now; or
  // some time has passed since the last chunk).
  void Tick(int64_t now_us, bool dry);

  // The events one change yielded (not a watermark): while a chunk's
  // window is open, the keys of its table's changes are noted.
  void Observe(const pg::EventLines& events) {
    if (window_open_) Note(events);
  }

  // A transactional logical message with the watermark prefix, whose event
  // line `events` holds, in the transaction committed at `commit_lsn`.
  // Replaces `events` with what goes into the log: nothing, or the chunk's
  // rows (after a schema event if the table's shape is news) and the
  // watermark's event.
  Status OnWatermark(const pg::LogicalMessage& m, Lsn commit_lsn,
                     pg::EventLines* events);

  // Records the progress of the chunks now durable (after a sync).
  void Flush() {
    if (a_) RecordDurable(false);
  }

  // A snapshot is pending or running (cdc-capture --exit-when-idle waits).
  bool busy() const;
  // One line for systemd's STATUS, empty when none runs.
  std::string StatusLine() const;

  struct Worker;

 private:
  struct Active;
  void Note(const pg::EventLines& events);
  void Pickup(int64_t now_us);
  void RecordDurable(bool force);
  void Fail(const std::string& why);
  void Persist();
  void Progress(int64_t now_us, bool force);

  const Options& o_;
  log::LogWriter* w_;
  pg::EventBuilder* builder_;
  Metrics* m_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Active> a_;  // the snapshot being taken, if any
  bool window_open_ = false;
  int64_t next_pickup_us_ = 0;
  int64_t last_chunk_us_ = 0;
  int64_t retry_at_us_ = 0;
};

}  // namespace cdc::capture
