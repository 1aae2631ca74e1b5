#include "cdc/log/frame.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "cdc/base/coding.h"

namespace cdc::log {

namespace {

constexpr size_t kChecksumOffset = 56;

uint64_t FrameChecksum(const char* header_bytes, std::string_view payload) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header_bytes, kChecksumOffset);
  XXH3_64bits_update(&state, payload.data(), payload.size());
  return XXH3_64bits_digest(&state);
}

void EncodeHeader(const FrameHeader& h, char* p) {
  PutFixed32(p, kFrameMagic);
  p[4] = static_cast<char>(h.version);
  p[5] = static_cast<char>(h.flags);
  p[6] = static_cast<char>(h.codec);
  p[7] = 0;
  PutFixed64(p + 8, h.first_seq);
  PutFixed32(p + 16, h.event_count);
  PutFixed32(p + 20, h.payload_len);
  PutFixed32(p + 24, h.raw_len);
  PutFixed32(p + 28, h.table_len);
  PutFixed64(p + 32, h.commit_lsn);
  PutFixed64(p + 40, static_cast<uint64_t>(h.commit_time));
  PutFixed64(p + 48, h.xid);
  PutFixed64(p + 56, h.checksum);
}

ZSTD_CCtx* NewCompressor(int level) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  // A 256 KiB hash table (it stays in L2) finds the long matches of
  // row-shaped NDJSON sooner than a smaller one: on 45 KiB frames, best of
  // 7, 1419 MB/s against 1043 MB/s with 2^12 entries on bench/capture's
  // events, and 415 against 387 MB/s on bench/log's, at the same ratio.
  ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, 16);
  ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 18);
  // The frame header already holds the raw length; leaving it (and the
  // dictionary id) out of zstd's own header trims the per-frame cost.
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0);
  return c;
}

}  // namespace

HeaderState DecodeHeader(const char* p, FrameHeader* h) {
  if (GetFixed32(p) != kFrameMagic) return HeaderState::kBadMagic;
  h->version = static_cast<uint8_t>(p[4]);
  h->flags = static_cast<uint8_t>(p[5]);
  h->codec = static_cast<uint8_t>(p[6]);
  h->first_seq = GetFixed64(p + 8);
  h->event_count = GetFixed32(p + 16);
  h->payload_len = GetFixed32(p + 20);
  h->raw_len = GetFixed32(p + 24);
  h->commit_lsn = GetFixed64(p + 32);
  h->commit_time = static_cast<int64_t>(GetFixed64(p + 40));
  h->xid = GetFixed64(p + 48);
  h->checksum = GetFixed64(p + 56);
  h->table_len = GetFixed32(p + 28);
  if (h->version != kFormatVersion && h->version != kFormatVersion1)
    return HeaderState::kBadVersion;
  if (p[7] != 0 || (h->version == kFormatVersion1 && h->table_len != 0) ||
      (h->flags & ~kFlagTxnEnd) || h->codec > kCodecZstd ||
      h->payload_len > kMaxFrameBytes || h->raw_len > kMaxFrameBytes ||
      h->first_seq == 0 || (h->event_count > 0 && h->raw_len == 0) ||
      h->table_len > kMaxTableBytes || h->table_len > h->payload_len ||
      (h->codec == kCodecNone && h->raw_len != h->payload_len - h->table_len))
    return HeaderState::kBadFields;
  if (h->grouped() && (!h->txn_end() || h->event_count == 0))
    return HeaderState::kBadFields;
  return HeaderState::kOk;
}

std::string DescribeHeaderState(HeaderState s, const FrameHeader& h) {
  switch (s) {
    case HeaderState::kOk:
      return "ok";
    case HeaderState::kBadMagic:
      return "bad frame magic";
    case HeaderState::kBadVersion:
      return "frame format version " + std::to_string(h.version) +
             " is not supported (this build reads versions " +
             std::to_string(kFormatVersion1) + " and " +
             std::to_string(kFormatVersion) + ")";
    case HeaderState::kBadFields:
      return "impossible frame header fields";
  }
  return "bad header";
}

namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto b = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    if (shift == 63 && b > 1) return false;
    r |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) {
      *v = r;
      return true;
    }
  }
  return false;
}

uint64_t ZigZag(uint64_t now, uint64_t prev) {
  const auto d = static_cast<int64_t>(now - prev);
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}

uint64_t UnZigZag(uint64_t z, uint64_t prev) {
  return prev + ((z >> 1) ^ (~(z & 1) + 1));
}

}  // namespace

