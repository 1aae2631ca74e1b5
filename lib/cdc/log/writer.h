// LogWriter: the single writer of a log directory.
//
// Open() takes the writer lock and recovers: a torn or incomplete tail of
// the newest segment is truncated back to the end of its last complete
// transaction; damage followed by valid frames is corruption and refuses to
// open. Events are appended to an open transaction and become visible to
// readers only once its TXN_END frame is written; they are durable only
// when a sync covering the commit has finished (group commit: many
// commits, one fdatasync).
//
// Compression and checksums run on background threads, fed through a short
// bounded queue, so the caller (decoding PostgreSQL's stream, or parsing
// NDJSON) keeps its core; frames are then written, fsynced and segments
// sealed strictly in queue order, one thread at a time (a ticket). Memory stays
// bounded by the frame size, queue depth and write buffer however large a
// transaction grows. One fdatasync runs at a time (later requests wait and
// are covered by one more). A failed write or fsync is fatal: every later
// call returns the same error and durable_lsn() never moves again.
//
// All methods are for one caller thread, except durable_lsn() and
// WaitDurable(), which any thread may call.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cdc/base/fs.h"
#include "cdc/base/lsn.h"
#include "cdc/base/sha256.h"
#include "cdc/base/status.h"
#include "cdc/log/frame.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/position.h"
#include "cdc/log/schemas.h"
#include "cdc/log/segment.h"
#include "cdc/log/syncer.h"

namespace cdc::log {

struct WriterOptions {
  uint64_t segment_bytes = 64ull << 20;  // seal after this, at a txn end
  size_t frame_bytes = 256u << 10;       // raw bytes per frame
  size_t write_buffer_bytes = 1u << 20;  // buffered before write()
  size_t queue_bytes = 8u << 20;         // raw bytes waiting for compression
  size_t batch_bytes = 64u << 10;        // small frames travel together
  int compress_threads = 2;              // frames compressed in parallel
  int zstd_level = 1;
  // Small transactions committed one after another share a grouped frame
  // (see frame.h) of up to this many raw bytes; it is closed when the
  // caller asks for a write or a sync, so followers see each transaction
  // as soon as before.
  size_t group_bytes = 64u << 10;
  // The frame format written: kFormatVersion, or kFormatVersion1 (one
  // transaction per frame, as earlier releases wrote; for tests and
  // benches that need such a log).
  int format_version = kFormatVersion;
  // The fdatasync of a segment or of schemas.ndjson (SyncFile unless
  // set). Tests inject disk errors here.
  std::function<Status(int fd, const std::string& path)> sync_file;
  // The durable mark (LOG/durable) is rewritten after an fdatasync at
  // most this often, and when the writer closes.
  int durable_mark_ms = 1000;
};

struct RecoveryReport {
  uint64_t truncated_bytes = 0;  // cut from the newest segment's tail
  uint64_t resealed = 0;         // seal records rebuilt after a crash
};

class LogWriter {
 public:
  // The log must exist (see CreateLog). Busy if another writer holds it.
  static Result<std::unique_ptr<LogWriter>> Open(const std::string& dir,
                                                 const WriterOptions& opts);
  // Stops the background thread. Whatever was not synced may be lost, as
  // after a crash; call Sync() first.
  ~LogWriter();

