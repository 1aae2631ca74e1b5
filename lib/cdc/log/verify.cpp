#include "cdc/log/verify.h"

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

// Line `n` (from 0) of the frame's event lines, without its newline.
std::string_view NthLine(std::string_view raw, uint64_t n) {
  size_t start = 0;
  for (uint64_t i = 0; i < n; ++i) {
    size_t nl = raw.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t nl = raw.find('\n', start);
  return nl == std::string_view::npos ? std::string_view()
                                      : raw.substr(start, nl - start);
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
  // Each line of the schema file must be the event at its seq.
  auto schemas = ReadSchemas(dir);
  if (!schemas.ok()) rep.problems.push_back(schemas.status().message());
  const std::vector<SchemaEntry> no_schemas;
  const std::vector<SchemaEntry>& entries =
      schemas.ok() ? *schemas : no_schemas;
  size_t next_entry = 0;
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
      while (next_entry < entries.size() &&
             entries[next_entry].seq < h.first_seq)
        ++next_entry;  // of events retention removed
      for (; what.empty() && next_entry < entries.size() &&
             entries[next_entry].seq < h.end_seq();
           ++next_entry) {
        const SchemaEntry& e = entries[next_entry];
        std::string_view line = NthLine(raw, e.seq - h.first_seq);
        if (line != e.stored)
          rep.problems.push_back(std::string(kSchemasFile) +
                                 ": the line of seq " + std::to_string(e.seq) +
                                 " is not the log's event at that seq");
      }
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
  if (next_entry < entries.size() && entries[next_entry].seq >= expect_seq)
    rep.notes.push_back(std::string(kSchemasFile) + ": " +
                        std::to_string(entries.size() - next_entry) +
                        " lines from seq " +
                        std::to_string(entries[next_entry].seq) +
                        " beyond the log's end (not yet durable, or cut by a "
                        "crash; the next writer cuts them)");
  return rep;
}

}  // namespace cdc::log
