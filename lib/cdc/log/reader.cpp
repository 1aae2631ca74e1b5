#include "cdc/log/reader.h"

#include <sys/stat.h>

#include <algorithm>

#include "cdc/base/time.h"
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
  CDC_ASSIGN_OR_RETURN(SegmentFile f,
                       SegmentFile::Open(JoinPath(SegmentsDir(dir_), name)));
  file_.emplace(std::move(f));
  base_seq_ = base_seq;
  seg_name_ = "segments/" + name;
  offset_ = committed_ = scan_ = 0;
  scan_seq_ = next_seq_ = committed_seq_ = base_seq;
  ahead_len_ = 0;
  group_.clear();
  group_next_ = 0;
  stop_ = FrameStatus::kEnd;
  stop_detail_.clear();
  stop_fatal_ = false;
  return Status::OK();
}

Status LogReader::OpenListedSegment(uint64_t base_seq) {
  Status s = OpenSegment(base_seq);
  if (s.code() != Code::kNotFound) return s;
  bases_valid_ = false;
  CDC_ASSIGN_OR_RETURN(const std::vector<uint64_t>* bases, SegmentBases());
  if (!bases->empty() && bases->front() > base_seq)
    return Status::Expired("events from seq " + std::to_string(base_seq) +
                           " were removed by retention while being read (the "
                           "earliest retained event is now seq " +
                           std::to_string(bases->front()) + ")");
  return Status::Corruption(SegmentDisplayName(base_seq) +
                            " disappeared while later segments remain");
}