  // Appends one event (a JSON object in stored form, no newline) to the open
  // transaction, starting one if none is open.
  Status Append(std::string_view event);
  // As Append, but a large event (a frame's worth or more) is moved out of
  // `*event` into a frame of its own instead of copied, so that it is never
  // held twice. `*event` is left valid but unspecified.
  Status AppendTaking(std::string* event);
  // As Append of `count` events in a row: `*events` holds them, each ending
  // in a newline. They travel in one frame, whose buffer `*events` becomes
  // when no frame is being gathered (no copy); `*events` is left empty,
  // with a buffer for the next batch. For a producer that gathers events
  // in batches (the snapshot's copy workers).
  Status AppendEvents(std::string* events, uint32_t count);
  // As Append, for a schema event (op s): it is first recorded, with its
  // seq, in LOG/schemas.ndjson (see schemas.h), so readers starting after
  // it still learn the relation's columns. The file is fdatasynced at the
  // transaction's Commit, before its commit frame is handed on.
  Status AppendSchema(std::string_view event);
  // Tells the writer that another event of the open transaction follows:
  // a frame of kLargeFrameBytes or more being gathered is then compressed
  // and written now, and the call waits for that, so that a large event is
  // not held in memory beside the next one. Cheap otherwise.
  Status EventFollows();
  // Ends the open transaction (or records a position when none is open)
  // with its commit LSN, time (µs since epoch) and source xid. xid 0 with
  // events is a lone logical message, whose LSN is an exclusive position
  // (see position.h).
  Status Commit(Lsn lsn, int64_t commit_time, uint64_t xid);
  // Discards the open transaction; nothing of it stays in the log.
  Status Abort();
  // Asks for every commit so far to be written and fsynced, and returns
  // without waiting; durable_lsn() moves when it is done. Seals the segment
  // afterwards if it is full and no transaction is open.
  Status RequestSync();
  // RequestSync() and wait for it. On OK every commit so far is durable.
  Status Sync();
  // Asks for every whole frame so far to be written (followers see the
  // commits among them) without an fsync, and returns without waiting.
  // Cheap to call more often than RequestSync.
  Status RequestWrite();
  // A sync asked for has not finished yet.
  bool SyncPending() const { return syncer_.synced_id() < sync_requested_; }

  // Commit LSN of the last durable transaction (0 if none).
  Lsn durable_lsn() const { return syncer_.durable_lsn(); }
  // The flush position that may be acknowledged to the source: that of the
  // last durable TXN_END frame (SourcePosition::FlushLsn), 0 if none. It
  // moves only when a sync covering that frame has finished.
  Lsn durable_flush_lsn() const { return syncer_.durable_flush(); }
  // Waits up to `timeout_ms` for the durable position to reach `lsn`.
  Status WaitDurable(Lsn lsn, int timeout_ms);

  bool in_txn() const { return txn_events_ > 0; }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t txn_events() const { return txn_events_; }
  Lsn last_commit_lsn() const { return last_lsn_; }
  bool has_commit() const { return has_commit_; }
  // Position of the last TXN_END frame written (durable or not).
  const SourcePosition& position() const { return position_; }
  // Commits since the last RequestSync().
  uint64_t unsynced_commits() const { return unsynced_commits_; }
  const RecoveryReport& recovery() const { return recovery_; }
  const SyncStats& sync_stats() const { return syncer_.stats(); }
  const std::string& dir() const { return dir_; }

 private:
  struct Frame {
    FrameHeader header;
    std::string table;  // grouped frames: the transaction table
    std::string raw;
    bool first_of_txn = false;
    Lsn first_lsn = 0;  // of its first transaction (TXN_END frames)
    int64_t first_time = 0;
    size_t encoded_at = 0;  // offset of its bytes in Job::encoded
  };
  // A batch of frames (many small transactions travel together), a request
  // to write what is buffered, or one to write and fsync it.
  enum class JobKind { kFrames, kWrite, kSync };
  struct Job {
    JobKind kind = JobKind::kFrames;
    std::vector<Frame> frames;
    size_t raw_bytes = 0;
    Lsn lsn = 0;            // sync jobs: what becomes durable
    Lsn flush = 0;          // ... and its SourcePosition::FlushLsn
    uint64_t next_seq = 0;  // sync jobs: name of a following segment
    bool at_boundary = false;
    uint64_t id = 0;
    uint64_t ticket = 0;  // queue order; output is applied in this order
    std::string encoded;  // frame jobs, after compression
  };

  LogWriter(std::string dir, const WriterOptions& opts);
  // Runs the steps of recovery.h and takes up where the log ends.
  Status Recover();
  Status HashPrefix();
  // Cuts LOG/schemas.ndjson back to the lines of seqs below next_seq_
  // (after recovery), or to `size` bytes (after an abort).
  Status TrimSchemas();
  Status TruncateSchemas(uint64_t size);
  // Bookkeeping of an event about to join the frame being gathered.
  Status StartEvent();
  Status EmitFrame(bool txn_end, Lsn lsn, int64_t time, uint64_t xid);
  // Sends the events gathered so far as a frame that does not end the
  // transaction (more of it follows), after any group commit pending.
  Status EmitGathered();
  // An empty buffer with room for `bytes`: a spare one when there is.
  std::string TakeBuffer(size_t bytes);
  // Hands the whole transactions gathered in frame_raw_ to the batch as
  // one grouped frame; what follows them (the open transaction's events)
  // stays.
  Status FlushGroup();
  Status PushBatch();
  Status Failed();

