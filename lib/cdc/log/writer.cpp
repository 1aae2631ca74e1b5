#include "cdc/log/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "cdc/log/recovery.h"
#include "cdc/log/segment.h"

namespace cdc::log {

LogWriter::LogWriter(std::string dir, const WriterOptions& opts)
    : dir_(std::move(dir)),
      opts_(opts),
      syncer_(&mu_, dir_, opts.sync_file, opts.durable_mark_ms) {}

LogWriter::~LogWriter() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : workers_) t.join();
  // What the last sync made durable is protected from now on too.
  if (!syncer_.has_failed()) syncer_.MaybeWriteMark(/*force=*/true);
}

Result<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& dir,
                                                   const WriterOptions& opts) {
  std::unique_ptr<LogWriter> w(new LogWriter(dir, opts));
  CDC_ASSIGN_OR_RETURN(w->identity_, ReadIdentity(dir));
  CDC_ASSIGN_OR_RETURN(WriterLock lock, WriterLock::Acquire(dir));
  w->lock_ = std::make_unique<WriterLock>(std::move(lock));
  CDC_RETURN_IF_ERROR(w->Recover());
  if (opts.format_version != kFormatVersion1)
    CDC_RETURN_IF_ERROR(
        RaiseFormatVersion(dir, &w->identity_, kLogFormatVersion));
  for (int i = 0; i < std::max(1, opts.compress_threads); ++i)
    w->workers_.emplace_back([p = w.get()] { p->Work(); });
  return w;
}

Status LogWriter::Recover() {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir_));
  if (segs.empty()) return OpenActive(1, /*create=*/true);
  CDC_ASSIGN_OR_RETURN(recovery::SealedEnd sealed,
                       recovery::CheckSealedSegments(segs));
  recovery_.resealed = sealed.resealed;
  has_commit_ = sealed.has_commit;
  last_lsn_ = sealed.last_lsn;
  position_ = sealed.position;

  const SegmentInfo& active = segs.back();
  CDC_RETURN_IF_ERROR(recovery::RemoveStaleSeal(dir_, active));
  CDC_RETURN_IF_ERROR(OpenActive(active.base_seq, /*create=*/false));
  CDC_ASSIGN_OR_RETURN(recovery::Newest newest,
                       recovery::ScanNewest(dir_, active));
  const SegmentScan& scan = newest.scan;
  if (scan.txn_end < newest.size) {
    CDC_RETURN_IF_ERROR(recovery::CutTail(fd_.fd(), path_, scan.txn_end));
    recovery_.truncated_bytes = newest.size - scan.txn_end;
  }
  file_size_ = commit_end_ = scan.txn_end;
  next_seq_ = scan.next_seq;
  if (scan.has_commit) {
    has_commit_ = true;
    last_lsn_ = scan.last_lsn;
    position_ = SourcePosition::Of(scan.last_end);
    seg_has_commit_ = true;
    seg_first_lsn_ = scan.first_lsn;
    seg_last_lsn_ = scan.last_lsn;
    seg_first_time_ = scan.first_time;
    seg_last_time_ = scan.last_time;
  } else if (sealed.unscanned) {
    CDC_ASSIGN_OR_RETURN(
        position_, recovery::SealedPosition(*sealed.unscanned, last_lsn_));
  }
  if (has_commit_ && !position_.valid)
    position_ = SourcePosition{true, last_lsn_, false};
  syncer_.Restore(last_lsn_, position_.FlushLsn(), newest.mark);
  CDC_RETURN_IF_ERROR(TrimSchemas());
  return HashPrefix();
}

Status LogWriter::TrimSchemas() {
  CDC_ASSIGN_OR_RETURN(auto trim, recovery::PlanSchemaTrim(dir_, next_seq_));
  if (!trim) return Status::OK();
  CDC_ASSIGN_OR_RETURN(schemas_fd_, OpenFile(SchemasPath(dir_), O_RDWR));
  schemas_size_ = trim->size;
  return TruncateSchemas(trim->keep);
}

Status LogWriter::TruncateSchemas(uint64_t size) {
  if (size >= schemas_size_) return Status::OK();
  CDC_RETURN_IF_ERROR(
      recovery::CutTail(schemas_fd_.fd(), SchemasPath(dir_), size));
  schemas_size_ = size;
  return Status::OK();
}

