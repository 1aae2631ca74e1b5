#include "cdc/log/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "cdc/base/time.h"
#include "cdc/log/scan.h"
#include "cdc/log/segment.h"

namespace cdc::log {

LogWriter::LogWriter(std::string dir, const WriterOptions& opts)
    : dir_(std::move(dir)), opts_(opts) {}

LogWriter::~LogWriter() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : workers_) t.join();
  // What the last sync made durable is protected from now on too.
  if (failed_.ok()) MaybeWriteMark(/*force=*/true);
}

void LogWriter::MaybeWriteMark(bool force) {
  DurableMark m;
  {
    std::lock_guard<std::mutex> lk(mu_);
    m = mark_synced_;
  }
  if (m.segment == 0 ||
      (m.segment == mark_written_.segment && m.bytes == mark_written_.bytes))
    return;
  const int64_t now = MonoMicros();
  if (!force && mark_written_at_ != 0 &&
      now - mark_written_at_ < int64_t{opts_.durable_mark_ms} * 1000)
    return;
  // A failure here loses no data, only protection: the old mark stays.
  if (WriteDurableMark(dir_, m).ok()) {
    mark_written_ = m;
    mark_written_at_ = now;
  }
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
  w->durable_lsn_ = w->last_lsn_;
  w->durable_flush_ = w->position_.FlushLsn();
  for (int i = 0; i < std::max(1, opts.compress_threads); ++i)
    w->workers_.emplace_back([p = w.get()] { p->Work(); });
  return w;
}

