// Walks the frames of one segment from its start, stopping at the first
// frame that is torn, damaged or out of sequence. Shared by recovery,
// verification and the summaries in `cdc-log info`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cdc/base/lsn.h"
#include "cdc/log/segment.h"

namespace cdc::log {

struct SegmentScan {
  uint64_t frames = 0;
  uint64_t valid_end = 0;   // offset after the last good frame
  uint64_t txn_end = 0;     // offset after the last TXN_END frame
  uint64_t next_seq = 0;    // seq after the last TXN_END frame
  bool has_commit = false;  // saw at least one TXN_END frame
  Lsn first_lsn = 0;        // of the first TXN_END frame
  Lsn last_lsn = 0;         // of the last TXN_END frame
  int64_t first_time = 0;
  int64_t last_time = 0;
  FrameHeader last_end;                  // header of the last TXN_END frame
  FrameStatus stop = FrameStatus::kEnd;  // why the walk stopped
  std::string stop_detail;
  FrameHeader stop_header;  // header at valid_end, when it could be decoded
};

// Called for each good frame; `payload` is empty unless checksums are
// verified. A non-OK status stops the walk and is returned.
using FrameVisitor = std::function<Status(uint64_t offset, const FrameHeader& h,
                                          std::string_view payload)>;

// `base_seq` is the segment's first seq (its name). With `verify`, every
// payload is read and its checksum checked; otherwise only headers are read.
Result<SegmentScan> ScanSegment(const SegmentFile& file, uint64_t size,
                                uint64_t base_seq, bool verify,
                                const FrameVisitor& visit = nullptr);

}  // namespace cdc::log
