#include "cdc/consume/position.h"

#include <charconv>

#include "cdc/base/time.h"

namespace cdc::consume {

Result<Position> ParsePosition(const std::string& t) {
  Position p;
  auto bad = [&] {
    return Status::Usage("invalid position \"" + t +
                         "\" (use earliest, latest, SEQ, lsn:X/Y or "
                         "time:2026-11-29T07:41:02Z)");
  };
  if (t == "earliest") return p;
  if (t == "latest") {
    p.kind = Position::Kind::kLatest;
    return p;
  }
  if (t.rfind("lsn:", 0) == 0) {
    auto lsn = ParseLsn(t.substr(4));
    if (!lsn.ok()) return Status::Usage(lsn.status().message());
    p.kind = Position::Kind::kLsn;
    p.lsn = *lsn;
    return p;
  }
  if (t.rfind("time:", 0) == 0) {
    auto ts = ParseTimestamp(t.substr(5));
    if (!ts.ok()) return ts.status();
    p.kind = Position::Kind::kTime;
    p.time = *ts;
    return p;
  }
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), seq);
  if (end == t.data() + t.size() &&
      (ec == std::errc::result_out_of_range || seq > kMaxSeq))
    return Status::Usage("invalid position \"" + t + "\": seqs go up to " +
                         std::to_string(kMaxSeq));
  if (ec != std::errc() || end != t.data() + t.size() || seq == 0) return bad();
  p.kind = Position::Kind::kSeq;
  p.seq = seq;
  return p;
}

Status SeekTo(log::LogReader& r, const Position& p) {
  switch (p.kind) {
    case Position::Kind::kEarliest:
      return r.SeekEarliest();
    case Position::Kind::kLatest:
      return r.SeekEnd();
    case Position::Kind::kSeq:
      return r.SeekSeq(p.seq);
    case Position::Kind::kLsn:
      return r.SeekLsn(p.lsn);
    case Position::Kind::kTime:
      return r.SeekTime(p.time);
  }
  return Status::Internal("unknown position kind");
}

Result<uint64_t> ResolvePosition(const std::string& dir, const Position& p) {
  if (p.kind == Position::Kind::kSeq) return p.seq;
  CDC_ASSIGN_OR_RETURN(auto r, log::LogReader::Open(dir));
  CDC_RETURN_IF_ERROR(SeekTo(*r, p));
  return r->next_seq();
}

}  // namespace cdc::consume
