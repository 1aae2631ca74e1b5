// LogWriter's worker pool and the segment it writes: jobs are compressed
// in parallel, then applied to the active segment strictly in queue order
// by the holder of the ticket; sync jobs hand their fdatasync to syncer_.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "cdc/log/writer.h"

namespace cdc::log {

Status LogWriter::Push(Job job) {
  std::unique_lock<std::mutex> lk(mu_);
  if (job.kind == JobKind::kFrames) {
    cv_space_.wait(lk, [&] {
      return queued_bytes_ == 0 ||
             queued_bytes_ + job.raw_bytes <= opts_.queue_bytes ||
             !syncer_.failure().ok();
    });
    queued_bytes_ += job.raw_bytes;
  }
  if (!syncer_.failure().ok()) return syncer_.failure();
  job.ticket = next_ticket_++;
  queue_.push_back(std::move(job));
  lk.unlock();
  cv_work_.notify_one();
  return Status::OK();
}

void LogWriter::WaitIdle() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_space_.wait(lk, [&] { return queue_.empty() && in_flight_ == 0; });
}

void LogWriter::Work() {
  Codec codec(opts_.zstd_level);
  std::string encoded;  // the last job's output buffer, used again
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_work_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stop_ with nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++in_flight_;
    bool failed = !syncer_.failure().ok();
    lk.unlock();
    // Compression, the expensive part, runs in parallel across workers.
    if (job.kind == JobKind::kFrames && !failed) {
      size_t bound = 0;
      for (const Frame& f : job.frames)
        bound += Codec::EncodedBound(f.raw.size(), f.table.size());
      job.encoded = std::move(encoded);
      job.encoded.clear();
      job.encoded.reserve(bound);
      for (Frame& f : job.frames) {
        f.encoded_at = job.encoded.size();
        codec.EncodeFrame(f.header, f.table, f.raw, &job.encoded);
      }
    }
    lk.lock();
    cv_turn_.wait(lk, [&] { return turn_ == job.ticket; });
    failed = !syncer_.failure().ok();
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
    // Buffers of a usual size go round again; a huge one is let go.
    constexpr size_t kKeepBytes = 1u << 20;
    constexpr size_t kSpares = 8;
    if (job.encoded.capacity() <= kKeepBytes) encoded = std::move(job.encoded);
    for (Frame& f : job.frames)
      if (spare_raw_.size() < kSpares && f.raw.capacity() <= kKeepBytes &&
          f.raw.capacity() >= 4096)
        spare_raw_.push_back(std::move(f.raw));
    --in_flight_;
    if (!s.ok()) syncer_.Fail(s);
    if (job.kind != JobKind::kSync) {
      queued_bytes_ -= job.raw_bytes;
    } else {
      // Handed over under the same hold of mu_ that passed the ticket on,
      // so a later seal sees it as running or pending, and the segment
      // named here is still the one the request wrote.
      Syncer::Request req{sync_fd, {}, job.lsn, job.flush, job.id, {}};
      if (sync_fd >= 0) {
        req.path = path_;
        req.mark = DurableMark{base_seq_, commit_end_};
      }
      syncer_.Submit(std::move(req), s, lk);
    }
    cv_turn_.notify_all();
    cv_space_.notify_all();
  }
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
  writeback_pending_ = 0;
  sha_.Reset();
  seg_has_commit_ = false;
  seg_first_lsn_ = seg_last_lsn_ = 0;
  seg_first_time_ = seg_last_time_ = 0;
  return Status::OK();
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

namespace {
constexpr uint64_t kWritebackBytes = 8u << 20;
}  // namespace

Status LogWriter::WriteOut(std::string_view bytes) {
  Status s = PwriteAll(fd_.fd(), bytes.data(), bytes.size(), file_size_, path_);
  if (!s.ok()) {
    // Cut whatever part of the write landed, so no reader sees a torn frame
    // after a full disk; the writer is unusable afterwards either way.
    (void)!::ftruncate(fd_.fd(), static_cast<off_t>(file_size_));
    return s;
  }
  sha_.Update(bytes);
  syncer_.AddWritten(bytes.size());
  file_size_ += bytes.size();
  unsynced_bytes_ += bytes.size();
  writeback_pending_ += bytes.size();
  if (writeback_pending_ >= kWritebackBytes) {
    // A large transaction (an initial snapshot: 90 MB for 4M rows) is
    // written long before its commit's fdatasync; the disk starts on it
    // now, so that the fdatasync finds less left to write (at the end of
    // bench/snapshot's copy, with cores idle: 61 ms against 75 on a VM's
    // disk, where the host's flush is most of it). Only starts writeback:
    // durability is still the fdatasync's. Without the WAIT flags the call
    // does not consume a writeback error (the file's errseq): the
    // fdatasync still reports it. Best effort.
    (void)::sync_file_range(
        fd_.fd(), static_cast<off_t>(file_size_ - writeback_pending_),
        static_cast<off_t>(writeback_pending_), SYNC_FILE_RANGE_WRITE);
    writeback_pending_ = 0;
  }
  return Status::OK();
}

Status LogWriter::DoSync(const Job& job, int* sync_fd) {
  CDC_RETURN_IF_ERROR(Flush());
  const bool seal = job.at_boundary && file_size_ >= opts_.segment_bytes &&
                    job.next_seq > base_seq_;
  // With an earlier sync still running outside the ticket, nothing here is
  // durable until it is: sync again (which waits for that writeback).
  if (unsynced_bytes_ > 0 || syncer_.busy()) {
    if (seal) {
      // Sealing needs this segment durable now: wait for the sync in
      // flight (and those queued behind it), then run ours in its place.
      CDC_RETURN_IF_ERROR(syncer_.SyncNow(fd_.fd(), path_));
    } else {
      // The fsync itself runs after the ticket is passed on, so later
      // frames reach the file (and followers) while it waits on the disk.
      // A duplicate descriptor stays valid if the segment is sealed
      // meanwhile.
      *sync_fd = ::dup(fd_.fd());
      if (*sync_fd < 0) return ErrnoStatus("dup", path_, errno);
      syncer_.Reserve();
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
