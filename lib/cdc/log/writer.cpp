#include "cdc/log/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include "cdc/log/scan.h"
#include "cdc/log/segment.h"

namespace cdc::log {

LogWriter::LogWriter(std::string dir, const WriterOptions& opts)
    : dir_(std::move(dir)), opts_(opts), codec_(opts.zstd_level) {}

LogWriter::~LogWriter() = default;

Result<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& dir,
                                                   const WriterOptions& opts) {
  std::unique_ptr<LogWriter> w(new LogWriter(dir, opts));
  CDC_ASSIGN_OR_RETURN(w->identity_, ReadIdentity(dir));
  CDC_ASSIGN_OR_RETURN(WriterLock lock, WriterLock::Acquire(dir));
  w->lock_ = std::make_unique<WriterLock>(std::move(lock));
  CDC_RETURN_IF_ERROR(w->Recover());
  return w;
}

Status LogWriter::Recover() {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir_));
  if (segs.empty()) return OpenActive(1, /*create=*/true);

  // Sealed segments never change, but a crash between sealing one and
  // syncing its record can leave the record missing: rebuild it.
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    const auto& seg = segs[i];
    if (seg.seal) {
      last_lsn_ = seg.seal->last_lsn;
      has_commit_ = has_commit_ || seg.seal->end_seq > seg.base_seq ||
                    seg.seal->last_lsn != 0;
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
    }
  }

  const SegmentInfo& active = segs.back();
  // A record for the newest segment means we crashed after sealing it but
  // before creating its successor; it is simply the active segment again.
  if (PathExists(SealRecordPath(active.path))) {
    if (::unlink(SealRecordPath(active.path).c_str()) != 0)
      return ErrnoStatus("remove", SealRecordPath(active.path), errno);
    CDC_RETURN_IF_ERROR(SyncDir(SegmentsDir(dir_)));
  }
  CDC_RETURN_IF_ERROR(OpenActive(active.base_seq, /*create=*/false));

  SegmentFile f;
  CDC_ASSIGN_OR_RETURN(f, SegmentFile::Open(path_));
  CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
  CDC_ASSIGN_OR_RETURN(SegmentScan scan,
                       ScanSegment(f, size, base_seq_, /*verify=*/true));
  if (scan.stop == FrameStatus::kBadHeader ||
      scan.stop == FrameStatus::kBadChecksum) {
    // Garbage at the very end is a write the crash tore; a damaged frame
    // with good frames after it is corruption of acknowledged data.
    CDC_ASSIGN_OR_RETURN(auto later, f.FindValidFrameAfter(scan.valid_end, size));
    if (later) {
      uint64_t last_seq = scan.next_seq;
      FrameAt next;
      CDC_ASSIGN_OR_RETURN(next, f.ReadHeader(*later, size));
      if (next.header.first_seq > 0) last_seq = next.header.first_seq - 1;
      return Status::Corruption(DescribeCorruption(
          active.name, scan.valid_end, scan.next_seq, last_seq,
          scan.stop_detail));
    }
  }
  if (scan.txn_end < size) {
    if (::ftruncate(fd_.fd(), static_cast<off_t>(scan.txn_end)) != 0)
      return ErrnoStatus("truncate", path_, errno);
    CDC_RETURN_IF_ERROR(SyncFile(fd_.fd(), path_));
    recovery_.truncated_bytes = size - scan.txn_end;
  }
  file_size_ = scan.txn_end;
  next_seq_ = scan.next_seq;
  if (scan.has_commit) {
    has_commit_ = true;
    last_lsn_ = scan.last_lsn;
    seg_has_commit_ = true;
    seg_first_lsn_ = scan.first_lsn;
    seg_last_lsn_ = scan.last_lsn;
    seg_first_time_ = scan.first_time;
    seg_last_time_ = scan.last_time;
  }
  durable_lsn_ = last_lsn_;
  // Rebuild the running SHA-256 of the kept prefix.
  std::string buf(1 << 20, '\0');
  for (uint64_t off = 0; off < file_size_;) {
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(buf.size(), file_size_ - off));
    CDC_ASSIGN_OR_RETURN(size_t n, PreadUpTo(fd_.fd(), buf.data(), want, off,
                                             path_));
    if (n != want) return Status::IOError("short read of " + path_);
    sha_.Update(std::string_view(buf.data(), n));
    off += n;
  }
  return Status::OK();
}

Status LogWriter::OpenActive(uint64_t base_seq, bool create) {
  base_seq_ = base_seq;
  path_ = JoinPath(SegmentsDir(dir_), SegmentFileName(base_seq));
  auto f = OpenFile(path_, O_RDWR | (create ? O_CREAT | O_EXCL : 0));
  if (!f.ok()) return f.status();
  fd_ = std::move(f).value();
  if (create) CDC_RETURN_IF_ERROR(SyncDir(SegmentsDir(dir_)));
  file_size_ = 0;
  sha_.Reset();
  seg_has_commit_ = false;
  seg_first_lsn_ = seg_last_lsn_ = 0;
  seg_first_time_ = seg_last_time_ = 0;
  return Status::OK();
}

Status LogWriter::Fail(Status s) {
  failed_ = s;
  return s;
}

