// The frame: the unit of the on-disk log (see man/cdc-log-format.5).
//
//   offset size field
//        0    4 magic "CDCF"
//        4    1 format version (1 or 2)
//        5    1 flags (bit 0: TXN_END)
//        6    1 codec (0 none, 1 zstd)
//        7    1 reserved, 0
//        8    8 first seq (of the first event in the frame)
//       16    4 event count
//       20    4 payload length (bytes stored after the header)
//       24    4 raw length (bytes after decompression)
//       28    4 version 2: transaction table length (0: none); version 1: 0
//       32    8 commit LSN of the source transaction
//       40    8 commit time, µs since the Unix epoch
//       48    8 source transaction id
//       56    8 XXH3-64 of bytes 0..55 and the payload
//
// All integers little-endian. The payload holds `event count` NDJSON lines
// (each ending in '\n') in the stored form: the native event without "seq"
// and "last", which readers add. A frame with TXN_END ends a source
// transaction; its commit fields are authoritative. A frame with no events
// and TXN_END records a source position only (keepalive progress).
//
// Version 2 adds the grouped frame: a TXN_END frame whose transaction
// table is not empty holds several whole transactions (those one write
// window committed). The payload is then the table, stored as is, followed
// by the (compressed) event lines; the checksum covers both. The table is
// a varint count of transactions, then per transaction its event count
// and the zigzag varint deltas of its commit LSN, commit time and xid from
// the previous entry's (the first's from 0). The header's commit fields
// are those of the last transaction; every transaction holds events.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::log {

inline constexpr uint32_t kFrameMagic = 0x46434443;  // "CDCF" on disk
// The version this build writes; it reads kFormatVersion1 frames too.
inline constexpr uint8_t kFormatVersion = 2;
inline constexpr uint8_t kFormatVersion1 = 1;
inline constexpr size_t kFrameHeaderSize = 64;
inline constexpr uint8_t kFlagTxnEnd = 1;
inline constexpr uint8_t kCodecNone = 0;
inline constexpr uint8_t kCodecZstd = 1;
// Sanity bound on a frame's stored and raw size; a header claiming more is
// not a header.
inline constexpr uint32_t kMaxFrameBytes = 1u << 30;
// Bound on a transaction table (a grouped frame holds at most a frame's
// worth of events, each at least 3 bytes, at most 31 table bytes each).
inline constexpr uint32_t kMaxTableBytes = 16u << 20;

struct FrameHeader {
  uint8_t version = kFormatVersion;
  uint8_t flags = 0;
  uint8_t codec = kCodecZstd;
  uint64_t first_seq = 0;
  uint32_t event_count = 0;
  uint32_t payload_len = 0;
  uint32_t raw_len = 0;
  uint64_t commit_lsn = 0;
  int64_t commit_time = 0;
  uint64_t xid = 0;
  uint64_t checksum = 0;
  uint32_t table_len = 0;  // version 2: bytes of transaction table

  bool txn_end() const { return (flags & kFlagTxnEnd) != 0; }
  // Holds several whole transactions, listed in its table.
  bool grouped() const { return table_len > 0; }
  uint64_t end_seq() const { return first_seq + event_count; }  // exclusive
  uint64_t frame_size() const { return kFrameHeaderSize + payload_len; }
};

// Why a header could not be used.
enum class HeaderState {
  kOk,
  kBadMagic,    // not the start of a frame
  kBadVersion,  // a frame of a format this build does not read
  kBadFields,   // impossible lengths, codec or flags
};

// Decodes the 64 header bytes at `p`; checks magic, version and field
// sanity but not the checksum (which needs the payload).
HeaderState DecodeHeader(const char* p, FrameHeader* h);
std::string DescribeHeaderState(HeaderState s, const FrameHeader& h);

// How the writer compresses a frame, by its raw size. zstd's fixed cost
// per frame, not its speed per byte, dominates small frames: for a
// 450-byte single-row transaction it takes ~6 µs at level 1 (2.1x smaller)
// and ~1.7 µs at level -1 (1.65x), more than the rest of capture's work on
// that transaction. So frames under kStoredFrameBytes are stored as they
// are (codec none); frames under kSmallFrameBytes get level -1, which skips
// entropy coding of literals; larger ones get the configured level, whose
// ratio pays for its speed there (15.9x against 9.9x at -1 on 32 KiB of
// typical events).
inline constexpr size_t kStoredFrameBytes = 1024;
inline constexpr size_t kSmallFrameBytes = 4096;
// Frames this large (a large event has one of its own) are compressed in
// pieces, so the output buffer grows only by what compression produced.
inline constexpr size_t kLargeFrameBytes = 4u << 20;

// One transaction of a grouped frame.
struct TxnEntry {
  uint32_t events = 0;
  uint64_t commit_lsn = 0;
  int64_t commit_time = 0;
  uint64_t xid = 0;
  bool operator==(const TxnEntry&) const = default;
};

// Appends the table of `txns` (see above) to `out`.
void EncodeTxnTable(const std::vector<TxnEntry>& txns, std::string* out);
// Decodes the table of grouped frame `h` (the first h.table_len bytes of
// its payload) into `txns`. Returns what is wrong, or an empty string: the
// table must be whole, list transactions with events in commit LSN order
// whose counts add up to the header's, and end with the header's commit.
std::string DecodeTxnTable(std::string_view table, const FrameHeader& h,
                           std::vector<TxnEntry>* txns);

// Checks a decompressed payload holds exactly `count` lines, each ending in
// '\n' and shaped like a JSON object ('{' ... '}'). Returns what is wrong,
// or an empty string. Readers check this before handing events out: a frame
// can carry a valid checksum over a payload that breaks this (a writer bug,
// or a crafted file), and that is corruption, never a crash. With `ends`,
// also records where each line ends (the offset just past its '\n'), so
// that readers split the lines without searching them again.
std::string CheckEventLines(std::string_view raw, uint32_t count,
                            std::vector<uint32_t>* ends = nullptr);

// Reusable compression contexts; one per thread. The zstd state stays in
// frame.cpp, so only the log library depends on zstd.
class Codec {
 public:
  explicit Codec(int level = 1);
  ~Codec();
  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;

  // Appends a complete frame (header + compressed payload) to `out`. `h`
  // supplies version, flags, seq, count and commit fields; lengths, codec
  // and checksum are filled in. A non-empty `table` (version 2 only) makes
  // it a grouped frame.
  void EncodeFrame(FrameHeader h, std::string_view raw, std::string* out) {
    EncodeFrame(h, std::string_view(), raw, out);
  }
  void EncodeFrame(FrameHeader h, std::string_view table, std::string_view raw,
                   std::string* out);

  // Most bytes EncodeFrame can append for `raw_len` raw bytes.
  static size_t EncodedBound(size_t raw_len, size_t table_len = 0);
  // True if the checksum over `header_bytes` (64) and `payload` matches.
  static bool ChecksumOk(const char* header_bytes, std::string_view payload,
                         uint64_t expected);
  // Decompresses a verified payload (a grouped frame's table included) into
  // `raw` (replacing its contents): the event lines.
  Status Decompress(const FrameHeader& h, std::string_view payload,
                    std::string* raw);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> ctx_;
};

}  // namespace cdc::log
