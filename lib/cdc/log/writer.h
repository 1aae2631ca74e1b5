// LogWriter: the single writer of a log directory.
//
// Open() takes the writer lock and recovers: a torn or incomplete tail of
// the newest segment is truncated back to the end of its last complete
// transaction; damage followed by valid frames is corruption and refuses to
// open. Events are appended to an open transaction and become visible to
// readers only when Commit() writes its TXN_END frame; they become durable
// only when Sync() returns OK (group commit: many commits, one fdatasync).
// Memory stays bounded by the frame and write-buffer sizes however large a
// transaction grows. A failed write or fsync is fatal: every later call
// returns the same error. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cdc/base/fs.h"
#include "cdc/base/lsn.h"
#include "cdc/base/sha256.h"
#include "cdc/base/status.h"
#include "cdc/log/frame.h"
#include "cdc/log/log_dir.h"

namespace cdc::log {

struct WriterOptions {
  uint64_t segment_bytes = 64ull << 20;  // seal after this, at a txn end
  size_t frame_bytes = 256u << 10;       // raw bytes per frame
  size_t write_buffer_bytes = 1u << 20;  // buffered before write()
  int zstd_level = 1;
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
  ~LogWriter();

  // Appends one event (a JSON object in stored form, no newline) to the open
  // transaction, starting one if none is open.
  Status Append(std::string_view event);
  // Ends the open transaction (or records a position when none is open)
  // with its commit LSN, time (µs since epoch) and source xid.
  Status Commit(Lsn lsn, int64_t commit_time, uint64_t xid);
  // Discards the open transaction; nothing of it stays in the log.
  Status Abort();
  // Writes everything buffered and fdatasyncs. On OK every committed
  // transaction is durable; seals the segment if it is full.
  Status Sync();

  bool in_txn() const { return txn_events_ > 0; }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t txn_events() const { return txn_events_; }
  Lsn last_commit_lsn() const { return last_lsn_; }
  Lsn durable_lsn() const { return durable_lsn_; }
  bool has_commit() const { return has_commit_; }
  // Commits since the last successful Sync().
  uint64_t unsynced_commits() const { return unsynced_commits_; }
  // Bytes written or buffered since the last successful Sync().
  uint64_t unsynced_bytes() const { return unsynced_bytes_; }
  const RecoveryReport& recovery() const { return recovery_; }
  const LogIdentity& identity() const { return identity_; }
  const std::string& dir() const { return dir_; }

 private:
  LogWriter(std::string dir, const WriterOptions& opts);
  Status Recover();
  Status OpenActive(uint64_t base_seq, bool create);
  Status EmitFrame(bool txn_end, Lsn lsn, int64_t time, uint64_t xid);
  Status Flush();
  Status Seal();
  Status Fail(Status s);

  std::string dir_;
  WriterOptions opts_;
  LogIdentity identity_;
  std::unique_ptr<WriterLock> lock_;
  Codec codec_;
  RecoveryReport recovery_;
  Status failed_;

  // Active segment.
  uint64_t base_seq_ = 1;
  std::string path_;
  FileHandle fd_;
  uint64_t file_size_ = 0;  // bytes written to the file
  Sha256 sha_;
  bool seg_has_commit_ = false;
  Lsn seg_first_lsn_ = 0, seg_last_lsn_ = 0;
  int64_t seg_first_time_ = 0, seg_last_time_ = 0;

  // Buffers and positions.
  std::string frame_raw_;  // events of the frame being filled
  uint32_t frame_events_ = 0;
  uint64_t frame_first_seq_ = 0;
  std::string out_;  // encoded frames not yet written
  uint64_t next_seq_ = 1;
  uint64_t txn_first_seq_ = 0;
  uint64_t txn_events_ = 0;
  uint64_t txn_start_ = 0;  // logical offset where the open txn began
  Lsn last_lsn_ = 0;
  bool has_commit_ = false;
  Lsn durable_lsn_ = 0;
  uint64_t unsynced_commits_ = 0;
  uint64_t unsynced_bytes_ = 0;
};

}  // namespace cdc::log
