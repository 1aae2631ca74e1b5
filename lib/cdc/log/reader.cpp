#include "cdc/log/reader.h"

#include "cdc/log/log_dir.h"
#include "cdc/log/scan.h"

namespace cdc::log {

Result<std::unique_ptr<LogReader>> LogReader::Open(const std::string& dir) {
  CDC_RETURN_IF_ERROR(ReadIdentity(dir).status());
  std::unique_ptr<LogReader> r(new LogReader(dir));
  CDC_RETURN_IF_ERROR(r->SeekEarliest());
  return r;
}

Status LogReader::OpenSegment(uint64_t base_seq) {
  const std::string name = SegmentFileName(base_seq);
  auto f = SegmentFile::Open(JoinPath(SegmentsDir(dir_), name));
  if (!f.ok()) {
    if (f.status().code() == Code::kNotFound)
      return Status::Expired("events from seq " + std::to_string(base_seq) +
                             " were removed by retention while being read");
    return f.status();
  }
  file_.emplace(std::move(f).value());
  base_seq_ = base_seq;
  seg_name_ = "segments/" + name;
  offset_ = committed_ = scan_ = 0;
  scan_seq_ = next_seq_ = base_seq;
  return Status::OK();
}

Status LogReader::CorruptAt(uint64_t off, uint64_t first_seq,
                            const std::string& what) {
  uint64_t last_seq = 0;
  auto size = file_->Size();
  if (size.ok()) {
    auto later = file_->FindValidFrameAfter(off, *size);
    if (later.ok() && *later) {
      auto h = file_->ReadHeader(**later, *size);
      if (h.ok() && h->header.first_seq > 0) last_seq = h->header.first_seq - 1;
    }
  }
  if (last_seq == 0) {
    auto segs = ListSegments(dir_);
    if (segs.ok()) {
      for (const auto& s : *segs)
        if (s.base_seq > base_seq_) {
          last_seq = s.base_seq - 1;
          break;
        }
    }
  }
  return Status::Corruption(
      DescribeCorruption(seg_name_, off, first_seq, last_seq, what));
}

Status LogReader::ExtendCommitted() {
  CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
  for (;;) {
    CDC_ASSIGN_OR_RETURN(FrameAt at, file_->ReadHeader(scan_, size));
    if (at.status == FrameStatus::kEnd || at.status == FrameStatus::kTorn)
      return Status::OK();
    if (at.status == FrameStatus::kBadHeader) {
      // The newest segment may end in garbage a crashed writer left (the
      // next writer truncates it); anything valid after it is corruption.
      const bool newest =
          !PathExists(JoinPath(SegmentsDir(dir_), SegmentFileName(scan_seq_)));
      CDC_ASSIGN_OR_RETURN(auto later, file_->FindValidFrameAfter(scan_, size));
      if (newest && !later) return Status::OK();
      // Hand out what comes before the damage first; the scan stops here
      // and reports it when the reader reaches it.
      if (committed_ > offset_) return Status::OK();
      return CorruptAt(scan_, scan_seq_, at.detail);
    }
    if (at.header.first_seq != scan_seq_)
      return CorruptAt(scan_, scan_seq_,
                       "frame starts at seq " +
                           std::to_string(at.header.first_seq) + ", expected " +
                           std::to_string(scan_seq_));
    scan_ += at.header.frame_size();
    scan_seq_ = at.header.end_seq();
    if (at.header.txn_end()) committed_ = scan_;
  }
}

Result<bool> LogReader::Next(Batch* b) {
  for (;;) {
    if (offset_ < committed_) {
      CDC_ASSIGN_OR_RETURN(FrameAt at,
                           file_->ReadFrame(offset_, committed_, &payload_));
      if (at.status != FrameStatus::kOk)
        return CorruptAt(offset_, next_seq_,
                         at.detail.empty() ? "truncated frame" : at.detail);
      const FrameHeader& h = at.header;
      const uint64_t off = offset_;
      offset_ += h.frame_size();
      next_seq_ = h.end_seq();
      if (h.event_count == 0 || h.end_seq() <= skip_to_) continue;
      Status s = codec_.Decompress(h, payload_, &b->raw);
      if (!s.ok()) return CorruptAt(off, h.first_seq, s.message());
      b->header = h;
      b->skip = skip_to_ > h.first_seq
                    ? static_cast<uint32_t>(skip_to_ - h.first_seq)
                    : 0;
      return true;
    }
    CDC_RETURN_IF_ERROR(ExtendCommitted());
    if (offset_ < committed_) continue;
    // Everything committed here is read. Move on only once the next segment
    // exists, re-checking this one after seeing it (the writer finishes a
    // segment before it creates the next).
    const std::string next_path =
        JoinPath(SegmentsDir(dir_), SegmentFileName(next_seq_));
    if (next_seq_ == base_seq_ || !PathExists(next_path)) return false;
    CDC_RETURN_IF_ERROR(ExtendCommitted());
    if (offset_ < committed_) continue;
    CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    if (scan_ != size || committed_ != scan_)
      return CorruptAt(committed_, next_seq_,
                       "sealed segment ends in an incomplete transaction");
    CDC_RETURN_IF_ERROR(OpenSegment(next_seq_));
  }
}

Status LogReader::SeekEarliest() {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir_));
  if (segs.empty()) return Status::NotFound("log " + dir_ + " has no segments");
  return SeekSeq(segs.front().base_seq);
}

