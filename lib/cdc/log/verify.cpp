#include "cdc/log/verify.h"

#include <algorithm>
#include <iterator>

#include "cdc/base/fs.h"
#include "cdc/base/sha256.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/scan.h"
#include "cdc/log/schemas.h"

namespace cdc::log {

namespace {

// Every field of a seal record against the segment: what the record says
// is what seeking, listing and retention rely on without reading frames.
void CheckSeal(const SegmentInfo& seg, uint64_t size, const SegmentScan& scan,
               uint64_t next_base, std::vector<std::string>* problems) {
  const SealRecord& r = *seg.seal;
  auto mismatch = [&](const char* field, const std::string& says,
                      const std::string& is) {
    problems->push_back(seg.name + ": seal record says " + field + " " + says +
                        ", the segment has " + is);
  };
  if (r.bytes != size)
    mismatch("bytes", std::to_string(r.bytes), std::to_string(size));
  if (r.first_seq != seg.base_seq)
    mismatch("first_seq", std::to_string(r.first_seq),
             std::to_string(seg.base_seq) + " (its name)");
  if (r.end_seq != next_base)
    mismatch("end_seq", std::to_string(r.end_seq),
             "successor " + SegmentDisplayName(next_base));
  // The rest is known only when the frames could all be read.
  if (scan.stop != FrameStatus::kEnd || scan.txn_end != size) return;
  if (r.end_seq != scan.next_seq && r.end_seq == next_base)
    mismatch("end_seq", std::to_string(r.end_seq),
             "events up to seq " + std::to_string(scan.next_seq - 1));
  if (r.first_lsn != scan.first_lsn)
    mismatch("first_lsn", FormatLsn(r.first_lsn), FormatLsn(scan.first_lsn));
  if (r.last_lsn != scan.last_lsn)
    mismatch("last_lsn", FormatLsn(r.last_lsn), FormatLsn(scan.last_lsn));
  if (r.first_time != scan.first_time)
    mismatch("first_time_us", std::to_string(r.first_time),
             std::to_string(scan.first_time));
  if (r.last_time != scan.last_time)
    mismatch("last_time_us", std::to_string(r.last_time),
             std::to_string(scan.last_time));
}

// What the scan saw for the check of LOG/schemas.ndjson after it: the
// schema events of the frames that could be read, and which seqs those
// frames hold (an event elsewhere is unknown: damage, reported already).
struct SeenSchemas {
  struct Event {
    uint64_t seq;
    std::string stored;
    size_t segment;   // index in the listing
    uint64_t offset;  // of its frame
  };
  std::vector<Event> events;                        // in seq order
  std::vector<std::pair<uint64_t, uint64_t>> read;  // [first, end), in order

