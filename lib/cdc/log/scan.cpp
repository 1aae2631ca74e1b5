#include "cdc/log/scan.h"

namespace cdc::log {

Result<SegmentScan> ScanSegment(const SegmentFile& file, uint64_t size,
                                uint64_t base_seq, bool verify,
                                const FrameVisitor& visit) {
  SegmentScan s;
  s.next_seq = base_seq;
  uint64_t expect_seq = base_seq;
  std::string payload;
  uint64_t off = 0;
  for (;;) {
    FrameAt at;
    if (verify) {
      CDC_ASSIGN_OR_RETURN(at, file.ReadFrame(off, size, &payload));
    } else {
      CDC_ASSIGN_OR_RETURN(at, file.ReadHeader(off, size));
    }
    s.stop_header = at.header;
    if (at.status != FrameStatus::kOk) {
      s.stop = at.status;
      s.stop_detail = at.detail;
      break;
    }
    const FrameHeader& h = at.header;
    if (h.first_seq != expect_seq) {
      s.stop = FrameStatus::kBadHeader;
      s.stop_detail = "frame starts at seq " + std::to_string(h.first_seq) +
                      ", expected " + std::to_string(expect_seq);
      break;
    }
    if (visit) {
      CDC_RETURN_IF_ERROR(
          visit(off, h, verify ? std::string_view(payload) : ""));
    }
    off += h.frame_size();
    expect_seq = h.end_seq();
    ++s.frames;
    s.valid_end = off;
    if (h.txn_end()) {
      s.txn_end = off;
      s.next_seq = expect_seq;
      if (!s.has_commit) {
        s.first_lsn = h.commit_lsn;
        s.first_time = h.commit_time;
        // A grouped frame's header holds its last transaction's commit.
        if (h.grouped()) {
          std::string table;
          std::vector<TxnEntry> txns;
          if (verify) {
            table.assign(payload, 0, h.table_len);
          } else {
            CDC_RETURN_IF_ERROR(
                file.ReadTable(off - h.frame_size(), h, &table));
          }
          if (DecodeTxnTable(table, h, &txns).empty()) {
            s.first_lsn = txns.front().commit_lsn;
            s.first_time = txns.front().commit_time;
          }
        }
      }
      s.has_commit = true;
      s.last_lsn = h.commit_lsn;
      s.last_time = h.commit_time;
      s.last_end = h;
    }
  }
  return s;
}

}  // namespace cdc::log
