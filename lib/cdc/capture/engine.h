// The source-neutral half of cdc-capture: the loop that turns a source's
// committed transactions into log frames. It owns the log writer, group
// commit (a transaction is written for followers within milliseconds and
// fsynced in groups), housekeeping (disk floor, retention, metrics, status
// lines), reconnecting with backoff, and the clean stop. A source (the
// PostgreSQL one in pg_source.cpp, MariaDB's in mariadb_source.cpp) speaks
// its server's protocol, renders events and tells the engine where its
// transactions end; what it may acknowledge to its server it reads from the
// writer's durable position (docs/invariants.md, invariant 2), which the
// engine moves only after an fsync.
//
// Adding a source is a new class implementing Source and a branch in
// capture.cpp that picks it by the DSN: the engine does not change.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/options.h"
#include "cdc/event/lines.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"

namespace cdc::capture {

class Engine;

// One source's connection, as the engine drives it. Every call comes from
// the engine's thread.
class Source {
 public:
  virtual ~Source() = default;

  // Once per run, after the log is open: what the source keeps across
  // connections (an incremental snapshot's state, say).
  virtual Status Load() { return Status::OK(); }
  // Connects, checks the server and the log belong together, takes an
  // initial snapshot when one is due, and starts the stream. Sets *stopped
  // when a stop was requested before streaming began.
  virtual Status Start(bool* stopped) = 0;
  // Handles at most one message without blocking: true when one was
  // handled, false when none was waiting. An error ends the connection
  // (Unavailable and other retryable codes are retried).
  virtual Result<bool> Next() = 0;
  // Blocks until a message may be waiting or `wait_us` has passed; with
  // `paused`, only sleeps. Returns true when data is waiting.
  virtual Result<bool> Wait(int64_t wait_us, bool paused) = 0;
  // The source's own timers, around the engine's group commit: Tick
  // before it (snapshot chunks), Timers after it (acknowledgements,
  // position frames). `pausing`: the stream is dry.
  virtual void Tick(int64_t now, bool pausing) {
    (void)now;
    (void)pausing;
  }
  virtual Status Timers(int64_t now, bool pausing) = 0;
  // Something is due within a few milliseconds (an acknowledgement the
  // server waits for): the engine wakes up soon to call Timers.
  virtual bool SoonDue() const { return false; }
  // --exit-when-idle: everything the server had when we connected is in.
  virtual bool IdleDone() const { return false; }
  // The connection is over (stop, error or end of stream): forget the open
  // transaction (it was never acknowledged and comes again). The engine
  // then drops it from the writer and fsyncs, and calls End.
  virtual void Abandon() = 0;
  // After that fsync: record what is now durable and, on a stream still
  // open, send the final acknowledgement.
  virtual void End() = 0;
  // A line for systemd's STATUS when the source has something to say
  // (empty: the engine's).
  virtual std::string StatusLine() const { return ""; }
  // A frame's commit position, for messages ("durable at ...").
  virtual std::string Describe(Lsn lsn) const = 0;
  // For the log: whom the engine connects to (a password never shown).
  virtual std::string Target() const = 0;
  // Labels of the metrics file that tell this capture from another, after
  // the log's id (",slot=\"cdc\"", say).
  virtual std::string MetricLabels() const = 0;
};

class Engine {
 public:
  explicit Engine(const Options& o);
  ~Engine();

  // Opens the log, makes the source with `make`, and runs until a stop
  // (SIGTERM, SIGINT), idle (--exit-when-idle) or an error that retrying
  // cannot fix; connection failures are retried with exponential backoff
  // for Options::reconnect_max_s, then Unavailable (exit 69).
  Status Run(const std::function<std::unique_ptr<Source>(Engine*)>& make);

  // For sources: appends a transaction's events (schema events marked so
  // in `events`) to the open transaction.
  Status Append(event::EventLines& events);
  // Ends the open transaction at this source position; it is written for
  // followers within milliseconds and fsynced with its group.
  Status Commit(Lsn lsn, int64_t commit_time_us, uint64_t xid);
  // Records a source position without events (a position frame) and asks
  // for its fsync.
  Status CommitPosition(Lsn lsn, uint64_t xid);
  // Says a line unless --quiet; warnings are always printed.
  void Say(const std::string& msg) const;
  static void Warn(const std::string& msg);
  // Engine housekeeping at most every second (for long phases such as an
  // initial snapshot, which do not run the stream loop).
  void Tick();
  // Sends systemd READY once.
  void Ready();

  const Options& options() const { return o_; }
  const log::LogIdentity& identity() const { return id_; }
  log::LogWriter& writer() { return *w_; }
  const log::LogWriter& writer() const { return *w_; }
  Metrics& metrics() { return m_; }
  // Events appended to the open transaction so far.
  uint64_t txn_events() const { return txn_events_; }
  void StartTxn() { txn_events_ = 0; }
  // The writer has committed transactions not yet fsynced.
  bool Unsynced() const { return first_unsynced_ != 0; }

 private:
  Status Session(Source& src);
  Status Stream(Source& src);
  Status Timers(Source& src, int64_t now, bool pausing);
  Status Drain(Source* src);
  void Housekeeping(int64_t now, const Source* src);
  int64_t SyncDue() const;
  int64_t WriteDue() const;

  Options o_;
  log::LogIdentity id_;
  std::unique_ptr<log::LogWriter> w_;
  const Source* src_ = nullptr;  // for status lines
  std::string metric_labels_;
  Metrics m_;
  uint64_t txn_events_ = 0;
  int64_t first_unsynced_ = 0;   // first commit not yet asked to be synced
  int64_t first_unwritten_ = 0;  // ... not yet asked to be written
  int64_t last_write_ = 0;       // when a write or sync was last asked for
  int64_t next_housekeeping_ = 0;
  int64_t next_retention_ = 0;
  int64_t next_metrics_ = 0;
  bool ready_sent_ = false;
  bool streamed_ = false;     // the last session got as far as streaming
  uint32_t since_clock_ = 0;  // messages handled since the clock was read
  bool hot_ = true;           // messages come faster than a sleep and wake
  int64_t dry_since_ = 0;     // when reading last found nothing
};

}  // namespace cdc::capture
