// Recovery: what the log writer checks and repairs when it opens a log
// (docs/invariants.md 1, 3, 4, 8, 9 and 17).
//
// Only the newest segment may end torn: its tail is cut back to the end of
// its last complete transaction. Any other damage is corruption and stops
// the open: a sealed segment that disagrees with its seal record or does
// not lead to the next one, a damaged frame with good frames after it in
// the newest segment (unless past the durable mark, where nothing was ever
// synced), or a newest segment shorter than the durable mark. A seal record
// lost to a crash is rebuilt. Lines of LOG/schemas.ndjson at or past the
// log's end belong to events that never became durable and are cut.
//
// Free functions, each one step; LogWriter::Recover runs them in order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/log/position.h"
#include "cdc/log/scan.h"
#include "cdc/log/segment.h"

namespace cdc::log::recovery {

// What the sealed segments (all but the newest) say about the log's end.
struct SealedEnd {
  bool has_commit = false;
  Lsn last_lsn = 0;  // of the newest commit in them
  // Its position, when the segment holding it was scanned (a rebuilt seal
  // record); otherwise `unscanned` names that segment (see SealedPosition).
  SourcePosition position;
  std::optional<SegmentInfo> unscanned;
  uint64_t resealed = 0;  // seal records rebuilt
};

// Checks every segment of `segs` but the last (the newest) against its
// seal record and its successor, or rebuilds a missing record from the
// segment's frames. Their frames are not verified: that is verify's job,
// and reading them all would make every open cost a pass over the log.
Result<SealedEnd> CheckSealedSegments(const std::vector<SegmentInfo>& segs);

// Checks sealed segment `seg`, which has a seal record (usable or not) and
// whose successor is named `next_base`. A segment removed meanwhile
// (retention running beside the writer) is skipped.
Status CheckRecorded(const SegmentInfo& seg, uint64_t next_base,
                     SealedEnd* end);

// Rebuilds the missing seal record of sealed segment `seg` (a crash between
// sealing it and syncing the record), which must hold whole transactions
// up to `next_base`.
Status Reseal(const SegmentInfo& seg, uint64_t next_base, SealedEnd* end);

// A seal record for the newest segment means a crash after sealing it but
// before creating its successor: it is the active segment again, and the
// record goes.
Status RemoveStaleSeal(const std::string& log_dir, const SegmentInfo& newest);

// The newest segment as recovery finds it.
struct Newest {
  uint64_t size = 0;  // bytes in the file
  SegmentScan scan;   // its frames: it is cut back to scan.txn_end
  std::optional<DurableMark> mark;  // what LOG/durable says
};

// Scans the newest segment, verifying checksums, and reads the durable
// mark: Corruption when the tail to cut is not a torn write (CheckTornTail,
// CheckDurableMark).
Result<Newest> ScanNewest(const std::string& log_dir,
                          const SegmentInfo& newest);

// Damage in the newest segment at scan.valid_end, below the durable mark
// (or with none), followed by a valid frame: corruption of acknowledged
// data, not a write the crash tore.
Status CheckTornTail(const SegmentInfo& newest, const SegmentFile& f,
                     uint64_t size, const SegmentScan& scan,
                     const std::optional<DurableMark>& mark);

// Bytes the durable mark says were fsynced are never cut: a mark naming a
// later segment, or more bytes of this one than its whole transactions
// hold, is corruption.
Status CheckDurableMark(const SegmentInfo& newest, const SegmentScan& scan,
                        const std::optional<DurableMark>& mark);

// Cuts the file open as `fd` to `size` bytes and fdatasyncs it.
Status CutTail(int fd, const std::string& path, uint64_t size);

// The position of the last commit, `last_lsn`, in sealed segment `seg`:
// seal records keep its LSN but not whether it was a lone message's (an
// exclusive position), so the segment's headers are read.
Result<SourcePosition> SealedPosition(const SegmentInfo& seg, Lsn last_lsn);

// What to cut from LOG/schemas.ndjson: its lines of seqs at or past
// `next_seq` (events that never became durable, or were aborted) and any
// torn line. nullopt when there is no such file.
struct SchemaTrim {
  uint64_t size = 0;  // bytes in the file
  uint64_t keep = 0;  // bytes to keep
};
Result<std::optional<SchemaTrim>> PlanSchemaTrim(const std::string& log_dir,
                                                 uint64_t next_seq);

}  // namespace cdc::log::recovery