Status LogWriter::AppendSchema(std::string_view event) {
  if (syncer_.has_failed()) return Failed();
  const std::string path = SchemasPath(dir_);
  if (!schemas_fd_.valid()) {
    CDC_ASSIGN_OR_RETURN(
        schemas_fd_, OpenFile(path, O_RDWR | O_CREAT | O_EXCL, NewFileMode()));
    CDC_RETURN_IF_ERROR(SyncDir(dir_));
    schemas_size_ = 0;
  }
  if (txn_schemas_start_ == UINT64_MAX) txn_schemas_start_ = schemas_size_;
  const std::string line = SchemaLine(next_seq_, event);
  // Synced at the transaction's commit, before its commit frame (one
  // fdatasync for all the transaction's schema lines: an initial snapshot
  // has one per table).
  Status s = PwriteAll(schemas_fd_.fd(), line.data(), line.size(),
                       schemas_size_, path);
  if (!s.ok()) {
    // The writer cannot go on (a failed fsync is never retried); what a
    // reopen finds beyond the log's end is cut then.
    std::lock_guard<std::mutex> lk(mu_);
    syncer_.Fail(s);
    return s;
  }
  schemas_size_ += line.size();
  schemas_unsynced_ = true;
  return Append(event);
}

Status LogWriter::Failed() {
  std::lock_guard<std::mutex> lk(mu_);
  return syncer_.failure();
}

Status LogWriter::StartEvent() {
  if (syncer_.has_failed()) return Failed();
  if (txn_events_ == 0) {
    txn_first_seq_ = next_seq_;
    txn_frames_ = 0;
  }
  // A full frame goes out only when another event follows it, so the
  // TXN_END frame always holds the transaction's last event (its "last").
  // Whole transactions before the open one leave first, in their own
  // grouped frame.
  if (frame_raw_.size() >= opts_.frame_bytes) {
    CDC_RETURN_IF_ERROR(FlushGroup());
    if (frame_raw_.size() >= opts_.frame_bytes)
      CDC_RETURN_IF_ERROR(EmitFrame(/*txn_end=*/false, 0, 0, 0));
  }
  if (frame_events_ == 0) frame_first_seq_ = next_seq_;
  ++frame_events_;
  ++txn_events_;
  ++next_seq_;
  return Status::OK();
}

Status LogWriter::Append(std::string_view event) {
  CDC_RETURN_IF_ERROR(StartEvent());
  frame_raw_.append(event);
  frame_raw_.push_back('\n');
  return Status::OK();
}

Status LogWriter::AppendTaking(std::string* event) {
  // Only a buffer with room for the newline can become the frame as it is.
  if (event->size() < opts_.frame_bytes || event->capacity() == event->size()) {
    return Append(*event);
  }
  // Whatever was gathered goes first (it is not the transaction's last
  // event), so the large one starts a frame of its own.
  CDC_RETURN_IF_ERROR(EmitGathered());
  CDC_RETURN_IF_ERROR(StartEvent());
  frame_raw_.swap(*event);
  frame_raw_.push_back('\n');
  return Status::OK();
}

Status LogWriter::AppendEvents(std::string* events, uint32_t count) {
  if (count == 0) return Status::OK();
  if (!frame_raw_.empty() && events->size() >= opts_.frame_bytes) {
    // A frame's worth is not copied behind what was gathered (a schema
    // event, say, before a row of a large value): that goes first, as
    // AppendTaking's does, and the batch becomes a frame of its own.
    CDC_RETURN_IF_ERROR(EmitGathered());
  }
  // The first event decides, as Append's would, whether the frame being
  // gathered is full and goes first; the rest ride along with it.
  CDC_RETURN_IF_ERROR(StartEvent());
  frame_events_ += count - 1;
  txn_events_ += count - 1;
  next_seq_ += count - 1;
  if (frame_raw_.empty()) {
    frame_raw_.swap(*events);
  } else {
    frame_raw_.append(*events);
  }
  events->clear();
  return Status::OK();
}

