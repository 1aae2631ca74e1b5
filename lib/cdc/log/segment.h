// Segment files, their seal records, and frame-level access to one segment.
//
// A log directory holds segments/<20-digit first seq>.seg. Only the newest
// segment is written; every older one is sealed: it never changes again and
// has a seal record segments/<name>.sealed (JSON: SHA-256, size, seq, LSN and
// time range) written atomically when it was sealed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/fs.h"
#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/log/frame.h"

namespace cdc::log {

struct SealRecord {
  std::string sha256;  // hex
  uint64_t bytes = 0;
  uint64_t first_seq = 0;
  uint64_t end_seq = 0;  // exclusive: the next segment's first seq
  Lsn first_lsn = 0;     // commit LSN of the first transaction end
  Lsn last_lsn = 0;
  int64_t first_time = 0;
  int64_t last_time = 0;
};

struct SegmentInfo {
  uint64_t base_seq = 0;  // first seq it holds (its name)
  std::string path;
  std::string name;  // "segments/<file>", for messages
  bool sealed = false;
  std::optional<SealRecord> seal;
  std::string seal_error;  // the record exists but cannot be used: why
};

// LOG/segments. A path only: ListSegmentFiles and the writer take it
// through LogSubdir (log_dir.h), which refuses a planted link.
inline constexpr const char* kSegmentsDir = "segments";
std::string SegmentsDir(const std::string& log_dir);
std::string SegmentFileName(uint64_t base_seq);
// "segments/<file>", as messages name a segment.
std::string SegmentDisplayName(uint64_t base_seq);
std::string SealRecordPath(const std::string& segment_path);

// Segments sorted by first seq. Every segment but the last is sealed.
// Stray files (temporaries, seal records without a segment) are ignored.
// The seal record of each sealed segment is read: `seal` when it is usable,
// `seal_error` when it exists but is not (which is corruption, never a
// record to rebuild), neither when it is missing.
Result<std::vector<SegmentInfo>> ListSegments(const std::string& log_dir);
// The same without reading seal records (names only; cheap). Corruption
// when LOG/segments is a symbolic link or not a directory (LogSubdir).
Result<std::vector<SegmentInfo>> ListSegmentFiles(const std::string& log_dir);

Status WriteSealRecord(const std::string& segment_path, const SealRecord& r);
// NotFound when there is no record; Corruption when it is not a complete,
// well-typed record.
Result<SealRecord> ReadSealRecord(const std::string& segment_path);

// What the directory says about a sealed segment `seg` of `size` bytes
// whose successor is named `next_base`: Corruption, naming the files, when
// its seal record is unusable, or disagrees with its name, its size or the
// name of the next segment (a segment missing in between, a truncated or
// extended file). OK when the record agrees or is missing (a crash between
// sealing and recording; the writer rebuilds it).
Status CheckSealedSegment(const SegmentInfo& seg, uint64_t size,
                          uint64_t next_base);

enum class FrameStatus {
  kOk,
  kEnd,          // offset is exactly the end of the file
  kTorn,         // header or payload runs past the end of the file
  kBadHeader,    // bytes that are not a frame header
  kBadChecksum,  // a whole frame whose checksum does not match
};

struct FrameAt {
  FrameStatus status = FrameStatus::kEnd;
  FrameHeader header;
  std::string detail;  // what is wrong, for kBadHeader / kBadChecksum
};

// Read access to one segment file. Not thread-safe; cheap to open.
class SegmentFile {
 public:
  static Result<SegmentFile> Open(const std::string& path);

  Result<uint64_t> Size() const;
  // The header at `off` (payload not read, checksum not checked). `size` is
  // the file size to judge against.
  Result<FrameAt> ReadHeader(uint64_t off, uint64_t size) const;
  // The whole frame at `off`: header and payload, checksum verified.
  Result<FrameAt> ReadFrame(uint64_t off, uint64_t size,
                            std::string* payload) const;
  // What ReadHeader says of `bytes`, read at `off` (fewer than a header's
  // when the file ended): for readers that read frames in larger blocks.
  static FrameAt HeaderFrom(std::string_view bytes, uint64_t off,
                            uint64_t size);
  // What ReadFrame says of `frame`, all of the frame at `off` that the
  // file holds below `size`; `*payload` points into it.
  static FrameAt FrameFrom(std::string_view frame, uint64_t off, uint64_t size,
                           std::string_view* payload);
  // The transaction table of grouped frame `h` at `off` (not checked
  // against the checksum: callers that act on it read the frame later).
  Status ReadTable(uint64_t off, const FrameHeader& h,
                   std::string* table) const;
  // Offset of the first fully valid frame that starts after `off`, if any;
  // used to tell a torn tail (nothing valid follows) from corruption.
  Result<std::optional<uint64_t>> FindValidFrameAfter(uint64_t off,
                                                      uint64_t size) const;
  const std::string& path() const { return path_; }
  int fd() const { return fd_.fd(); }

 private:
  std::string path_;
  FileHandle fd_;
};

// How far the log is known durable: the writer records, after an fdatasync
// completes (at most every WriterOptions::durable_mark_ms, and when it
// closes), that the first `bytes` bytes of segment `segment` (its first
// seq) are on disk and end at a transaction end. A crash can only tear
// what was written after the last fdatasync, so damage below the mark is
// corruption of acknowledged data, never a torn tail to cut.
struct DurableMark {
  uint64_t segment = 0;
  uint64_t bytes = 0;
};
// LOG/durable: nullopt when there is none (a log not yet synced, or made
// before marks); Corruption when it cannot be read.
Result<std::optional<DurableMark>> ReadDurableMark(const std::string& log_dir);
Status WriteDurableMark(const std::string& log_dir, const DurableMark& m);

// Whether damage at `offset` of the newest segment (first seq `base_seq`)
// lies beyond what was ever fsynced: the mark names this segment below
// `offset`, or an older one. No fdatasync covered those bytes, so nothing
// in them was acknowledged, and a crash or a failed writeback may have left
// anything there (a hole of zeros before frames written later, say): it
// is a torn tail, cut by the next writer, whatever follows it. Without a
// mark (a log never synced, or made before marks) nothing is known, and
// damage followed by a valid frame stays corruption.
bool BeyondDurable(const std::optional<DurableMark>& mark, uint64_t base_seq,
                   uint64_t offset);

// "corrupt frame in segments/X.seg at offset N (seq A-B): detail"
std::string DescribeCorruption(const std::string& segment_name, uint64_t offset,
                               uint64_t first_seq, uint64_t last_seq,
                               const std::string& detail);

}  // namespace cdc::log
