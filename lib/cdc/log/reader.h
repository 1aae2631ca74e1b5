// LogReader: reads committed events in seq order, across segments.
//
// A reader only returns frames of complete transactions: it scans headers
// ahead to the next TXN_END frame before handing out any frame of a
// transaction, so a transaction being written is invisible until its end
// is on disk. Positioning by seq, commit LSN or commit time reads seal
// records and frame headers only, never whole segments.
//
// A reader knows where the log ends: at the last whole committed frame of
// the newest segment (the one with the highest name). Whenever it cannot
// get there it fails, never stops early: a damaged frame, a sealed segment
// that ends early, in a partial transaction or otherwise than its seal
// record says, or a segment missing between two others is Corruption naming
// the segment (and offset and seq range where there is one). Only the
// newest segment may end in a torn tail (a writer that died mid-write),
// which is the end of the log. A segment deleted under the reader (by
// retention) is read on through the descriptor the reader holds; when the
// next one is gone too, because retention removed everything up to a later
// segment, Next() fails with Expired. Not thread-safe; any number of
// readers may run beside the writer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/log/frame.h"
#include "cdc/log/position.h"
#include "cdc/log/segment.h"

namespace cdc::log {

// The events of one frame, or of one transaction of a grouped frame (whose
// header then describes that transaction alone: its seq range and commit,
// TXN_END, no table). Lines are in stored form (no "seq"/"last"). A Batch
// filled by LogReader::Next views the reader's buffers: it is valid until
// the next call to Next() or a seek on that reader, or its destruction.
struct Batch {
  FrameHeader header;
  std::string_view raw;  // the decompressed lines: event_count of them
  uint32_t skip = 0;     // leading events to skip (a seek into the frame)
  // From LogReader::Next: where each line ends (just past its '\n'), as
  // offsets from `ends_base` (raw begins there); one per event. Empty in a
  // Batch built otherwise, which Line() must not be used on.
  std::span<const uint32_t> ends;
  uint32_t ends_base = 0;

  // Line `i` (< header.event_count) without its '\n', from `ends`.
  std::string_view Line(uint32_t i) const {
    const uint32_t from = i == 0 ? 0 : ends[i - 1] - ends_base;
    return raw.substr(from, ends[i] - 1 - ends_base - from);
  }

  // Calls fn(seq, line, last_in_txn) for each event after `skip`. Batches
  // from LogReader::Next passed CheckEventLines: every line is "{...}".
  // Whatever `raw` holds, no view reaches outside it, and fn is called at
  // most event_count times.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    size_t pos = 0;
    uint64_t seq = header.first_seq;
    for (uint32_t i = 0; i < header.event_count && pos < raw.size();
         ++i, ++seq) {
      size_t nl = raw.find('\n', pos);
      if (nl == std::string::npos) nl = raw.size();
      if (i >= skip) {
        bool last = header.txn_end() && i + 1 == header.event_count;
        fn(seq, raw.substr(pos, nl - pos), last);
      }
      pos = nl + 1;
    }
  }
};

class LogReader {
 public:
  // NotFound if DIR holds no log; Corruption if it is of another version.
  static Result<std::unique_ptr<LogReader>> Open(const std::string& dir);

  // The earliest retained event (where Open() positions the reader).
  Status SeekEarliest();
  // The next event returned will be the first with seq >= `seq`. Expired
  // when `seq` is older than the earliest retained event.
  Status SeekSeq(uint64_t seq);
  // The first transaction whose commit LSN is >= `lsn`.
  Status SeekLsn(Lsn lsn);
  // The first transaction whose commit time is >= `unix_micros`.
  Status SeekTime(int64_t unix_micros);
  // After the last committed event.
  Status SeekEnd();

  // Fills `b` with the next frame holding events and returns true, or
  // returns false when no more committed events exist right now.
  Result<bool> Next(Batch* b);

  // Seq of the next event this reader would return.
  uint64_t next_seq() const {
    return std::max(group_next_ < group_.size() ? group_seq_ : next_seq_,
                    skip_to_);
  }
  const std::string& dir() const { return dir_; }
  // Seal records read by seeks so far: O(log segments) per LSN or time
  // seek, which is what keeps a seek in a 100 GB log fast.
  uint64_t seal_records_read() const { return seal_records_read_; }
  // Frame headers the reader's scan for transaction ends has read: it runs
  // a window (kScanAhead) ahead of the events returned, so the first event
  // of a 64 MiB segment does not wait for all of its headers.
  uint64_t frame_headers_scanned() const { return frame_headers_scanned_; }
  // Reads of segment bytes by Next() (blocks of kReadAhead or a frame).
  uint64_t blocks_read() const { return blocks_read_; }
  static constexpr uint64_t kScanAhead = 1u << 20;
  static constexpr uint64_t kReadAhead = 128u << 10;