Status LogWriter::EmitGathered() {
  if (syncer_.has_failed()) return Failed();
  CDC_RETURN_IF_ERROR(FlushGroup());
  if (frame_events_ == 0) return Status::OK();
  return EmitFrame(/*txn_end=*/false, 0, 0, 0);
}

Status LogWriter::EventFollows() {
  if (frame_raw_.size() < kLargeFrameBytes) return Status::OK();
  CDC_RETURN_IF_ERROR(EmitGathered());
  CDC_RETURN_IF_ERROR(PushBatch());
  WaitIdle();
  return Failed();
}

Status LogWriter::EmitFrame(bool txn_end, Lsn lsn, int64_t time, uint64_t xid) {
  Frame f;
  f.header.version = static_cast<uint8_t>(opts_.format_version);
  f.header.flags = txn_end ? kFlagTxnEnd : 0;
  f.header.first_seq = frame_events_ > 0 ? frame_first_seq_ : next_seq_;
  f.header.event_count = frame_events_;
  f.header.commit_lsn = lsn;
  f.header.commit_time = time;
  f.header.xid = xid;
  f.first_lsn = lsn;
  f.first_time = time;
  f.first_of_txn = txn_frames_ == 0;
  f.raw = std::move(frame_raw_);
  // The next frame is likely the size of this one: one allocation, not a
  // string of doublings that copy it.
  frame_raw_ = TakeBuffer(std::min(f.raw.size() + f.raw.size() / 4 + 64,
                                   opts_.frame_bytes + (64u << 10)));
  frame_events_ = 0;
  ++txn_frames_;
  batch_.raw_bytes += f.raw.size();
  batch_.frames.push_back(std::move(f));
  if (batch_.raw_bytes >= opts_.batch_bytes) return PushBatch();
  return Status::OK();
}

std::string LogWriter::TakeBuffer(size_t bytes) {
  std::string b;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!spare_raw_.empty()) {
      b = std::move(spare_raw_.back());
      spare_raw_.pop_back();
    }
  }
  b.clear();
  b.reserve(bytes);
  return b;
}

Status LogWriter::FlushGroup() {
  if (group_.empty()) return Status::OK();
  Frame f;
  const TxnEntry& last = group_.back();
  f.header.version = static_cast<uint8_t>(opts_.format_version);
  f.header.flags = kFlagTxnEnd;
  f.header.first_seq = group_first_seq_;
  f.header.event_count = group_events_;
  f.header.commit_lsn = last.commit_lsn;
  f.header.commit_time = last.commit_time;
  f.header.xid = last.xid;
  f.first_lsn = group_.front().commit_lsn;
  f.first_time = group_.front().commit_time;
  // One transaction needs no table: its frame is the plain kind.
  if (group_.size() > 1) EncodeTxnTable(group_, &f.table);
  if (group_bytes_ == frame_raw_.size()) {
    f.raw = std::move(frame_raw_);
    frame_raw_ = TakeBuffer(std::min(f.raw.size() + f.raw.size() / 4 + 64,
                                     opts_.frame_bytes + (64u << 10)));
  } else {
    f.raw = TakeBuffer(group_bytes_);
    f.raw.append(frame_raw_, 0, group_bytes_);
    frame_raw_.erase(0, group_bytes_);
  }
  frame_events_ -= group_events_;
  frame_first_seq_ = txn_first_seq_;  // the open transaction's, if any
  group_.clear();
  group_bytes_ = 0;
  group_events_ = 0;
  batch_.raw_bytes += f.raw.size();
  batch_.frames.push_back(std::move(f));
  if (batch_.raw_bytes >= opts_.batch_bytes) return PushBatch();
  return Status::OK();
}

Status LogWriter::PushBatch() {
  CDC_RETURN_IF_ERROR(FlushGroup());
  if (batch_.frames.empty()) return Status::OK();
  Job job = std::move(batch_);
  batch_ = Job();
  return Push(std::move(job));
}