Status LogWriter::Recover() {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir_));
  if (segs.empty()) return OpenActive(1, /*create=*/true);

  // Appending after damage would put events where no reader can reach
  // them: the sealed segments must at least agree with their records and
  // follow each other without a gap (their frames are verify's job; reading
  // them all here would make every start cost a pass over the whole log).
  // A record that is missing (a crash between sealing a segment and
  // syncing its record) is rebuilt; one that is unreadable is corruption.
  const SegmentInfo* last_sealed = nullptr;  // the newest with a commit
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    const auto& seg = segs[i];
    if (seg.seal || !seg.seal_error.empty()) {
      auto size = FileSize(seg.path);
      // Removed since the listing: `cdc-log retain` running beside us.
      if (size.status().code() == Code::kNotFound) continue;
      CDC_RETURN_IF_ERROR(size.status());
      CDC_RETURN_IF_ERROR(CheckSealedSegment(seg, *size, segs[i + 1].base_seq));
      if (seg.seal->last_lsn != 0 || seg.seal->end_seq > seg.base_seq) {
        last_lsn_ = seg.seal->last_lsn;
        has_commit_ = true;
        last_sealed = &seg;
      }
      continue;
    }
    CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
    CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
    CDC_ASSIGN_OR_RETURN(SegmentScan scan,
                         ScanSegment(f, size, seg.base_seq, /*verify=*/true));
    if (scan.txn_end != size || scan.next_seq != segs[i + 1].base_seq)
      return Status::Corruption(DescribeCorruption(
          seg.name, scan.valid_end, scan.next_seq, segs[i + 1].base_seq - 1,
          "sealed segment does not end with a complete transaction"));
    SealRecord rec;
    CDC_ASSIGN_OR_RETURN(rec.sha256, Sha256File(seg.path));
    rec.bytes = size;
    rec.first_seq = seg.base_seq;
    rec.end_seq = scan.next_seq;
    rec.first_lsn = scan.first_lsn;
    rec.last_lsn = scan.last_lsn;
    rec.first_time = scan.first_time;
    rec.last_time = scan.last_time;
    CDC_RETURN_IF_ERROR(WriteSealRecord(seg.path, rec));
    ++recovery_.resealed;
    if (scan.has_commit) {
      last_lsn_ = scan.last_lsn;
      has_commit_ = true;
      position_ = SourcePosition::Of(scan.last_end);
      last_sealed = nullptr;  // position_ is known
    }
  }

  const SegmentInfo& active = segs.back();
  // A record for the newest segment means we crashed after sealing it but
  // before creating its successor; it is simply the active segment again.
  const std::string stale = SealRecordPath(active.path);
  if (PathExists(stale)) {
    if (::unlink(stale.c_str()) != 0)
      return ErrnoStatus("remove", stale, errno);
    CDC_RETURN_IF_ERROR(SyncDir(SegmentsDir(dir_)));
  }
  CDC_RETURN_IF_ERROR(OpenActive(active.base_seq, /*create=*/false));

  CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(path_));
  CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
  CDC_ASSIGN_OR_RETURN(SegmentScan scan,
                       ScanSegment(f, size, base_seq_, /*verify=*/true));
  // Bytes below the durable mark were fsynced: no crash tore them, and
  // their transactions may have been acknowledged. Never cut them.
  CDC_ASSIGN_OR_RETURN(auto mark, ReadDurableMark(dir_));
  if ((scan.stop == FrameStatus::kBadHeader ||
       scan.stop == FrameStatus::kBadChecksum) &&
      !BeyondDurable(mark, active.base_seq, scan.valid_end)) {
    // Garbage at the very end is a write the crash tore; a damaged frame
    // with good frames after it is corruption of acknowledged data.
    CDC_ASSIGN_OR_RETURN(auto later,
                         f.FindValidFrameAfter(scan.valid_end, size));
    if (later) {
      uint64_t last_seq = scan.next_seq;
      CDC_ASSIGN_OR_RETURN(FrameAt next, f.ReadHeader(*later, size));
      if (next.header.first_seq > 0) last_seq = next.header.first_seq - 1;
      return Status::Corruption(DescribeCorruption(active.name, scan.valid_end,
                                                   scan.next_seq, last_seq,
                                                   scan.stop_detail));
    }
  }
  if (mark && mark->segment > active.base_seq)
    return Status::Corruption(
        "the durable mark names " + SegmentDisplayName(mark->segment) +
        ", which is missing (the newest segment is " + active.name + ")");
  if (mark && mark->segment == active.base_seq && scan.txn_end < mark->bytes)
    return Status::Corruption(DescribeCorruption(
        active.name, scan.txn_end, scan.next_seq, 0,
        (scan.stop == FrameStatus::kEnd    ? std::string("segment ends")
         : scan.stop == FrameStatus::kTorn ? std::string("truncated frame")
                                           : scan.stop_detail) +
            " below the " + std::to_string(mark->bytes) +
            " bytes known durable (refusing to cut acknowledged data)"));
  if (mark) mark_written_ = mark_synced_ = *mark;
  if (scan.txn_end < size) {
    if (::ftruncate(fd_.fd(), static_cast<off_t>(scan.txn_end)) != 0)
      return ErrnoStatus("truncate", path_, errno);
    CDC_RETURN_IF_ERROR(SyncFile(fd_.fd(), path_));
    recovery_.truncated_bytes = size - scan.txn_end;
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
  } else if (last_sealed != nullptr) {
    // Seal records keep the last commit LSN but not whether it was a lone
    // message's (an exclusive position): read that segment's headers.
    CDC_ASSIGN_OR_RETURN(SegmentFile sf, SegmentFile::Open(last_sealed->path));
    CDC_ASSIGN_OR_RETURN(uint64_t ssize, sf.Size());
    CDC_ASSIGN_OR_RETURN(SegmentScan ss,
                         ScanSegment(sf, ssize, last_sealed->base_seq,
                                     /*verify=*/false));
    if (!ss.has_commit || ss.last_lsn != last_lsn_)
      return Status::Corruption(DescribeCorruption(
          last_sealed->name, ss.txn_end, ss.next_seq, ss.next_seq,
          "sealed segment's frames disagree with its seal record"));
    position_ = SourcePosition::Of(ss.last_end);
  }
  if (has_commit_ && !position_.valid)
    position_ = SourcePosition{true, last_lsn_, false};
  CDC_RETURN_IF_ERROR(TrimSchemas());
  return HashPrefix();
}