Status LogWriter::Append(std::string_view event) {
  if (!failed_.ok()) return failed_;
  if (txn_events_ == 0) {
    txn_first_seq_ = next_seq_;
    txn_start_ = file_size_ + out_.size();
  }
  // A full frame goes out only when another event follows it, so the
  // TXN_END frame always holds the transaction's last event (its "last").
  if (frame_raw_.size() >= opts_.frame_bytes)
    CDC_RETURN_IF_ERROR(EmitFrame(/*txn_end=*/false, 0, 0, 0));
  if (frame_events_ == 0) frame_first_seq_ = next_seq_;
  frame_raw_.append(event);
  frame_raw_.push_back('\n');
  ++frame_events_;
  ++txn_events_;
  ++next_seq_;
  return Status::OK();
}

Status LogWriter::EmitFrame(bool txn_end, Lsn lsn, int64_t time, uint64_t xid) {
  FrameHeader h;
  h.flags = txn_end ? kFlagTxnEnd : 0;
  h.first_seq = frame_events_ > 0 ? frame_first_seq_ : next_seq_;
  h.event_count = frame_events_;
  h.commit_lsn = lsn;
  h.commit_time = time;
  h.xid = xid;
  codec_.EncodeFrame(h, frame_raw_, &out_);
  frame_raw_.clear();
  frame_events_ = 0;
  if (out_.size() >= opts_.write_buffer_bytes) return Flush();
  return Status::OK();
}

Status LogWriter::Commit(Lsn lsn, int64_t commit_time, uint64_t xid) {
  if (!failed_.ok()) return failed_;
  CDC_RETURN_IF_ERROR(EmitFrame(/*txn_end=*/true, lsn, commit_time, xid));
  txn_events_ = 0;
  last_lsn_ = lsn;
  has_commit_ = true;
  if (!seg_has_commit_) {
    seg_first_lsn_ = lsn;
    seg_first_time_ = commit_time;
    seg_has_commit_ = true;
  }
  seg_last_lsn_ = lsn;
  seg_last_time_ = commit_time;
  ++unsynced_commits_;
  return Status::OK();
}

Status LogWriter::Abort() {
  if (!failed_.ok()) return failed_;
  if (txn_events_ == 0) return Status::OK();
  frame_raw_.clear();
  frame_events_ = 0;
  if (txn_start_ >= file_size_) {
    out_.resize(txn_start_ - file_size_);
  } else {
    // Frames of this transaction already reached the file (it outgrew the
    // write buffer); they carry no TXN_END, so no reader has used them.
    out_.clear();
    if (::ftruncate(fd_.fd(), static_cast<off_t>(txn_start_)) != 0)
      return Fail(ErrnoStatus("truncate", path_, errno));
    file_size_ = txn_start_;
    // The running hash covered the cut bytes: rebuild it from the file.
    sha_.Reset();
    std::string buf(1 << 20, '\0');
    for (uint64_t off = 0; off < file_size_;) {
      size_t want = static_cast<size_t>(
          std::min<uint64_t>(buf.size(), file_size_ - off));
      auto n = PreadUpTo(fd_.fd(), buf.data(), want, off, path_);
      if (!n.ok()) return Fail(n.status());
      sha_.Update(std::string_view(buf.data(), *n));
      off += *n;
    }
  }
  next_seq_ = txn_first_seq_;
  txn_events_ = 0;
  return Status::OK();
}

Status LogWriter::Flush() {
  if (out_.empty()) return Status::OK();
  Status s = PwriteAll(fd_.fd(), out_.data(), out_.size(), file_size_, path_);
  if (!s.ok()) {
    // Cut whatever part of the write landed, so no reader sees a torn frame
    // after a full disk; the writer is unusable afterwards either way.
    (void)::ftruncate(fd_.fd(), static_cast<off_t>(file_size_));
    return Fail(s);
  }
  sha_.Update(out_);
  file_size_ += out_.size();
  unsynced_bytes_ += out_.size();
  out_.clear();
  return Status::OK();
}

Status LogWriter::Sync() {
  if (!failed_.ok()) return failed_;
  uint64_t pending = out_.size();
  CDC_RETURN_IF_ERROR(Flush());
  if (unsynced_bytes_ > 0 || pending > 0) {
    Status s = SyncFile(fd_.fd(), path_);
    if (!s.ok()) return Fail(s);  // never retried: the page cache may lie
  }
  durable_lsn_ = last_lsn_;
  unsynced_commits_ = 0;
  unsynced_bytes_ = 0;
  if (!in_txn() && file_size_ >= opts_.segment_bytes && next_seq_ > base_seq_)
    return Seal();
  return Status::OK();
}

Status LogWriter::Seal() {
  SealRecord rec;
  rec.sha256 = sha_.HexDigest();
  rec.bytes = file_size_;
  rec.first_seq = base_seq_;
  rec.end_seq = next_seq_;
  rec.first_lsn = seg_first_lsn_;
  rec.last_lsn = seg_last_lsn_;
  rec.first_time = seg_first_time_;
  rec.last_time = seg_last_time_;
  Status s = WriteSealRecord(path_, rec);
  if (s.ok()) s = OpenActive(next_seq_, /*create=*/true);
  if (!s.ok()) return Fail(s);
  return Status::OK();
}

}  // namespace cdc::log