Status LogWriter::Commit(Lsn lsn, int64_t commit_time, uint64_t xid) {
  if (syncer_.has_failed()) return Failed();
  if (schemas_unsynced_) {
    // The transaction's schema lines are durable before anything can make
    // its commit durable: its commit frame is not even written yet.
    const std::string path = SchemasPath(dir_);
    Status s = opts_.sync_file ? opts_.sync_file(schemas_fd_.fd(), path)
                               : SyncFile(schemas_fd_.fd(), path);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lk(mu_);
      syncer_.Fail(s);
      return s;
    }
    schemas_unsynced_ = false;
  }
  if (opts_.format_version != kFormatVersion1 && txn_events_ > 0 &&
      txn_frames_ == 0) {
    // The whole transaction is in frame_raw_: it joins the group, which
    // goes out when the caller asks for a write or a sync, or when full.
    if (group_.empty()) group_first_seq_ = txn_first_seq_;
    group_.push_back(
        TxnEntry{static_cast<uint32_t>(txn_events_), lsn, commit_time, xid});
    group_bytes_ = frame_raw_.size();
    group_events_ = frame_events_;
    if (group_bytes_ >= opts_.group_bytes) CDC_RETURN_IF_ERROR(FlushGroup());
  } else {
    // A transaction that already spans frames, a position (no events), or
    // format 1: a frame of its own.
    CDC_RETURN_IF_ERROR(FlushGroup());
    CDC_RETURN_IF_ERROR(EmitFrame(/*txn_end=*/true, lsn, commit_time, xid));
  }
  position_ = SourcePosition::Of(lsn, xid, txn_events_);
  txn_events_ = 0;
  txn_schemas_start_ = UINT64_MAX;
  txn_frames_ = 0;
  last_lsn_ = lsn;
  has_commit_ = true;
  ++unsynced_commits_;
  return Status::OK();
}

Status LogWriter::Abort() {
  if (syncer_.has_failed()) return Failed();
  if (txn_events_ == 0) return Status::OK();
  if (txn_schemas_start_ != UINT64_MAX) {
    // The seqs of its schema lines go to other events now.
    CDC_RETURN_IF_ERROR(TruncateSchemas(txn_schemas_start_));
    txn_schemas_start_ = UINT64_MAX;
  }
  // Whole transactions gathered before it stay.
  frame_raw_.resize(group_bytes_);
  frame_events_ = group_events_;
  next_seq_ = txn_first_seq_;
  txn_events_ = 0;
  if (txn_frames_ == 0) return Status::OK();
  txn_frames_ = 0;
  CDC_RETURN_IF_ERROR(PushBatch());
  // Frames of this transaction went to the worker. With it idle, its state
  // is ours to change: cut them from the buffer and, if they reached the
  // file (carrying no TXN_END, so no reader used them), from the file.
  WaitIdle();
  std::lock_guard<std::mutex> lk(mu_);
  if (!syncer_.failure().ok()) return syncer_.failure();
  if (txn_file_start_ >= file_size_) {
    out_.resize(txn_file_start_ - file_size_);
    return Status::OK();
  }
  out_.clear();
  Status s;
  if (::ftruncate(fd_.fd(), static_cast<off_t>(txn_file_start_)) != 0) {
    s = ErrnoStatus("truncate", path_, errno);
  } else {
    file_size_ = txn_file_start_;
    writeback_pending_ = 0;
    s = HashPrefix();
  }
  if (!s.ok()) syncer_.Fail(s);
  return s;
}

Status LogWriter::RequestSync() {
  Job job;
  job.kind = JobKind::kSync;
  job.lsn = last_lsn_;
  job.flush = position_.FlushLsn();
  job.next_seq = next_seq_;
  job.at_boundary = !in_txn();
  job.id = ++sync_requested_;
  unsynced_commits_ = 0;
  CDC_RETURN_IF_ERROR(PushBatch());
  // The partial frame of an open transaction stays here; only whole frames
  // handed over so far are written.
  return Push(std::move(job));
}

Status LogWriter::RequestWrite() {
  Job job;
  job.kind = JobKind::kWrite;
  CDC_RETURN_IF_ERROR(PushBatch());
  return Push(std::move(job));
}

Status LogWriter::Sync() {
  CDC_RETURN_IF_ERROR(RequestSync());
  return syncer_.WaitSynced(sync_requested_);
}

Status LogWriter::WaitDurable(Lsn lsn, int timeout_ms) {
  return syncer_.WaitDurable(lsn, timeout_ms);
}

}  // namespace cdc::log