void EncodeTxnTable(const std::vector<TxnEntry>& txns, std::string* out) {
  PutVarint(txns.size(), out);
  TxnEntry prev;
  for (const TxnEntry& t : txns) {
    PutVarint(t.events, out);
    PutVarint(ZigZag(t.commit_lsn, prev.commit_lsn), out);
    PutVarint(ZigZag(static_cast<uint64_t>(t.commit_time),
                     static_cast<uint64_t>(prev.commit_time)),
              out);
    PutVarint(ZigZag(t.xid, prev.xid), out);
    prev = t;
  }
}

std::string DecodeTxnTable(std::string_view table, const FrameHeader& h,
                           std::vector<TxnEntry>* txns) {
  txns->clear();
  uint64_t n = 0;
  if (!GetVarint(&table, &n) || n == 0 || n > h.event_count)
    return "bad transaction table count";
  txns->reserve(n);
  TxnEntry prev;
  uint64_t events = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t count, lsn, time, xid;
    if (!GetVarint(&table, &count) || !GetVarint(&table, &lsn) ||
        !GetVarint(&table, &time) || !GetVarint(&table, &xid))
      return "transaction table ends early";
    TxnEntry t;
    t.events = static_cast<uint32_t>(count);
    t.commit_lsn = UnZigZag(lsn, prev.commit_lsn);
    t.commit_time = static_cast<int64_t>(
        UnZigZag(time, static_cast<uint64_t>(prev.commit_time)));
    t.xid = UnZigZag(xid, prev.xid);
    if (count == 0 || count > h.event_count)
      return "transaction " + std::to_string(i) + " of the table has " +
             std::to_string(count) + " events";
    if (i > 0 && t.commit_lsn < prev.commit_lsn)
      return "transaction table goes back from commit LSN " +
             std::to_string(prev.commit_lsn) + " to " +
             std::to_string(t.commit_lsn);
    events += count;
    txns->push_back(t);
    prev = t;
  }
  if (!table.empty()) return "transaction table has bytes after its end";
  if (events != h.event_count)
    return "transaction table holds " + std::to_string(events) +
           " events, header says " + std::to_string(h.event_count);
  if (prev.commit_lsn != h.commit_lsn || prev.commit_time != h.commit_time ||
      prev.xid != h.xid)
    return "transaction table does not end with the header's commit";
  return "";
}

std::string CheckEventLines(std::string_view raw, uint32_t count,
                            std::vector<uint32_t>* ends) {
  // kMaxFrameBytes keeps every offset within 32 bits.
  if (raw.size() > kMaxFrameBytes) return "payload larger than a frame";
  if (ends != nullptr) {
    ends->clear();
    ends->reserve(count);
  }
  size_t pos = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const void* found =
        pos < raw.size() ? std::memchr(raw.data() + pos, '\n', raw.size() - pos)
                         : nullptr;
    if (found == nullptr)
      return pos == raw.size()
                 ? "payload holds " + std::to_string(i) +
                       " events, header says " + std::to_string(count)
                 : "event " + std::to_string(i) + " has no final newline";
    const size_t nl =
        static_cast<size_t>(static_cast<const char*>(found) - raw.data());
    if (nl - pos < 2 || raw[pos] != '{' || raw[nl - 1] != '}')
      return "event " + std::to_string(i) + " is not a JSON object";
    pos = nl + 1;
    if (ends != nullptr) ends->push_back(static_cast<uint32_t>(pos));
  }
  if (pos != raw.size()) return "payload has bytes after its last event";
  return "";
}

struct Codec::Contexts {
  explicit Contexts(int level)
      : cctx(NewCompressor(level)),
        small_cctx(ZSTD_createCCtx()),
        small_level(std::min(level, -1)),
        dctx(ZSTD_createDCtx()) {}
  ~Contexts() {
    ZSTD_freeCCtx(cctx);
    ZSTD_freeCCtx(small_cctx);
    ZSTD_freeDCtx(dctx);
  }
  Contexts(const Contexts&) = delete;
  Contexts& operator=(const Contexts&) = delete;

  ZSTD_CCtx* cctx;        // frames of kSmallFrameBytes or more
  ZSTD_CCtx* small_cctx;  // smaller frames, at small_level
  int small_level;
  ZSTD_DCtx* dctx;
};

Codec::Codec(int level) : ctx_(std::make_unique<Contexts>(level)) {}

Codec::~Codec() = default;