 private:
  explicit LogReader(std::string dir) : dir_(std::move(dir)) {}
  Status OpenSegment(uint64_t base_seq);
  // Opens `base_seq` listed a moment ago; a file gone since is Expired when
  // retention removed it (the log now starts later), else Corruption.
  Status OpenListedSegment(uint64_t base_seq);
  // SeekSeq within a listing already made (SeekEarliest's).
  Status SeekSeqIn(const std::vector<SegmentInfo>& segs, uint64_t seq);
  Status ExtendCommitted();
  // Up to `n` bytes of the segment at `off`, as many as it holds below
  // `size`, from a block read ahead (kReadAhead, or the frame if larger):
  // frames are read a block at a time, not with a pread per header and
  // one per payload. Valid until the next call.
  Result<std::string_view> Ahead(uint64_t off, uint64_t n, uint64_t size);
  // All that is committed in this segment has been returned: moves to the
  // next segment (kMoved), finds more here (kMore), or finds the end of
  // the log (kEnd); or fails when the log cannot be followed further.
  enum class Step { kMoved, kMore, kEnd };
  Result<Step> NextSegment();
  Result<Step> AtNewest(bool own_listed);
  // The current segment, fully read, must end where its successor
  // `next_base` begins and agree with its seal record.
  Status CheckFinished(uint64_t next_base, bool own_listed);
  Status StopCorruption();
  // Hands out the next transaction of the grouped frame being read.
  bool NextOfGroup(Batch* b);
  // Names of the segment files, re-read only when the directory changed.
  Result<const std::vector<uint64_t>*> SegmentBases();
  Status CorruptAt(uint64_t off, uint64_t first_seq, const std::string& what);
  template <typename Key>
  Status CheckSkipped(const SegmentInfo& seg, Key key_of_header,
                      uint64_t target);
  template <typename Key>
  Status SeekCommit(Key key_of_seal, Key key_of_header, uint64_t target);

  std::string dir_;
  Codec codec_;
  // Bytes of the segment read ahead: ahead_len_ of them, from ahead_off_.
  // Those past committed_ are dropped when a scan starts.
  std::string ahead_;
  uint64_t ahead_off_ = 0;
  uint64_t ahead_len_ = 0;

  // The lines of the frame last read, and where each ends (Batch::ends).
  std::string raw_;
  std::vector<uint32_t> ends_;
  // A grouped frame being handed out one transaction at a time.
  FrameHeader group_header_;
  std::vector<TxnEntry> group_;
  size_t group_next_ = 0;    // its next transaction
  uint32_t group_line_ = 0;  // that transaction's first line in raw_
  uint64_t group_seq_ = 0;   // ... and first seq

  uint64_t base_seq_ = 0;
  std::string seg_name_;
  std::optional<SegmentFile> file_;
  uint64_t offset_ = 0;         // next frame to return
  uint64_t committed_ = 0;      // frames below this end complete transactions
  uint64_t scan_ = 0;           // header scan position (>= committed_)
  uint64_t scan_seq_ = 0;       // seq expected at scan_
  uint64_t committed_seq_ = 0;  // seq at committed_
  // While scan_ > committed_: where the last frame scanned starts, and its
  // header (ExtendCommitted checks it is still there).
  uint64_t scan_last_ = 0;
  FrameHeader scan_last_header_;
  uint64_t next_seq_ = 0;  // seq of the frame at offset_
  uint64_t skip_to_ = 0;   // events below this seq are not returned
  // Why the header scan stopped at scan_: kEnd (the end of the file),
  // kTorn (a frame runs past it), kBadHeader (stop_detail_ says why) or
  // kOk (a window ahead of offset_ was scanned; the rest is not yet).
  FrameStatus stop_ = FrameStatus::kEnd;
  uint64_t seal_records_read_ = 0;      // by seeks, for seal_records_read()
  uint64_t frame_headers_scanned_ = 0;  // by ExtendCommitted
  uint64_t blocks_read_ = 0;            // by Ahead
  std::string stop_detail_;
  bool stop_fatal_ = false;  // never a torn write (a valid frame, wrong seq)

  std::vector<uint64_t> bases_;  // cached segment names
  bool bases_valid_ = false;
  int64_t dir_mtime_ns_ = 0;
  int64_t listed_at_ns_ = 0;
};

// What a log holds, from seal records and frame headers: the newest
// segment's, and an older one's only when the newest holds no transaction.
struct LogSummary {
  size_t segments = 0;
  uint64_t bytes = 0;
  uint64_t first_seq = 1;  // earliest retained
  uint64_t next_seq = 1;   // one past the last committed event
  // The last transaction (a TXN_END frame with events: also a lone
  // message), if any is retained: its commit LSN and time.
  bool has_commit = false;
  Lsn last_lsn = 0;
  int64_t last_time = 0;
  // The last TXN_END frame of any kind, position frames included: where
  // the log stands in its source (position.FlushLsn() is what capture
  // acknowledges for it) and when it was recorded.
  SourcePosition position;
  int64_t position_time = 0;
};
Result<LogSummary> Summarize(const std::string& dir);

}  // namespace cdc::log