  void Frame(size_t segment, uint64_t offset, const FrameHeader& h,
             std::string_view raw) {
    size_t start = 0;
    for (uint64_t seq = h.first_seq; seq < h.end_seq(); ++seq) {
      const size_t nl = raw.find('\n', start);
      const std::string_view line = raw.substr(start, nl - start);
      if (IsSchemaEvent(line))
        events.push_back({seq, std::string(line), segment, offset});
      start = nl + 1;
    }
    if (!read.empty() && read.back().second == h.first_seq) {
      read.back().second = h.end_seq();
    } else {
      read.emplace_back(h.first_seq, h.end_seq());
    }
  }
  // Frames at or after `offset` of segment `segment` hold no committed
  // event (an open transaction, being written or cut by a crash).
  void DropFrom(size_t segment, uint64_t offset, uint64_t end_seq) {
    while (!events.empty() && events.back().segment == segment &&
           events.back().offset >= offset)
      events.pop_back();
    while (!read.empty() && read.back().first >= end_seq) read.pop_back();
    if (!read.empty() && read.back().second > end_seq)
      read.back().second = end_seq;
  }
  bool WasRead(uint64_t seq) const {
    auto it = std::upper_bound(
        read.begin(), read.end(), seq,
        [](uint64_t s, const std::pair<uint64_t, uint64_t>& r) {
          return s < r.first;
        });
    return it != read.begin() && seq < std::prev(it)->second;
  }
};

// The lines of seqs named, as a message lists them: at most a few.
std::string SeqList(const std::vector<uint64_t>& seqs) {
  std::string out;
  for (size_t i = 0; i < seqs.size() && i < 5; ++i)
    out += (i > 0 ? ", " : "") + std::to_string(seqs[i]);
  if (seqs.size() > 5)
    out += " and " + std::to_string(seqs.size() - 5) + " more";
  return out;
}

// LOG/schemas.ndjson against what the scan saw (schemas.h states the
// rule). Read after the scan: the writer syncs a schema event's line
// before its frame, so every event the scan met has its line by now.
Status CheckSchemas(const std::string& dir, const SeenSchemas& seen,
                    uint64_t first_seq, uint64_t end_seq, VerifyReport* rep) {
  const std::string file = kSchemasFile;
  const bool exists = PathExists(SchemasPath(dir));
  uint64_t whole = 0;
  auto read = ReadSchemas(dir, &whole);
  if (!read.ok()) {
    if (read.status().code() != Code::kCorruption) return read.status();
    rep->problems.push_back(read.status().message());
    return Status::OK();
  }
  const std::vector<SchemaEntry>& lines = *read;
  std::vector<uint64_t> missing, extra, beyond, not_schema;
  auto ev = seen.events.begin();
  for (const SchemaEntry& line : lines) {
    for (; ev != seen.events.end() && ev->seq < line.seq; ++ev)
      if (ev->seq < end_seq) missing.push_back(ev->seq);
    if (line.seq >= end_seq) {
      beyond.push_back(line.seq);
    } else if (ev != seen.events.end() && ev->seq == line.seq) {
      if (line.stored != ev->stored)
        rep->problems.push_back(file + ": the line of seq " +
                                std::to_string(line.seq) +
                                " is not the log's event at that seq");
      ++ev;
    } else if (seen.WasRead(line.seq)) {
      extra.push_back(line.seq);
    } else if (line.seq < first_seq && !IsSchemaEvent(line.stored)) {
      // Retention removed its event; its form is all there is to check.
      not_schema.push_back(line.seq);
    }
  }
  for (; ev != seen.events.end(); ++ev)
    if (ev->seq < end_seq) missing.push_back(ev->seq);
  if (!missing.empty()) {
    auto size = FileSize(SchemasPath(dir));
    const bool torn = size.ok() && *size > whole;
    rep->problems.push_back(
        exists ? file + " has no line for " + std::to_string(missing.size()) +
                     " of the log's schema events (seq " + SeqList(missing) +
                     ")" + (torn ? "; its last line is cut short" : "")
               : file + " is missing, but the log holds " +
                     std::to_string(missing.size()) + " schema events (seq " +
                     SeqList(missing) + ")");
  }
  if (!extra.empty())
    rep->problems.push_back(file + ": lines of seq " + SeqList(extra) +
                            " are extra (the log's events there are not "
                            "schema events)");
  if (!not_schema.empty())
    rep->problems.push_back(file + ": lines of seq " + SeqList(not_schema) +
                            " are not schema events");
  if (!beyond.empty())
    rep->notes.push_back(file + ": " + std::to_string(beyond.size()) +
                         " lines from seq " + std::to_string(beyond.front()) +
                         " beyond the log's end (not yet durable, or cut by a "
                         "crash; the next writer cuts them)");
  return Status::OK();
}

}  // namespace

Result<VerifyReport> VerifyLog(
    const std::string& dir,
    const std::function<void(uint64_t, uint64_t)>& progress) {
  CDC_RETURN_IF_ERROR(ReadIdentity(dir).status());
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir));
  VerifyReport rep;
  auto mark = ReadDurableMark(dir);
  if (!mark.ok() && mark.status().code() != Code::kCorruption)
    return mark.status();
  if (!mark.ok()) rep.problems.push_back(mark.status().message());
  if (mark.ok() && *mark && !segs.empty() &&
      (*mark)->segment > segs.back().base_seq)
    rep.problems.push_back("the durable mark names " +
                           SegmentDisplayName((*mark)->segment) +
                           ", which is missing");
  uint64_t total = 0;
  for (const auto& s : segs) {
    CDC_ASSIGN_OR_RETURN(uint64_t n, FileSize(s.path));
    total += n;
  }
  SeenSchemas seen;
  Codec codec;
  std::string raw;
  std::vector<TxnEntry> txns;
  Lsn prev_lsn = 0;
  uint64_t expect_seq = segs.empty() ? 1 : segs.front().base_seq;
  rep.first_seq = expect_seq;
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& seg = segs[i];
    const bool newest = i + 1 == segs.size();
    ++rep.segments;
    if (seg.base_seq != expect_seq) {
      rep.problems.push_back(seg.name + ": starts at seq " +
                             std::to_string(seg.base_seq) + ", expected " +
                             std::to_string(expect_seq) + " (missing events)");
    }
    CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
    CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
    rep.bytes += size;
    bool mid_txn = false;  // the frame before ended no transaction
    auto visit = [&](uint64_t off, const FrameHeader& h,
                     std::string_view payload) -> Status {
      ++rep.frames;
      rep.events += h.event_count;
      std::string what;
      Status s = codec.Decompress(h, payload, &raw);
      what = s.ok() ? CheckEventLines(raw, h.event_count) : s.message();
      if (what.empty() && h.grouped()) {
        what = DecodeTxnTable(payload.substr(0, h.table_len), h, &txns);
        if (what.empty() && mid_txn)
          what =
              "a frame of whole transactions inside the transaction "
              "begun before it";
        // Each transaction's commit LSN in order, the header's last.
        for (size_t k = 0; what.empty() && k + 1 < txns.size(); ++k) {
          if (txns[k].commit_lsn < prev_lsn)
            what = "commit LSN " + FormatLsn(txns[k].commit_lsn) +
                   " is before " + FormatLsn(prev_lsn);
          prev_lsn = txns[k].commit_lsn;
        }
      }
      if (what.empty()) seen.Frame(i, off, h, raw);
      mid_txn = !h.txn_end();
      if (what.empty() && h.txn_end()) {
        if (h.commit_lsn < prev_lsn)
          what = "commit LSN " + FormatLsn(h.commit_lsn) + " is before " +
                 FormatLsn(prev_lsn);
        prev_lsn = h.commit_lsn;
      }
      if (!what.empty())
        rep.problems.push_back(DescribeCorruption(seg.name, off, h.first_seq,
                                                  h.end_seq() - 1, what));
      return Status::OK();
    };
    CDC_ASSIGN_OR_RETURN(SegmentScan scan,
                         ScanSegment(f, size, seg.base_seq, true, visit));
    if (newest) seen.DropFrom(i, scan.txn_end, scan.next_seq);
    // The newest segment may end torn only beyond what was fsynced.
    const uint64_t durable =
        newest && mark.ok() && *mark && (*mark)->segment == seg.base_seq
            ? (*mark)->bytes
            : 0;
    // A clean end (or an open transaction) below the mark: data cut away.
    if (newest && scan.stop == FrameStatus::kEnd && scan.txn_end < durable)
      rep.problems.push_back(DescribeCorruption(
          seg.name, scan.txn_end, scan.next_seq, 0,
          "the segment's complete transactions end below the " +
              std::to_string(durable) + " bytes known durable"));
    if (scan.stop != FrameStatus::kEnd) {
      CDC_ASSIGN_OR_RETURN(auto later,
                           f.FindValidFrameAfter(scan.valid_end, size));
      const bool beyond = newest && mark.ok() &&
                          BeyondDurable(*mark, seg.base_seq, scan.valid_end);
      if (newest && (!later || beyond) && scan.txn_end >= durable) {
        rep.notes.push_back(
            seg.name + ": torn tail of " +
            std::to_string(size - scan.valid_end) + " bytes at offset " +
            std::to_string(scan.valid_end) +
            (later ? " beyond the " + std::to_string(durable) +
                         " bytes known durable, with frames after a hole "
                         "(a crash or a failed writeback; never "
                         "acknowledged; the next writer truncates it)"
                   : " (a writer stopped mid-write; the next writer "
                     "truncates it)"));
      } else {
        uint64_t last = 0;
        if (later) {
          auto h = f.ReadHeader(*later, size);
          if (h.ok() && h->header.first_seq > 0) last = h->header.first_seq - 1;
        } else if (!newest) {
          last = segs[i + 1].base_seq - 1;
        }
        std::string detail = scan.stop == FrameStatus::kTorn ? "truncated frame"
                                                             : scan.stop_detail;
        rep.problems.push_back(DescribeCorruption(seg.name, scan.valid_end,
                                                  scan.next_seq, last, detail));
      }
    } else if (scan.txn_end != scan.valid_end) {
      (newest ? rep.notes : rep.problems)
          .push_back(seg.name +
                     ": ends in an incomplete transaction from seq " +
                     std::to_string(scan.next_seq) +
                     (newest ? " (being written, or cut by a crash)" : ""));
    }
    // After damage in a sealed segment the next segment's name is the best
    // knowledge of where it should have ended; don't report that twice.
    expect_seq = !newest && scan.stop != FrameStatus::kEnd
                     ? segs[i + 1].base_seq
                     : scan.next_seq;
    if (!newest) {
      if (!seg.seal_error.empty()) {
        rep.problems.push_back(seg.seal_error);
      } else if (!seg.seal) {
        rep.notes.push_back(seg.name +
                            ": seal record missing (rebuilt when the writer "
                            "next opens the log)");
      } else {
        CheckSeal(seg, size, scan, segs[i + 1].base_seq, &rep.problems);
        CDC_ASSIGN_OR_RETURN(std::string sha, Sha256File(seg.path));
        if (sha != seg.seal->sha256)
          rep.problems.push_back(seg.name + ": SHA-256 " + sha +
                                 " does not match its seal record " +
                                 seg.seal->sha256);
      }
    }
    if (progress) progress(rep.bytes, total);
  }
  rep.next_seq = expect_seq;
  CDC_RETURN_IF_ERROR(
      CheckSchemas(dir, seen, rep.first_seq, rep.next_seq, &rep));
  return rep;
}

}  // namespace cdc::log