Status LogWriter::TrimSchemas() {
  uint64_t valid = 0;
  CDC_ASSIGN_OR_RETURN(std::vector<SchemaEntry> entries,
                       ReadSchemas(dir_, &valid));
  const std::string path = SchemasPath(dir_);
  auto size = FileSize(path);
  if (size.status().code() == Code::kNotFound) return Status::OK();
  CDC_RETURN_IF_ERROR(size.status());
  // Lines of events that never became durable (or were aborted) come last.
  uint64_t keep = valid;
  for (size_t i = entries.size(); i > 0 && entries[i - 1].seq >= next_seq_; --i)
    keep -= SchemaLine(entries[i - 1].seq, entries[i - 1].stored).size();
  CDC_ASSIGN_OR_RETURN(schemas_fd_, OpenFile(path, O_RDWR));
  schemas_size_ = *size;
  return TruncateSchemas(keep);
}

Status LogWriter::TruncateSchemas(uint64_t size) {
  if (size >= schemas_size_) return Status::OK();
  const std::string path = SchemasPath(dir_);
  if (::ftruncate(schemas_fd_.fd(), static_cast<off_t>(size)) != 0)
    return ErrnoStatus("truncate", path, errno);
  CDC_RETURN_IF_ERROR(SyncFile(schemas_fd_.fd(), path));
  schemas_size_ = size;
  return Status::OK();
}

Status LogWriter::AppendSchema(std::string_view event) {
  if (has_failed_.load(std::memory_order_relaxed)) return Failed();
  const std::string path = SchemasPath(dir_);
  if (!schemas_fd_.valid()) {
    CDC_ASSIGN_OR_RETURN(
        schemas_fd_, OpenFile(path, O_RDWR | O_CREAT | O_EXCL, NewFileMode()));
    CDC_RETURN_IF_ERROR(SyncDir(dir_));
    schemas_size_ = 0;
  }
  if (txn_schemas_start_ == UINT64_MAX) txn_schemas_start_ = schemas_size_;
  const std::string line = SchemaLine(next_seq_, event);
  Status s = PwriteAll(schemas_fd_.fd(), line.data(), line.size(),
                       schemas_size_, path);
  if (s.ok()) s = SyncFile(schemas_fd_.fd(), path);
  if (!s.ok()) {
    // The writer cannot go on (a failed fsync is never retried); what a
    // reopen finds beyond the log's end is cut then.
    std::lock_guard<std::mutex> lk(mu_);
    if (failed_.ok()) failed_ = s;
    has_failed_ = true;
    return s;
  }
  schemas_size_ += line.size();
  return Append(event);
}

// Rebuilds the running SHA-256 of the active segment's first file_size_
// bytes (after recovery, or after an abort cut bytes it had hashed).
Status LogWriter::HashPrefix() {
  sha_.Reset();
  std::string buf(1 << 20, '\0');
  for (uint64_t off = 0; off < file_size_;) {
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(buf.size(), file_size_ - off));
    CDC_ASSIGN_OR_RETURN(size_t n,
                         PreadUpTo(fd_.fd(), buf.data(), want, off, path_));
    if (n != want) return Status::IOError("short read of " + path_);
    sha_.Update(std::string_view(buf.data(), n));
    off += n;
  }
  return Status::OK();
}

Status LogWriter::OpenActive(uint64_t base_seq, bool create) {
  base_seq_ = base_seq;
  // A long-running writer creates segments long after it opened the log:
  // the directory is looked at again each time.
  CDC_ASSIGN_OR_RETURN(const std::string segments,
                       LogSubdir(dir_, kSegmentsDir));
  path_ = JoinPath(segments, SegmentFileName(base_seq));
  auto f = OpenFile(path_, O_RDWR | (create ? O_CREAT | O_EXCL : 0));
  if (!f.ok()) return f.status();
  fd_ = std::move(f).value();
  if (create) CDC_RETURN_IF_ERROR(SyncDir(segments));
  file_size_ = commit_end_ = 0;
  sha_.Reset();
  seg_has_commit_ = false;
  seg_first_lsn_ = seg_last_lsn_ = 0;
  seg_first_time_ = seg_last_time_ = 0;
  return Status::OK();
}

Status LogWriter::Failed() {
  std::lock_guard<std::mutex> lk(mu_);
  return failed_;
}

