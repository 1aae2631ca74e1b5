#include "cdc/log/segment.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cdc/base/coding.h"

namespace cdc::log {

namespace {
constexpr const char* kSegmentSuffix = ".seg";
constexpr size_t kSeqDigits = 20;

bool ParseSegmentName(const std::string& file, uint64_t* seq) {
  if (file.size() != kSeqDigits + 4 ||
      file.compare(kSeqDigits, 4, kSegmentSuffix) != 0)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < kSeqDigits; ++i) {
    if (file[i] < '0' || file[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(file[i] - '0');
  }
  *seq = v;
  return v > 0;
}
}  // namespace

std::string SegmentsDir(const std::string& log_dir) {
  return JoinPath(log_dir, "segments");
}

std::string SegmentFileName(uint64_t base_seq) {
  std::string digits = std::to_string(base_seq);
  return std::string(kSeqDigits - digits.size(), '0') + digits + kSegmentSuffix;
}

std::string SealRecordPath(const std::string& segment_path) {
  return segment_path.substr(0, segment_path.size() - 4) + ".sealed";
}

Result<std::vector<SegmentInfo>> ListSegments(const std::string& log_dir) {
  const std::string dir = SegmentsDir(log_dir);
  CDC_ASSIGN_OR_RETURN(auto names, ListDir(dir));
  std::vector<SegmentInfo> out;
  for (const auto& n : names) {
    uint64_t seq;
    if (!ParseSegmentName(n, &seq)) continue;
    SegmentInfo info;
    info.base_seq = seq;
    info.path = JoinPath(dir, n);
    info.name = "segments/" + n;
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.base_seq < b.base_seq;
  });
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    out[i].sealed = true;
    auto rec = ReadSealRecord(out[i].path);
    if (rec.ok()) out[i].seal = std::move(rec).value();
  }
  return out;
}

Status WriteSealRecord(const std::string& segment_path, const SealRecord& r) {
  nlohmann::ordered_json j;
  j["sha256"] = r.sha256;
  j["bytes"] = r.bytes;
  j["first_seq"] = r.first_seq;
  j["end_seq"] = r.end_seq;
  j["first_lsn"] = FormatLsn(r.first_lsn);
  j["last_lsn"] = FormatLsn(r.last_lsn);
  j["first_time_us"] = r.first_time;
  j["last_time_us"] = r.last_time;
  return WriteFileAtomic(SealRecordPath(segment_path), j.dump() + "\n");
}

Result<SealRecord> ReadSealRecord(const std::string& segment_path) {
  const std::string path = SealRecordPath(segment_path);
  CDC_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  try {
    auto j = nlohmann::json::parse(text);
    SealRecord r;
    r.sha256 = j.at("sha256").get<std::string>();
    r.bytes = j.at("bytes").get<uint64_t>();
    r.first_seq = j.at("first_seq").get<uint64_t>();
    r.end_seq = j.at("end_seq").get<uint64_t>();
    CDC_ASSIGN_OR_RETURN(r.first_lsn,
                         ParseLsn(j.at("first_lsn").get<std::string>()));
    CDC_ASSIGN_OR_RETURN(r.last_lsn,
                         ParseLsn(j.at("last_lsn").get<std::string>()));
    r.first_time = j.at("first_time_us").get<int64_t>();
    r.last_time = j.at("last_time_us").get<int64_t>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption("bad seal record " + path + ": " + e.what());
  }
}

Result<SegmentFile> SegmentFile::Open(const std::string& path) {
  SegmentFile f;
  f.path_ = path;
  CDC_ASSIGN_OR_RETURN(f.fd_, OpenFile(path, O_RDONLY));
  return f;
}

Result<uint64_t> SegmentFile::Size() const {
  off_t end = ::lseek(fd_.fd(), 0, SEEK_END);
  if (end < 0) return ErrnoStatus("seek", path_, errno);
  return static_cast<uint64_t>(end);
}

Result<FrameAt> SegmentFile::ReadHeader(uint64_t off, uint64_t size) const {
  FrameAt at;
  if (off >= size) {
    at.status = FrameStatus::kEnd;
    return at;
  }
  if (size - off < kFrameHeaderSize) {
    at.status = FrameStatus::kTorn;
    return at;
  }
  char buf[kFrameHeaderSize];
  CDC_ASSIGN_OR_RETURN(size_t n,
                       PreadUpTo(fd_.fd(), buf, sizeof buf, off, path_));
  if (n < kFrameHeaderSize) {
    at.status = FrameStatus::kTorn;
    return at;
  }
  HeaderState hs = DecodeHeader(buf, &at.header);
  if (hs != HeaderState::kOk) {
    at.status = FrameStatus::kBadHeader;
    at.detail = DescribeHeaderState(hs, at.header);
    return at;
  }
  at.status = off + at.header.frame_size() > size ? FrameStatus::kTorn
                                                  : FrameStatus::kOk;
  return at;
}

Result<FrameAt> SegmentFile::ReadFrame(uint64_t off, uint64_t size,
                                       std::string* payload) const {
  CDC_ASSIGN_OR_RETURN(FrameAt at, ReadHeader(off, size));
  if (at.status != FrameStatus::kOk) return at;
  char hbuf[kFrameHeaderSize];
  payload->resize(at.header.payload_len);
  CDC_ASSIGN_OR_RETURN(size_t n,
                       PreadUpTo(fd_.fd(), hbuf, sizeof hbuf, off, path_));
  CDC_ASSIGN_OR_RETURN(size_t m,
                       PreadUpTo(fd_.fd(), payload->data(), payload->size(),
                                 off + kFrameHeaderSize, path_));
  if (n < kFrameHeaderSize || m < payload->size()) {
    at.status = FrameStatus::kTorn;  // the file shrank under us
    return at;
  }
  if (!Codec::ChecksumOk(hbuf, *payload, at.header.checksum)) {
    at.status = FrameStatus::kBadChecksum;
    at.detail = "checksum mismatch";
  }
  return at;
}

Result<std::optional<uint64_t>> SegmentFile::FindValidFrameAfter(
    uint64_t off, uint64_t size) const {
  // Slow path, taken only when something is already wrong: look for the
  // magic at every byte and accept the first candidate whose checksum holds.
  constexpr size_t kChunk = 1 << 20;
  std::string buf;
  std::string payload;
  char magic[4];
  PutFixed32(magic, kFrameMagic);
  for (uint64_t pos = off + 1; pos + kFrameHeaderSize <= size;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size - pos));
    buf.resize(want);
    CDC_ASSIGN_OR_RETURN(size_t n,
                         PreadUpTo(fd_.fd(), buf.data(), want, pos, path_));
    buf.resize(n);
    for (size_t i = 0; i + 4 <= n; ++i) {
      if (std::memcmp(buf.data() + i, magic, 4) != 0) continue;
      CDC_ASSIGN_OR_RETURN(FrameAt at, ReadFrame(pos + i, size, &payload));
      if (at.status == FrameStatus::kOk)
        return std::optional<uint64_t>(pos + i);
    }
    if (n < 4) break;
    pos += n - 3;
  }
  return std::optional<uint64_t>();
}

std::string DescribeCorruption(const std::string& segment_name, uint64_t offset,
                               uint64_t first_seq, uint64_t last_seq,
                               const std::string& detail) {
  std::string range = last_seq >= first_seq ? std::to_string(first_seq) + "-" +
                                                  std::to_string(last_seq)
                                            : std::to_string(first_seq) + "-?";
  return "corrupt frame in " + segment_name + " at offset " +
         std::to_string(offset) + " (seq " + range + "): " + detail;
}

}  // namespace cdc::log