Status LogReader::SeekSeq(uint64_t seq) {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir_));
  if (segs.empty()) return Status::NotFound("log " + dir_ + " has no segments");
  if (seq < segs.front().base_seq)
    return Status::Expired("seq " + std::to_string(seq) +
                           " is no longer in the log (the earliest retained "
                           "event is seq " +
                           std::to_string(segs.front().base_seq) + ")");
  size_t i = segs.size() - 1;
  while (i > 0 && segs[i].base_seq > seq) --i;
  CDC_RETURN_IF_ERROR(OpenSegment(segs[i].base_seq));
  CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
  for (;;) {
    CDC_ASSIGN_OR_RETURN(FrameAt at, file_->ReadHeader(offset_, size));
    if (at.status != FrameStatus::kOk || at.header.end_seq() > seq) break;
    if (at.header.first_seq != next_seq_) break;  // Next() reports it
    offset_ += at.header.frame_size();
    next_seq_ = at.header.end_seq();
  }
  committed_ = scan_ = offset_;
  scan_seq_ = next_seq_;
  skip_to_ = seq;
  return Status::OK();
}

template <typename Key>
Status LogReader::SeekCommit(Key key_of_seal, Key key_of_header,
                             uint64_t target) {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir_));
  if (segs.empty()) return Status::NotFound("log " + dir_ + " has no segments");
  size_t i = 0;
  while (i + 1 < segs.size() && segs[i].seal &&
         key_of_seal(*segs[i].seal) < target)
    ++i;
  for (; i < segs.size(); ++i) {
    CDC_RETURN_IF_ERROR(OpenSegment(segs[i].base_seq));
    CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    uint64_t off = 0, txn_start = 0, seq = base_seq_, txn_seq = base_seq_;
    for (;;) {
      CDC_ASSIGN_OR_RETURN(FrameAt at, file_->ReadHeader(off, size));
      if (at.status != FrameStatus::kOk || at.header.first_seq != seq) break;
      off += at.header.frame_size();
      seq = at.header.end_seq();
      if (!at.header.txn_end()) continue;
      if (key_of_header(at.header) >= target) {
        offset_ = committed_ = scan_ = txn_start;
        next_seq_ = scan_seq_ = skip_to_ = txn_seq;
        return Status::OK();
      }
      txn_start = off;
      txn_seq = seq;
    }
    if (i + 1 == segs.size()) {
      // Nothing that late yet: wait at the end of what is committed.
      offset_ = committed_ = scan_ = txn_start;
      next_seq_ = scan_seq_ = skip_to_ = txn_seq;
    }
  }
  return Status::OK();
}