Result<const std::vector<uint64_t>*> LogReader::SegmentBases() {
  const std::string dir = SegmentsDir(dir_);
  // lstat: a link planted since the last listing changes the stamp, and
  // the listing then refuses it.
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoStatus("stat", dir, errno);
  const int64_t mtime =
      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  // The directory's mtime changes whenever a segment or seal record is
  // created or removed, so an unchanged mtime means an unchanged listing:
  // followers re-check the end of the log on every wake-up for the price of
  // a stat. The kernel stamps mtimes from a coarse clock, though, so a
  // change made in the same tick as our listing could keep the old stamp;
  // trust the cache only for a directory last changed well before it.
  constexpr int64_t kTickMarginNs = 100000000;
  if (bases_valid_ && mtime == dir_mtime_ns_ &&
      listed_at_ns_ - mtime > kTickMarginNs)
    return &bases_;
  const int64_t now = NowMicros() * 1000;
  CDC_ASSIGN_OR_RETURN(auto files, ListSegmentFiles(dir_));
  bases_.clear();
  for (const auto& f : files) bases_.push_back(f.base_seq);
  bases_valid_ = true;
  dir_mtime_ns_ = mtime;
  listed_at_ns_ = now;
  return &bases_;
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
    auto segs = ListSegmentFiles(dir_);
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

Result<std::string_view> LogReader::Ahead(uint64_t off, uint64_t n,
                                          uint64_t size) {
  if (off >= size) return std::string_view();
  n = std::min(n, size - off);
  if (off >= ahead_off_ && off + n <= ahead_off_ + ahead_len_)
    return std::string_view(ahead_).substr(off - ahead_off_, n);
  const uint64_t want = std::max(n, std::min<uint64_t>(kReadAhead, size - off));
  if (ahead_.size() < want) ahead_.resize(want);
  CDC_ASSIGN_OR_RETURN(ahead_len_, PreadUpTo(file_->fd(), ahead_.data(), want,
                                             off, file_->path()));
  ahead_off_ = off;
  ++blocks_read_;
  return std::string_view(ahead_).substr(0, std::min(n, ahead_len_));
}

Status LogReader::ExtendCommitted() {
  // The scan runs ahead of the reader by a window, not to the end of the
  // segment: a reader that starts in a 64 MiB segment otherwise walks its
  // 2,000-odd frame headers before its first event (half of `cdc-tail
  // --from earliest -n 1`'s time in a 100 GB log), and one that stops after
  // a few events never needed them.
  CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
  if (scan_ > committed_) {
    // Frames past committed_ belong to a transaction still open, and the
    // writer cuts them from the file if it aborts it (capture does on a
    // reconnect), then writes other frames there. Headers scanned before
    // are trusted only while the last of them is still in place.
    CDC_ASSIGN_OR_RETURN(FrameAt last, file_->ReadHeader(scan_last_, size));
    if (last.status != FrameStatus::kOk ||
        last.header.checksum != scan_last_header_.checksum ||
        last.header.first_seq != scan_last_header_.first_seq ||
        last.header.payload_len != scan_last_header_.payload_len) {
      scan_ = committed_;
      scan_seq_ = committed_seq_;
    }
  }
  // For the same reason, bytes read ahead past committed_ are read again.
  if (ahead_off_ + ahead_len_ > committed_)
    ahead_len_ = ahead_off_ >= committed_ ? 0 : committed_ - ahead_off_;
  for (;;) {
    if (committed_ > offset_ && scan_ - offset_ >= kScanAhead) {
      stop_ = FrameStatus::kOk;  // more may follow; not yet looked at
      return Status::OK();
    }
    CDC_ASSIGN_OR_RETURN(std::string_view bytes,
                         Ahead(scan_, kFrameHeaderSize, size));
    FrameAt at = SegmentFile::HeaderFrom(bytes, scan_, size);
    ++frame_headers_scanned_;
    stop_ = at.status;
    stop_detail_ = at.detail;
    if (at.status != FrameStatus::kOk) return Status::OK();
    if (at.header.first_seq != scan_seq_) {
      stop_ = FrameStatus::kBadHeader;
      stop_detail_ = "frame starts at seq " +
                     std::to_string(at.header.first_seq) + ", expected " +
                     std::to_string(scan_seq_);
      stop_fatal_ = true;
      return Status::OK();
    }
    scan_last_ = scan_;
    scan_last_header_ = at.header;
    scan_ += at.header.frame_size();
    scan_seq_ = at.header.end_seq();
    if (at.header.txn_end()) {
      committed_ = scan_;
      committed_seq_ = scan_seq_;
    }
  }
}

Status LogReader::StopCorruption() {
  if (stop_ == FrameStatus::kBadHeader)
    return CorruptAt(scan_, scan_seq_, stop_detail_);
  if (stop_ == FrameStatus::kTorn)
    return CorruptAt(scan_, scan_seq_,
                     "frame runs past the end of the sealed segment");
  return CorruptAt(committed_, next_seq_,
                   "sealed segment ends in an incomplete transaction");
}

Status LogReader::CheckFinished(uint64_t next_base, bool own_listed) {
  if (stop_ != FrameStatus::kEnd || committed_ != scan_)
    return StopCorruption();
  // next_seq_ is now where this segment ends.
  if (own_listed) {
    SegmentInfo self;
    self.base_seq = base_seq_;
    self.name = seg_name_;
    self.path = file_->path();
    auto rec = ReadSealRecord(self.path);
    if (rec.ok()) {
      self.seal = std::move(rec).value();
    } else if (rec.status().code() == Code::kCorruption) {
      self.seal_error = rec.status().message();
    } else if (rec.status().code() != Code::kNotFound) {
      return rec.status();
    }
    CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    if (self.seal && self.seal->end_seq != next_seq_ &&
        self.seal->end_seq == next_base && self.seal->bytes > size)
      return Status::Corruption(
          seg_name_ + " is truncated: " + std::to_string(size) +
          " bytes, its seal record says " + std::to_string(self.seal->bytes) +
          " (seq " + std::to_string(next_seq_) + "-" +
          std::to_string(next_base - 1) + " are lost)");
    CDC_RETURN_IF_ERROR(CheckSealedSegment(self, size, next_base));
    if (self.seal && self.seal->end_seq != next_seq_)
      return Status::Corruption(
          seg_name_ + " ends at seq " + std::to_string(next_seq_ - 1) +
          ", its seal record says " + std::to_string(self.seal->end_seq - 1));
  }
  if (next_base > next_seq_)
    return Status::Corruption(
        "seq " + std::to_string(next_seq_) + "-" +
        std::to_string(next_base - 1) + " are missing: " + seg_name_ +
        " ends at seq " + std::to_string(next_seq_ - 1) +
        " and the next segment is " + SegmentDisplayName(next_base));
  if (next_base < next_seq_)
    return Status::Corruption(
        SegmentDisplayName(next_base) + " starts at seq " +
        std::to_string(next_base) + ", inside " + seg_name_ +
        " (which holds up to seq " + std::to_string(next_seq_ - 1) + ")");
  return Status::OK();
}

Result<LogReader::Step> LogReader::AtNewest(bool own_listed) {
  if (!own_listed)
    return Status::Corruption(seg_name_ +
                              ", the newest segment, was removed while being "
                              "read");
  // Bytes below the durable mark were fsynced, and nothing but damage
  // shortens them. The mark is read before the size: the writer only moves
  // it past bytes already in the file, so a newer mark cannot outrun them.
  CDC_ASSIGN_OR_RETURN(auto mark, ReadDurableMark(dir_));
  if (stop_ == FrameStatus::kBadHeader) {
    // The newest segment may end in garbage a crashed writer left (the
    // next writer truncates it); anything valid after it is corruption,
    // unless no fsync ever covered the damage (see BeyondDurable).
    CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    CDC_ASSIGN_OR_RETURN(auto later, file_->FindValidFrameAfter(scan_, size));
    if (stop_fatal_ || (later && !BeyondDurable(mark, base_seq_, scan_)))
      return CorruptAt(scan_, scan_seq_, stop_detail_);
  }
  if (mark && mark->segment == base_seq_) {
    CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    if (size < mark->bytes)
      return Status::Corruption(
          seg_name_ + " is truncated: " + std::to_string(size) +
          " bytes, but the durable mark says " + std::to_string(mark->bytes) +
          " were fsynced (events from seq " + std::to_string(scan_seq_) +
          " on are lost)");
  }
  return Step::kEnd;
}

Result<LogReader::Step> LogReader::NextSegment() {
  CDC_ASSIGN_OR_RETURN(const std::vector<uint64_t>* bases, SegmentBases());
  auto it = std::upper_bound(bases->begin(), bases->end(), base_seq_);
  const bool own_listed =
      std::binary_search(bases->begin(), bases->end(), base_seq_);
  if (it == bases->end()) return AtNewest(own_listed);
  const uint64_t next_base = *it;
  const uint64_t earliest = bases->front();
  // The writer finishes a segment before it creates the next: what we saw
  // of this one may be older than that listing, so look again.
  CDC_RETURN_IF_ERROR(ExtendCommitted());
  if (offset_ < committed_) return Step::kMore;
  if (!own_listed && next_base != next_seq_ && earliest > next_seq_ &&
      stop_ == FrameStatus::kEnd && committed_ == scan_)
    // Retention removed this segment under us (we read it to its end
    // through our descriptor) and the one after it as well.
    return Status::Expired("events from seq " + std::to_string(next_seq_) +
                           " were removed by retention while being read (the "
                           "earliest retained event is now seq " +
                           std::to_string(earliest) + ")");
  CDC_RETURN_IF_ERROR(CheckFinished(next_base, own_listed));
  CDC_RETURN_IF_ERROR(OpenListedSegment(next_base));
  return Step::kMoved;
}

bool LogReader::NextOfGroup(Batch* b) {
  while (group_next_ < group_.size()) {
    const TxnEntry& t = group_[group_next_++];
    // DecodeTxnTable: the counts add up to the frame's, whose lines
    // CheckEventLines found (ends_ holds one per event).
    const uint32_t first_line = group_line_;
    const uint32_t start = first_line == 0 ? 0 : ends_[first_line - 1];
    const uint32_t end = ends_[first_line + t.events - 1];
    const uint64_t first = group_seq_;
    group_line_ += t.events;
    group_seq_ += t.events;
    if (group_seq_ <= skip_to_) continue;
    b->header = group_header_;
    b->header.first_seq = first;
    b->header.event_count = t.events;
    b->header.commit_lsn = t.commit_lsn;
    b->header.commit_time = t.commit_time;
    b->header.xid = t.xid;
    b->header.table_len = 0;
    b->header.raw_len = end - start;
    b->raw = std::string_view(raw_).substr(start, end - start);
    b->ends = std::span<const uint32_t>(ends_).subspan(first_line, t.events);
    b->ends_base = start;
    b->skip = skip_to_ > first ? static_cast<uint32_t>(skip_to_ - first) : 0;
    return true;
  }
  return false;
}

Result<bool> LogReader::Next(Batch* b) {
  for (;;) {
    if (NextOfGroup(b)) return true;
    if (offset_ < committed_) {
      CDC_ASSIGN_OR_RETURN(std::string_view head,
                           Ahead(offset_, kFrameHeaderSize, committed_));
      FrameAt at = SegmentFile::HeaderFrom(head, offset_, committed_);
      std::string_view frame, payload;
      if (at.status == FrameStatus::kOk) {
        CDC_ASSIGN_OR_RETURN(
            frame, Ahead(offset_, at.header.frame_size(), committed_));
        at = SegmentFile::FrameFrom(frame, offset_, committed_, &payload);
      }
      if (at.status != FrameStatus::kOk)
        return CorruptAt(offset_, next_seq_,
                         at.detail.empty() ? "truncated frame" : at.detail);
      const FrameHeader& h = at.header;
      const uint64_t off = offset_;
      offset_ += h.frame_size();
      next_seq_ = h.end_seq();
      if (h.event_count == 0 || h.end_seq() <= skip_to_) continue;
      // A buffer a huge frame grew is let go rather than kept for the
      // small frames that usually follow (the caller is done with it).
      if (raw_.capacity() > (4u << 20)) std::string().swap(raw_);
      if (ends_.capacity() > (1u << 20)) std::vector<uint32_t>().swap(ends_);
      Status s = codec_.Decompress(h, payload, &raw_);
      if (s.ok() && h.grouped()) {
        std::string bad_table =
            DecodeTxnTable(payload.substr(0, h.table_len), h, &group_);
        if (!bad_table.empty()) s = Status::Corruption(bad_table);
      }
      // The compressed form of a large frame is not kept for the next one.
      if (ahead_.size() > (4u << 20)) {
        std::string().swap(ahead_);
        ahead_len_ = 0;
      }
      if (!s.ok()) {
        group_.clear();
        return CorruptAt(off, h.first_seq, s.message());
      }
      std::string bad_lines = CheckEventLines(raw_, h.event_count, &ends_);
      if (!bad_lines.empty()) {
        group_.clear();
        return CorruptAt(off, h.first_seq, bad_lines);
      }
      if (h.grouped()) {
        group_header_ = h;
        group_next_ = 0;
        group_line_ = 0;
        group_seq_ = h.first_seq;
        continue;
      }
      b->header = h;
      b->raw = raw_;
      b->ends = ends_;
      b->ends_base = 0;
      b->skip = skip_to_ > h.first_seq
                    ? static_cast<uint32_t>(skip_to_ - h.first_seq)
                    : 0;
      return true;
    }
    CDC_RETURN_IF_ERROR(ExtendCommitted());
    if (offset_ < committed_) continue;
    CDC_ASSIGN_OR_RETURN(Step step, NextSegment());
    if (step == Step::kEnd) return false;
  }
}

Status LogReader::SeekEarliest() {
  // Retention may remove the earliest segment between listing and opening
  // it; "earliest" is then simply the next one.
  Status s;
  for (int attempt = 0; attempt < 100; ++attempt) {
    CDC_ASSIGN_OR_RETURN(auto segs, ListSegmentFiles(dir_));
    if (segs.empty())
      return Status::NotFound("log " + dir_ + " has no segments");
    s = SeekSeqIn(segs, segs.front().base_seq);
    if (s.code() != Code::kExpired) break;
  }
  return s;
}

Status LogReader::SeekSeq(uint64_t seq) {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegmentFiles(dir_));
  return SeekSeqIn(segs, seq);
}

