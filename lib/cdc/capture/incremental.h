// Incremental snapshots: the rows of a table read while streaming goes on,
// in primary-key chunks, with the watermark algorithm of Netflix's DBLog
// (Andreakis and Papapanagiotou, 2020). See cdc-capture(1), "Incremental
// snapshots".
//
// For each chunk a worker thread, over a plain connection of its own:
//   1. commits a low watermark ('{"id":..,"attempt":..,"w":"low"}');
//   2. in one short transaction, holds off DDL on the table, describes it,
//      reads the next `chunk_rows` rows after the last key in key order,
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
// How a source writes a watermark and reads a chunk is its ChunkSource's:
// PostgreSQL's are logical decoding messages (pg_logical_emit_message with
// the prefix cdc.snapshot) and COPY; MariaDB, which has no messages,
// writes them as a row of a signal table capture owns, and reads chunks
// with prepared statements. Either way the high watermark reaches the log
// as an op m event with that prefix.
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/event/lines.h"
#include "cdc/log/snapshots.h"
#include "cdc/log/writer.h"

namespace cdc::capture {

// What a source does for incremental snapshots. Validate, Watermark, Begin,
// Read, Commit and Rollback run on the snapshot's worker thread, over a
// connection of the ChunkSource's own; RenderSchema and RenderRow on the
// capture thread, inside the transaction of a high watermark.
class ChunkSource {
 public:
  // A chunk as read: its rows in the source's form.
  struct Chunk {
    virtual ~Chunk() = default;
    size_t rows = 0;
    // The key of the last row read (text forms the next Read takes back);
    // unset when the chunk is empty.
    std::optional<std::vector<std::string>> last_key;
  };
  virtual ~ChunkSource() = default;

  // The table may be read in chunks: its row estimate (0: unknown).
  // NotFound, Usage, Config or Permission fail the snapshot; other errors
  // are retried.
  virtual Result<uint64_t> Validate(const log::IncrementalSnapshot& req) = 0;
  // Writes a watermark with `content`: committed at once outside a
  // transaction, or with it inside one.
  virtual Status Watermark(const std::string& content) = 0;
  virtual Status Begin() = 0;
  // In the transaction: holds off DDL on the table until it ends, describes
  // it, and reads up to req.chunk_rows rows after req.last_key.
  virtual Result<std::unique_ptr<Chunk>> Read(
      const log::IncrementalSnapshot& req) = 0;
  virtual Status Commit() = 0;
  // Ends an open transaction and closes the connection after a failure;
  // the next call connects again.
  virtual void Drop() = 0;

  // The table's schema event, when the stream has not shown it in the
  // chunk's shape (what the stream shows next, had DDL changed it).
  virtual Status RenderSchema(Chunk* c, event::EventLines* events) = 0;
  // Row `i` of the chunk as an op r event of the open transaction.
  virtual Status RenderRow(Chunk* c, size_t i, event::EventLines* events) = 0;
};

class Incremental {
 public:
  // `source` reads and renders the chunks; `writer` and `metrics` must
  // outlive this object.
  Incremental(const Options& o, log::LogWriter* writer,
              std::unique_ptr<ChunkSource> source, Metrics* metrics);
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
  void Observe(const event::EventLines& events) {
    if (window_open_) Note(events);
  }

  // A watermark with `content` in the transaction committed at
  // `commit_lsn`, whose event (op m, prefix cdc.snapshot) is the last line
  // of `events`. Replaces `events` with what goes into the log: nothing,
  // or the chunk's rows (after a schema event if the table's shape is
  // news) and the watermark's event.
  Status OnWatermark(std::string_view content, Lsn commit_lsn,
                     event::EventLines* events);

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
  void Note(const event::EventLines& events);
  void Pickup(int64_t now_us);
  // Takes what the worker handed over (a table checked, a chunk's rows, an
  // error). False when that ended the request (a_ is gone).
  bool TakePosted(int64_t now_us);
  void RecordDurable(bool force);
  void Fail(const std::string& why);
  void Persist();
  void Progress(int64_t now_us, bool force);

  const Options& o_;
  log::LogWriter* w_;
  std::unique_ptr<ChunkSource> source_;
  Metrics* m_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Active> a_;  // the snapshot being taken, if any
  bool window_open_ = false;
  int64_t next_pickup_us_ = 0;
  int64_t last_chunk_us_ = 0;
  int64_t retry_at_us_ = 0;
};

}  // namespace cdc::capture