  // The worker pool (writer_pool.cpp): jobs are compressed in parallel,
  // then applied to the segment in queue order, one ticket at a time.
  Status Push(Job job);
  void WaitIdle();
  void Work();

  // Background thread only (or the caller while the queue is idle).
  Status OpenActive(uint64_t base_seq, bool create);
  Status Place(const Job& job);
  // Writes what is buffered; sets *sync_fd to a descriptor to fdatasync
  // (reserved with syncer_) once the ticket is released, or syncs inline
  // before sealing.
  Status DoSync(const Job& job, int* sync_fd);
  Status Flush();
  // Writes `bytes` at the end of the segment (the buffer must be empty).
  Status WriteOut(std::string_view bytes);
  Status Seal(uint64_t next_seq);

  std::string dir_;
  WriterOptions opts_;
  // log.json as read at open (for its format version only: the source may
  // be recorded later, so checks of it read log.json again).
  LogIdentity identity_;
  std::unique_ptr<WriterLock> lock_;
  RecoveryReport recovery_;

  // Caller state.
  Job batch_;  // frames not yet handed to the workers
  std::string frame_raw_;
  uint32_t frame_events_ = 0;
  uint64_t frame_first_seq_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t txn_first_seq_ = 0;
  uint64_t txn_events_ = 0;
  uint64_t txn_frames_ = 0;  // frames of the open txn handed to the worker
  // Whole transactions at the start of frame_raw_, waiting for FlushGroup.
  std::vector<TxnEntry> group_;
  size_t group_bytes_ = 0;  // bytes of frame_raw_ they hold
  uint32_t group_events_ = 0;
  uint64_t group_first_seq_ = 0;
  Lsn last_lsn_ = 0;
  bool has_commit_ = false;
  SourcePosition position_;
  uint64_t unsynced_commits_ = 0;
  uint64_t sync_requested_ = 0;
  // LOG/schemas.ndjson, opened at the first schema event.
  FileHandle schemas_fd_;
  uint64_t schemas_size_ = 0;
  bool schemas_unsynced_ = false;  // lines written since the last sync
  // Its size before the open transaction's first schema line (an abort
  // cuts back to it); UINT64_MAX when the transaction wrote none.
  uint64_t txn_schemas_start_ = UINT64_MAX;

  // Background-thread state: the active segment and its write buffer.
  uint64_t base_seq_ = 1;
  std::string path_;
  FileHandle fd_;
  uint64_t file_size_ = 0;
  uint64_t unsynced_bytes_ = 0;
  uint64_t writeback_pending_ = 0;  // written since writeback last began
  uint64_t txn_file_start_ = 0;     // where the newest txn's first frame went
  Sha256 sha_;
  bool seg_has_commit_ = false;
  Lsn seg_first_lsn_ = 0, seg_last_lsn_ = 0;
  int64_t seg_first_time_ = 0, seg_last_time_ = 0;
  std::string out_;

  // Shared, under mu_.
  std::mutex mu_;
  std::condition_variable cv_work_;   // worker: a job arrived
  std::condition_variable cv_space_;  // caller: queue has room / idle
  std::deque<Job> queue_;
  // Frame buffers the workers are done with, for the caller to fill again
  // (their pages already mapped: no fault per page of every frame).
  std::vector<std::string> spare_raw_;
  size_t queued_bytes_ = 0;
  size_t in_flight_ = 0;  // jobs taken by workers, not yet applied
  uint64_t next_ticket_ = 0;
  uint64_t turn_ = 0;  // ticket whose output is applied next
  bool stop_ = false;
  // The fdatasyncs, the durable position and mark, and the writer's first
  // failure (sticky), under mu_.
  Syncer syncer_;
  uint64_t commit_end_ = 0;  // background: offset after the last TXN_END
  std::condition_variable cv_turn_;
  std::vector<std::thread> workers_;
};

}  // namespace cdc::log