Status LogWriter::StartEvent() {
  if (has_failed_.load(std::memory_order_relaxed)) return Failed();
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
  if (has_failed_.load(std::memory_order_relaxed)) return Failed();
  CDC_RETURN_IF_ERROR(FlushGroup());
  if (frame_events_ > 0)
    CDC_RETURN_IF_ERROR(EmitFrame(/*txn_end=*/false, 0, 0, 0));
  CDC_RETURN_IF_ERROR(StartEvent());
  frame_raw_.swap(*event);
  frame_raw_.push_back('\n');
  return Status::OK();
}

Status LogWriter::EventFollows() {
  if (frame_raw_.size() < kLargeFrameBytes) return Status::OK();
  if (has_failed_.load(std::memory_order_relaxed)) return Failed();
  CDC_RETURN_IF_ERROR(FlushGroup());
  if (frame_events_ > 0)
    CDC_RETURN_IF_ERROR(EmitFrame(/*txn_end=*/false, 0, 0, 0));
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
  frame_raw_.clear();
  // The next frame is likely the size of this one: one allocation, not a
  // string of doublings that copy it.
  frame_raw_.reserve(std::min(f.raw.size() + f.raw.size() / 4 + 64,
                              opts_.frame_bytes + (64u << 10)));
  frame_events_ = 0;
  ++txn_frames_;
  batch_.raw_bytes += f.raw.size();
  batch_.frames.push_back(std::move(f));
  if (batch_.raw_bytes >= opts_.batch_bytes) return PushBatch();
  return Status::OK();
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
    frame_raw_.clear();
    frame_raw_.reserve(std::min(f.raw.size() + f.raw.size() / 4 + 64,
                                opts_.frame_bytes + (64u << 10)));
  } else {
    f.raw.assign(frame_raw_, 0, group_bytes_);
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

Status LogWriter::Push(Job job) {
  std::unique_lock<std::mutex> lk(mu_);
  if (job.kind == JobKind::kFrames) {
    cv_space_.wait(lk, [&] {
      return queued_bytes_ == 0 ||
             queued_bytes_ + job.raw_bytes <= opts_.queue_bytes ||
             !failed_.ok();
    });
    queued_bytes_ += job.raw_bytes;
  }
  if (!failed_.ok()) return failed_;
  job.ticket = next_ticket_++;
  queue_.push_back(std::move(job));
  lk.unlock();
  cv_work_.notify_one();
  return Status::OK();
}

Status LogWriter::Commit(Lsn lsn, int64_t commit_time, uint64_t xid) {
  if (has_failed_.load(std::memory_order_relaxed)) return Failed();
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

void LogWriter::WaitIdle() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_space_.wait(lk, [&] { return queue_.empty() && in_flight_ == 0; });
}

Status LogWriter::Abort() {
  if (has_failed_.load()) return Failed();
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
  if (!failed_.ok()) return failed_;
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
    s = HashPrefix();
  }
  if (!s.ok()) {
    failed_ = s;
    has_failed_ = true;
  }
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
  std::unique_lock<std::mutex> lk(mu_);
  cv_synced_.wait(
      lk, [&] { return sync_done_ >= sync_requested_ || !failed_.ok(); });
  return failed_;
}

Status LogWriter::WaitDurable(Lsn lsn, int timeout_ms) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_synced_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] {
    return durable_lsn_.load() >= lsn || !failed_.ok();
  });
  return failed_;
}