Status LogReader::SeekSeqIn(const std::vector<SegmentInfo>& segs,
                            uint64_t seq) {
  if (segs.empty()) return Status::NotFound("log " + dir_ + " has no segments");
  if (seq < segs.front().base_seq)
    return Status::Expired("seq " + std::to_string(seq) +
                           " is no longer in the log (the earliest retained "
                           "event is seq " +
                           std::to_string(segs.front().base_seq) + ")");
  size_t i = segs.size() - 1;
  while (i > 0 && segs[i].base_seq > seq) --i;
  CDC_RETURN_IF_ERROR(OpenListedSegment(segs[i].base_seq));
  CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
  // Damage on the way is left for Next(), which reports it on reaching it
  // (a seq past the end of this segment leaves the reader at its end, from
  // where Next() must find the next segment).
  for (;;) {
    CDC_ASSIGN_OR_RETURN(FrameAt at, file_->ReadHeader(offset_, size));
    if (at.status != FrameStatus::kOk || at.header.end_seq() > seq) break;
    if (at.header.first_seq != next_seq_) break;
    offset_ += at.header.frame_size();
    next_seq_ = at.header.end_seq();
  }
  committed_ = scan_ = offset_;
  committed_seq_ = scan_seq_ = next_seq_;
  skip_to_ = seq;
  return Status::OK();
}

