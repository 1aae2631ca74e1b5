#include "cdc/log/recovery.h"

#include <unistd.h>

#include "cdc/base/fs.h"
#include "cdc/base/sha256.h"
#include "cdc/log/schemas.h"

namespace cdc::log::recovery {

Result<SealedEnd> CheckSealedSegments(const std::vector<SegmentInfo>& segs) {
  // Appending after damage would put events where no reader can reach
  // them: the sealed segments must at least agree with their records and
  // follow each other without a gap. A record that is missing is rebuilt;
  // one that is unreadable is corruption.
  SealedEnd end;
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    const SegmentInfo& seg = segs[i];
    const uint64_t next_base = segs[i + 1].base_seq;
    if (seg.seal || !seg.seal_error.empty()) {
      CDC_RETURN_IF_ERROR(CheckRecorded(seg, next_base, &end));
    } else {
      CDC_RETURN_IF_ERROR(Reseal(seg, next_base, &end));
    }
  }
  return end;
}

Status CheckRecorded(const SegmentInfo& seg, uint64_t next_base,
                     SealedEnd* end) {
  auto size = FileSize(seg.path);
  // Removed since the listing: `cdc-log retain` running beside us.
  if (size.status().code() == Code::kNotFound) return Status::OK();
  CDC_RETURN_IF_ERROR(size.status());
  CDC_RETURN_IF_ERROR(CheckSealedSegment(seg, *size, next_base));
  if (seg.seal->last_lsn != 0 || seg.seal->end_seq > seg.base_seq) {
    end->last_lsn = seg.seal->last_lsn;
    end->has_commit = true;
    end->unscanned = seg;
  }
  return Status::OK();
}

Status Reseal(const SegmentInfo& seg, uint64_t next_base, SealedEnd* end) {
  CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
  CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
  CDC_ASSIGN_OR_RETURN(SegmentScan scan,
                       ScanSegment(f, size, seg.base_seq, /*verify=*/true));
  if (scan.txn_end != size || scan.next_seq != next_base)
    return Status::Corruption(DescribeCorruption(
        seg.name, scan.valid_end, scan.next_seq, next_base - 1,
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
  ++end->resealed;
  if (scan.has_commit) {
    end->last_lsn = scan.last_lsn;
    end->has_commit = true;
    end->position = SourcePosition::Of(scan.last_end);
    end->unscanned.reset();  // the position is known
  }
  return Status::OK();
}

Status RemoveStaleSeal(const std::string& log_dir, const SegmentInfo& newest) {
  const std::string stale = SealRecordPath(newest.path);
  if (!PathExists(stale)) return Status::OK();
  if (::unlink(stale.c_str()) != 0) return ErrnoStatus("remove", stale, errno);
  return SyncDir(SegmentsDir(log_dir));
}

Result<Newest> ScanNewest(const std::string& log_dir,
                          const SegmentInfo& newest) {
  Newest n;
  CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(newest.path));
  CDC_ASSIGN_OR_RETURN(n.size, f.Size());
  CDC_ASSIGN_OR_RETURN(n.scan, ScanSegment(f, n.size, newest.base_seq,
                                           /*verify=*/true));
  CDC_ASSIGN_OR_RETURN(n.mark, ReadDurableMark(log_dir));
  CDC_RETURN_IF_ERROR(CheckTornTail(newest, f, n.size, n.scan, n.mark));
  CDC_RETURN_IF_ERROR(CheckDurableMark(newest, n.scan, n.mark));
  return n;
}

Status CheckTornTail(const SegmentInfo& newest, const SegmentFile& f,
                     uint64_t size, const SegmentScan& scan,
                     const std::optional<DurableMark>& mark) {
  if (scan.stop != FrameStatus::kBadHeader &&
      scan.stop != FrameStatus::kBadChecksum)
    return Status::OK();
  // Bytes past the durable mark were never fsynced: a crash or a failed
  // writeback may have left anything there, whatever follows.
  if (BeyondDurable(mark, newest.base_seq, scan.valid_end)) return Status::OK();
  // Garbage at the very end is a write the crash tore; a damaged frame
  // with good frames after it is corruption of acknowledged data.
  CDC_ASSIGN_OR_RETURN(auto later, f.FindValidFrameAfter(scan.valid_end, size));
  if (!later) return Status::OK();
  uint64_t last_seq = scan.next_seq;
  CDC_ASSIGN_OR_RETURN(FrameAt next, f.ReadHeader(*later, size));
  if (next.header.first_seq > 0) last_seq = next.header.first_seq - 1;
  return Status::Corruption(DescribeCorruption(
      newest.name, scan.valid_end, scan.next_seq, last_seq, scan.stop_detail));
}

Status CheckDurableMark(const SegmentInfo& newest, const SegmentScan& scan,
                        const std::optional<DurableMark>& mark) {
  // Bytes below the durable mark were fsynced: no crash tore them, and
  // their transactions may have been acknowledged. Never cut them.
  if (!mark) return Status::OK();
  if (mark->segment > newest.base_seq)
    return Status::Corruption(
        "the durable mark names " + SegmentDisplayName(mark->segment) +
        ", which is missing (the newest segment is " + newest.name + ")");
  if (mark->segment == newest.base_seq && scan.txn_end < mark->bytes)
    return Status::Corruption(DescribeCorruption(
        newest.name, scan.txn_end, scan.next_seq, 0,
        (scan.stop == FrameStatus::kEnd    ? std::string("segment ends")
         : scan.stop == FrameStatus::kTorn ? std::string("truncated frame")
                                           : scan.stop_detail) +
            " below the " + std::to_string(mark->bytes) +
            " bytes known durable (refusing to cut acknowledged data)"));
  return Status::OK();
}

Status CutTail(int fd, const std::string& path, uint64_t size) {
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
    return ErrnoStatus("truncate", path, errno);
  return SyncFile(fd, path);
}

Result<SourcePosition> SealedPosition(const SegmentInfo& seg, Lsn last_lsn) {
  CDC_ASSIGN_OR_RETURN(SegmentFile f, SegmentFile::Open(seg.path));
  CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
  CDC_ASSIGN_OR_RETURN(SegmentScan scan,
                       ScanSegment(f, size, seg.base_seq, /*verify=*/false));
  if (!scan.has_commit || scan.last_lsn != last_lsn)
    return Status::Corruption(DescribeCorruption(
        seg.name, scan.txn_end, scan.next_seq, scan.next_seq,
        "sealed segment's frames disagree with its seal record"));
  return SourcePosition::Of(scan.last_end);
}

Result<std::optional<SchemaTrim>> PlanSchemaTrim(const std::string& log_dir,
                                                 uint64_t next_seq) {
  uint64_t valid = 0;
  CDC_ASSIGN_OR_RETURN(std::vector<SchemaEntry> entries,
                       ReadSchemas(log_dir, &valid));
  auto size = FileSize(SchemasPath(log_dir));
  if (size.status().code() == Code::kNotFound)
    return std::optional<SchemaTrim>();
  CDC_RETURN_IF_ERROR(size.status());
  // Lines of events that never became durable (or were aborted) come last.
  SchemaTrim trim{*size, valid};
  for (size_t i = entries.size(); i > 0 && entries[i - 1].seq >= next_seq; --i)
    trim.keep -= SchemaLine(entries[i - 1].seq, entries[i - 1].stored).size();
  return std::optional<SchemaTrim>(trim);
}

}  // namespace cdc::log::recovery