void LogWriter::Work() {
  Codec codec(opts_.zstd_level);
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_work_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stop_ with nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++in_flight_;
    bool failed = !failed_.ok();
    lk.unlock();
    // Compression, the expensive part, runs in parallel across workers.
    if (job.kind == JobKind::kFrames && !failed) {
      size_t bound = 0;
      for (const Frame& f : job.frames)
        bound += Codec::EncodedBound(f.raw.size(), f.table.size());
      job.encoded.reserve(bound);
      for (Frame& f : job.frames) {
        f.encoded_at = job.encoded.size();
        codec.EncodeFrame(f.header, f.table, f.raw, &job.encoded);
      }
    }
    lk.lock();
    cv_turn_.wait(lk, [&] { return turn_ == job.ticket; });
    failed = !failed_.ok();
    lk.unlock();
    // Only the ticket holder runs here: the file and buffer are its alone.
    int sync_fd = -1;
    Status s;
    if (!failed) {
      switch (job.kind) {
        case JobKind::kFrames:
          s = Place(job);
          break;
        case JobKind::kWrite:
          s = Flush();
          break;
        case JobKind::kSync:
          s = DoSync(job, &sync_fd);
          break;
      }
    }
    lk.lock();
    ++turn_;
    cv_turn_.notify_all();
    --in_flight_;
    if (!s.ok() && failed_.ok()) {
      failed_ = s;
      has_failed_ = true;
    }
    if (job.kind != JobKind::kSync) {
      queued_bytes_ -= job.raw_bytes;
    } else if (sync_fd < 0) {
      CompleteSync(SyncRequest{-1, job.lsn, job.flush, job.id, {}}, s);
    } else {
      // Registered under the same hold of mu_ that passed the ticket on, so
      // a later seal sees it as running or pending.
      SyncRequest req{sync_fd, job.lsn, job.flush, job.id,
                      DurableMark{base_seq_, commit_end_}};
      if (!s.ok()) {
        ::close(req.fd);
        syncs_running_.fetch_sub(1);
        CompleteSync(req, s);
      } else if (sync_running_) {
        if (pending_sync_) {
          // The newer request's fdatasync covers the older one's bytes.
          ::close(pending_sync_->fd);
          syncs_running_.fetch_sub(1);
          req.lsn = std::max(req.lsn, pending_sync_->lsn);
          req.flush = std::max(req.flush, pending_sync_->flush);
          req.id = std::max(req.id, pending_sync_->id);
          // req is the newer: its mark is the later one.
        }
        pending_sync_ = req;
      } else {
        sync_running_ = true;
        RunSyncs(req, lk);
      }
    }
    cv_turn_.notify_all();
    cv_space_.notify_all();
  }
}

void LogWriter::RunSyncs(SyncRequest req, std::unique_lock<std::mutex>& lk) {
  for (;;) {
    lk.unlock();
    Status s = TimedSync(req.fd);
    ::close(req.fd);
    lk.lock();
    syncs_running_.fetch_sub(1);
    CompleteSync(req, s);
    if (s.ok() && failed_.ok()) {
      mark_synced_ = req.mark;
      lk.unlock();
      MaybeWriteMark(/*force=*/false);
      lk.lock();
    }
    if (!pending_sync_) break;
    req = *pending_sync_;
    pending_sync_.reset();
  }
  sync_running_ = false;
  cv_sync_idle_.notify_all();
}

void LogWriter::CompleteSync(const SyncRequest& req, const Status& s) {
  if (!s.ok() && failed_.ok()) {
    failed_ = s;
    has_failed_ = true;
  }
  // Syncs run one at a time and a failure is final (sync_error_), so a
  // successful one covers every byte written before it was requested.
  if (failed_.ok() && req.lsn > durable_lsn_.load()) durable_lsn_ = req.lsn;
  if (failed_.ok() && req.flush > durable_flush_.load())
    durable_flush_ = req.flush;
  sync_done_ = std::max(sync_done_.load(), req.id);
  cv_synced_.notify_all();
}

Status LogWriter::Place(const Job& job) {
  const uint64_t base = file_size_ + out_.size();
  for (size_t i = 0; i < job.frames.size(); ++i) {
    const Frame& f = job.frames[i];
    if (f.first_of_txn) txn_file_start_ = base + f.encoded_at;
    if (!f.header.txn_end()) continue;
    commit_end_ =
        base + (i + 1 < job.frames.size() ? job.frames[i + 1].encoded_at
                                          : job.encoded.size());
    if (!seg_has_commit_) {
      seg_first_lsn_ = f.first_lsn;
      seg_first_time_ = f.first_time;
      seg_has_commit_ = true;
    }
    seg_last_lsn_ = f.header.commit_lsn;
    seg_last_time_ = f.header.commit_time;
  }
  if (job.encoded.size() >= opts_.write_buffer_bytes) {
    // A large frame is written from where it was compressed, not copied
    // into the buffer (which would then keep its size).
    CDC_RETURN_IF_ERROR(Flush());
    return WriteOut(job.encoded);
  }
  out_.append(job.encoded);
  if (out_.size() >= opts_.write_buffer_bytes) return Flush();
  return Status::OK();
}