Status LogReader::SeekLsn(Lsn lsn) {
  struct K {
    uint64_t operator()(const SealRecord& r) const { return r.last_lsn; }
    uint64_t operator()(const FrameHeader& h) const { return h.commit_lsn; }
  };
  return SeekCommit(K{}, K{}, lsn);
}

Status LogReader::SeekTime(int64_t unix_micros) {
  // Times are compared as offsets from a floor so they fit the same
  // unsigned key as LSNs; commit times before 1970 do not occur.
  struct K {
    uint64_t operator()(const SealRecord& r) const {
      return static_cast<uint64_t>(std::max<int64_t>(r.last_time, 0));
    }
    uint64_t operator()(const FrameHeader& h) const {
      return static_cast<uint64_t>(std::max<int64_t>(h.commit_time, 0));
    }
  };
  return SeekCommit(K{}, K{},
                    static_cast<uint64_t>(std::max<int64_t>(unix_micros, 0)));
}

Status LogReader::SeekEnd() {
  struct K {
    uint64_t operator()(const SealRecord&) const { return 0; }
    uint64_t operator()(const FrameHeader&) const { return 0; }
  };
  return SeekCommit(K{}, K{}, UINT64_MAX);
}

namespace {

// The last TXN_END frame of a segment, and the last one with events.
struct SegmentEnds {
  bool has_end = false, has_txn = false;
  FrameHeader end, txn;
  uint64_t next_seq = 0;
};

Result<SegmentEnds> ScanEnds(const SegmentFile& f, uint64_t size,
                             uint64_t base_seq) {
  SegmentEnds e;
  CDC_ASSIGN_OR_RETURN(
      SegmentScan scan,
      ScanSegment(f, size, base_seq, /*verify=*/false,
                  [&](uint64_t, const FrameHeader& h, std::string_view) {
                    if (h.txn_end() && h.event_count > 0) {
                      e.txn = h;
                      e.has_txn = true;
                    }
                    return Status::OK();
                  }));
  e.has_end = scan.has_commit;
  e.end = scan.last_end;
  e.next_seq = scan.next_seq;
  return e;
}

}  // namespace

Result<LogSummary> Summarize(const std::string& dir) {
  CDC_RETURN_IF_ERROR(ReadIdentity(dir).status());
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir));
  LogSummary sum;
  sum.segments = segs.size();
  if (segs.empty()) return sum;
  sum.first_seq = segs.front().base_seq;
  for (const auto& seg : segs) {
    CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
    CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
    sum.bytes += size;
    if (seg.seal) sum.next_seq = seg.seal->end_seq;
  }
  // Seal records give the last commit LSN of a segment, which may be a
  // position frame's: the last transaction and the kind of the position
  // come from frame headers, read from the newest segment back only as far
  // as needed (one segment, unless the newest holds no transaction yet).
  for (size_t i = segs.size(); i-- > 0;) {
    const SegmentInfo& seg = segs[i];
    const bool newest = i + 1 == segs.size();
    // A sealed segment without events holds no transaction; one whose seal
    // shows no commit holds no position either.
    if (!newest && seg.seal && seg.seal->end_seq == seg.base_seq &&
        (sum.position.valid || seg.seal->last_lsn == 0))
      continue;
    CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
    CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
    CDC_ASSIGN_OR_RETURN(SegmentEnds e, ScanEnds(f, size, seg.base_seq));
    if (newest && !seg.seal) sum.next_seq = e.next_seq;
    if (!sum.position.valid && e.has_end) {
      sum.position = SourcePosition::Of(e.end);
      sum.position_time = e.end.commit_time;
    }
    if (e.has_txn) {
      sum.has_commit = true;
      sum.last_lsn = e.txn.commit_lsn;
      sum.last_time = e.txn.commit_time;
      break;
    }
  }
  return sum;
}

}  // namespace cdc::log