template <typename Key>
Status LogReader::CheckSkipped(const SegmentInfo& seg, Key key_of_header,
                               uint64_t target) {
  // Commit LSNs only grow, so if the last commit of the segment just before
  // the one the seek starts in lies below the target, every segment skipped
  // on the word of its seal record rightly was; one header walk proves it
  // even when an earlier record's last_lsn was edited.
  auto f = SegmentFile::Open(seg.path);
  if (!f.ok() && f.status().code() == Code::kNotFound) return Status::OK();
  CDC_RETURN_IF_ERROR(f.status());
  CDC_ASSIGN_OR_RETURN(uint64_t size, f->Size());
  CDC_ASSIGN_OR_RETURN(SegmentScan scan, ScanSegment(*f, size, seg.base_seq,
                                                     /*verify=*/false));
  FrameHeader last;
  last.commit_lsn = scan.last_lsn;
  last.commit_time = scan.last_time;
  if (scan.has_commit && key_of_header(last) >= target)
    return Status::Corruption(
        "the seal record of " + seg.name +
        " does not match its frames (its last commit is at " +
        FormatLsn(scan.last_lsn) + ", " + FormatTimestamp(scan.last_time) +
        "): run cdc-log verify");
  return Status::OK();
}

template <typename Key>
Status LogReader::SeekCommit(Key key_of_seal, Key key_of_header,
                             uint64_t target) {
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegmentFiles(dir_));
  if (segs.empty()) return Status::NotFound("log " + dir_ + " has no segments");
  // Commit LSNs and times only grow from segment to segment, so the first
  // segment whose last commit reaches the target is found by bisection,
  // reading O(log segments) seal records rather than all of them: a seek
  // in a log of thousands of segments costs what one in a few does.
  // `below(k)`: segment k is sealed, its record is readable and agrees
  // with the directory, and its last commit lies below the target, so it
  // can be skipped unread. A segment without a record (not yet written,
  // or lost) is never skipped: the walk below reads it instead.
  auto below = [&](size_t k) -> Result<bool> {
    SegmentInfo& seg = segs[k];
    ++seal_records_read_;
    auto rec = ReadSealRecord(seg.path);
    if (!rec.ok()) {
      if (rec.status().code() == Code::kNotFound) return false;
      return rec.status();  // Corruption names the record and what is wrong
    }
    seg.seal = std::move(rec).value();
    if (key_of_seal(*seg.seal) >= target) return false;
    // Skipped unread on the word of its seal record: the record must at
    // least agree with the directory.
    auto size = FileSize(seg.path);
    if (!size.ok() && size.status().code() == Code::kNotFound) return true;
    CDC_RETURN_IF_ERROR(size.status());
    CDC_RETURN_IF_ERROR(CheckSealedSegment(seg, *size, segs[k + 1].base_seq));
    return true;
  };
  size_t lo = 0, hi = segs.size() - 1;  // the answer lies in [lo, hi]
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    CDC_ASSIGN_OR_RETURN(bool skip, below(mid));
    if (skip)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t i = lo;
  if (i > 0)
    CDC_RETURN_IF_ERROR(CheckSkipped(segs[i - 1], key_of_header, target));
  for (; i < segs.size(); ++i) {
    const bool newest = i + 1 == segs.size();
    CDC_RETURN_IF_ERROR(OpenListedSegment(segs[i].base_seq));
    CDC_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    uint64_t off = 0, txn_start = 0, seq = base_seq_, txn_seq = base_seq_;
    for (;;) {
      CDC_ASSIGN_OR_RETURN(FrameAt at, file_->ReadHeader(off, size));
      if (at.status == FrameStatus::kOk && at.header.first_seq != seq) {
        at.status = FrameStatus::kBadHeader;
        at.detail = "frame starts at seq " +
                    std::to_string(at.header.first_seq) + ", expected " +
                    std::to_string(seq);
      }
      if (at.status != FrameStatus::kOk) {
        if (newest) break;  // the end of the log, or a torn tail
        // What lies beyond damage in a sealed segment is unknown, and the
        // position sought may be in it.
        if (at.status == FrameStatus::kTorn)
          return CorruptAt(off, seq,
                           "frame runs past the end of the sealed segment");
        if (at.status == FrameStatus::kBadHeader)
          return CorruptAt(off, seq, at.detail);
        if (off != txn_start)
          return CorruptAt(txn_start, txn_seq,
                           "sealed segment ends in an incomplete transaction");
        if (seq != segs[i + 1].base_seq)
          return Status::Corruption("seq " + std::to_string(seq) + "-" +
                                    std::to_string(segs[i + 1].base_seq - 1) +
                                    " are missing: " + seg_name_ +
                                    " ends at seq " + std::to_string(seq - 1) +
                                    " and the next segment is " +
                                    segs[i + 1].name);
        break;
      }
      const uint64_t frame_off = off;
      off += at.header.frame_size();
      seq = at.header.end_seq();
      if (!at.header.txn_end()) continue;
      if (key_of_header(at.header) >= target) {
        offset_ = committed_ = scan_ = txn_start;
        next_seq_ = committed_seq_ = scan_seq_ = skip_to_ = txn_seq;
        // In a grouped frame: its first transaction that is late enough
        // (the frame's checksum is checked when Next() reads it).
        if (at.header.grouped() && txn_start == frame_off) {
          std::string table;
          std::vector<TxnEntry> txns;
          CDC_RETURN_IF_ERROR(file_->ReadTable(frame_off, at.header, &table));
          std::string bad = DecodeTxnTable(table, at.header, &txns);
          if (!bad.empty()) return CorruptAt(frame_off, txn_seq, bad);
          for (const TxnEntry& t : txns) {
            FrameHeader e = at.header;
            e.commit_lsn = t.commit_lsn;
            e.commit_time = t.commit_time;
            if (key_of_header(e) >= target) break;
            skip_to_ += t.events;
          }
        }
        return Status::OK();
      }
      txn_start = off;
      txn_seq = seq;
    }
    if (newest) {
      // Nothing that late yet: wait at the end of what is committed.
      offset_ = committed_ = scan_ = txn_start;
      next_seq_ = committed_seq_ = scan_seq_ = skip_to_ = txn_seq;
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
  for (size_t i = 0; i < segs.size(); ++i) {
    const SegmentInfo& seg = segs[i];
    CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
    CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
    sum.bytes += size;
    // What a summary adds up from seal records must be one unbroken log.
    if (i + 1 < segs.size()) {
      CDC_RETURN_IF_ERROR(CheckSealedSegment(seg, size, segs[i + 1].base_seq));
    }
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