Status LogWriter::Flush() {
  if (out_.empty()) return Status::OK();
  CDC_RETURN_IF_ERROR(WriteOut(out_));
  out_.clear();
  return Status::OK();
}

Status LogWriter::WriteOut(std::string_view bytes) {
  Status s = PwriteAll(fd_.fd(), bytes.data(), bytes.size(), file_size_, path_);
  if (!s.ok()) {
    // Cut whatever part of the write landed, so no reader sees a torn frame
    // after a full disk; the writer is unusable afterwards either way.
    (void)!::ftruncate(fd_.fd(), static_cast<off_t>(file_size_));
    return s;
  }
  sha_.Update(bytes);
  stats_.bytes_written.fetch_add(bytes.size(), std::memory_order_relaxed);
  file_size_ += bytes.size();
  unsynced_bytes_ += bytes.size();
  return Status::OK();
}

Status LogWriter::TimedSync(int fd) {
  // Never retried: after a failed fsync the page cache may have dropped
  // the dirty pages, so a later success would prove nothing. Only one
  // thread runs here at a time (sync_running_).
  if (!sync_error_.ok()) return sync_error_;
  const int64_t t0 = MonoMicros();
  Status synced =
      opts_.sync_file ? opts_.sync_file(fd, path_) : SyncFile(fd, path_);
  if (!synced.ok()) {
    sync_error_ = synced;
    return synced;
  }
  const int64_t us = MonoMicros() - t0;
  int b = 0;
  while (b < SyncStats::kBuckets - 1 && us > SyncStats::kBoundsUs[b]) ++b;
  stats_.buckets[b].fetch_add(1, std::memory_order_relaxed);
  stats_.count.fetch_add(1, std::memory_order_relaxed);
  stats_.total_us.fetch_add(static_cast<uint64_t>(us),
                            std::memory_order_relaxed);
  return Status::OK();
}

Status LogWriter::DoSync(const Job& job, int* sync_fd) {
  CDC_RETURN_IF_ERROR(Flush());
  const bool seal = job.at_boundary && file_size_ >= opts_.segment_bytes &&
                    job.next_seq > base_seq_;
  // With an earlier sync still running outside the ticket, nothing here is
  // durable until it is: sync again (which waits for that writeback).
  if (unsynced_bytes_ > 0 || syncs_running_.load() > 0) {
    if (seal) {
      // Sealing needs this segment durable now: wait for the sync in
      // flight (and those queued behind it), then run ours in its place.
      std::unique_lock<std::mutex> lk(mu_);
      cv_sync_idle_.wait(lk, [&] { return !sync_running_; });
      sync_running_ = true;
      lk.unlock();
      Status synced = TimedSync(fd_.fd());
      lk.lock();
      sync_running_ = false;
      cv_sync_idle_.notify_all();
      CDC_RETURN_IF_ERROR(synced);
    } else {
      // The fsync itself runs after the ticket is passed on, so later
      // frames reach the file (and followers) while it waits on the disk.
      // A duplicate descriptor stays valid if the segment is sealed
      // meanwhile.
      *sync_fd = ::dup(fd_.fd());
      if (*sync_fd < 0) return ErrnoStatus("dup", path_, errno);
      syncs_running_.fetch_add(1);
    }
    unsynced_bytes_ = 0;
  }
  if (seal) return Seal(job.next_seq);
  return Status::OK();
}

Status LogWriter::Seal(uint64_t next_seq) {
  SealRecord rec;
  rec.sha256 = sha_.HexDigest();
  rec.bytes = file_size_;
  rec.first_seq = base_seq_;
  rec.end_seq = next_seq;
  rec.first_lsn = seg_first_lsn_;
  rec.last_lsn = seg_last_lsn_;
  rec.first_time = seg_first_time_;
  rec.last_time = seg_last_time_;
  // The seal record is written by path, beside the segment.
  CDC_RETURN_IF_ERROR(LogSubdir(dir_, kSegmentsDir).status());
  CDC_RETURN_IF_ERROR(WriteSealRecord(path_, rec));
  return OpenActive(next_seq, /*create=*/true);
}

}  // namespace cdc::log