size_t Codec::EncodedBound(size_t raw_len, size_t table_len) {
  return kFrameHeaderSize + table_len + ZSTD_compressBound(raw_len);
}

namespace {

// Compresses a large payload in pieces, growing `out` by what zstd
// produced: resizing it to the whole compress bound first would touch (and
// make resident) as many bytes as the raw payload has. Returns the
// compressed size, or 0 when it is not smaller than the input.
size_t CompressLarge(ZSTD_CCtx* cctx, std::string_view raw, std::string* out) {
  constexpr size_t kPiece = 1 << 20;
  const size_t start = out->size();
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
  ZSTD_inBuffer in{raw.data(), raw.size(), 0};
  for (;;) {
    const size_t at = out->size();
    if (at - start >= raw.size()) break;  // not worth it: store as is
    out->resize(at + kPiece);
    ZSTD_outBuffer o{out->data() + at, kPiece, 0};
    const size_t left = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
    out->resize(at + o.pos);
    if (ZSTD_isError(left)) break;
    if (left == 0) return out->size() - start;
  }
  out->resize(start);
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
  return 0;
}

}  // namespace

void Codec::EncodeFrame(FrameHeader h, std::string_view table,
                        std::string_view raw, std::string* out) {
  const size_t start = out->size();
  const size_t head = kFrameHeaderSize + table.size();
  size_t n = 0;
  char* payload = nullptr;
  if (raw.size() >= kLargeFrameBytes) {
    out->resize(start + head);
    n = CompressLarge(ctx_->cctx, raw, out);
    if (n == 0 || n >= raw.size()) {
      out->resize(start + head + raw.size());
      n = 0;
    }
    payload = out->data() + start + head;
  } else {
    const size_t bound = ZSTD_compressBound(raw.size());
    out->resize(start + head + bound);
    payload = out->data() + start + head;
    if (raw.size() >= kSmallFrameBytes) {
      n = ZSTD_compress2(ctx_->cctx, payload, bound, raw.data(), raw.size());
    } else if (raw.size() >= kStoredFrameBytes) {
      // The simple API sizes zstd's tables to the input, so it resets the
      // least state per frame (~1.7 µs for 450 bytes against ~2.0).
      n = ZSTD_compressCCtx(ctx_->small_cctx, payload, bound, raw.data(),
                            raw.size(), ctx_->small_level);
    }
  }
  if (n == 0 || ZSTD_isError(n) || n >= raw.size()) {
    // Small, incompressible or empty: store as is; never fail a write for
    // this.
    h.codec = kCodecNone;
    std::memcpy(payload, raw.data(), raw.size());
    n = raw.size();
  } else {
    h.codec = kCodecZstd;
  }
  if (h.version != kFormatVersion1) h.version = kFormatVersion;
  h.table_len = static_cast<uint32_t>(table.size());
  h.payload_len = static_cast<uint32_t>(table.size() + n);
  h.raw_len = static_cast<uint32_t>(raw.size());
  h.checksum = 0;
  char* hp = out->data() + start;
  if (!table.empty())
    std::memcpy(hp + kFrameHeaderSize, table.data(), table.size());
  EncodeHeader(h, hp);
  PutFixed64(hp + kChecksumOffset,
             FrameChecksum(
                 hp, std::string_view(hp + kFrameHeaderSize, h.payload_len)));
  out->resize(start + head + n);
}

bool Codec::ChecksumOk(const char* header_bytes, std::string_view payload,
                       uint64_t expected) {
  return FrameChecksum(header_bytes, payload) == expected;
}

Status Codec::Decompress(const FrameHeader& h, std::string_view payload,
                         std::string* raw) {
  if (payload.size() < h.table_len)
    return Status::Corruption("payload shorter than its transaction table");
  payload.remove_prefix(h.table_len);
  if (h.codec == kCodecNone) {
    raw->assign(payload.data(), payload.size());
    return Status::OK();
  }
  raw->resize(h.raw_len);
  size_t n = ZSTD_decompressDCtx(ctx_->dctx, raw->data(), raw->size(),
                                 payload.data(), payload.size());
  if (ZSTD_isError(n))
    return Status::Corruption(std::string("zstd: ") + ZSTD_getErrorName(n));
  if (n != h.raw_len)
    return Status::Corruption("decompressed " + std::to_string(n) +
                              " bytes, header says " +
                              std::to_string(h.raw_len));
  return Status::OK();
}

}  // namespace cdc::log
