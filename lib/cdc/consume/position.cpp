#include "cdc/consume/position.h"

#include <charconv>

#include "cdc/base/time.h"

namespace cdc::consume {

Result<Position> ParsePosition(const std::string& t) {
  Position p;
  auto bad = [&] {
    return Status::Usage("invalid position \"" + t +
                         "\" (use earliest, latest, now, SEQ or seq:SEQ, -N, "
                         "lsn:X/Y, time:2026-11-29T07:41:02Z or time:-1h)");
  };
  if (t == "earliest") return p;
  if (t == "latest" || t == "now") {
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
  if (t.rfind("time:-", 0) == 0) {
    // A duration back from now: 90s, 15m, 1h, 2d, 1w (a number alone is
    // seconds).
    const std::string d = t.substr(6);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), n);
    const std::string unit(end, d.data() + d.size());
    int64_t scale = 0;
    if (unit.empty() || unit == "s") scale = 1;
    if (unit == "m") scale = 60;
    if (unit == "h") scale = 3600;
    if (unit == "d") scale = 86400;
    if (unit == "w") scale = 7 * 86400;
    if (ec != std::errc() || end == d.data() || scale == 0 ||
        n > static_cast<uint64_t>(INT64_MAX / 1000000 / scale))
      return Status::Usage("invalid position \"" + t +
                           "\": time:- takes a duration such as 90s, 15m, "
                           "1h, 2d or 1w");
    p.kind = Position::Kind::kTime;
    p.time = NowMicros() - static_cast<int64_t>(n) * scale * 1000000;
    return p;
  }
  if (t.rfind("time:", 0) == 0) {
    auto ts = ParseTimestamp(t.substr(5));
    if (!ts.ok()) return ts.status();
    p.kind = Position::Kind::kTime;
    p.time = *ts;
    return p;
  }
  // seq:N is N, spelled like the other kinds (a count back, -N, has no
  // such form).
  const bool prefixed = t.rfind("seq:", 0) == 0;
  const bool before_end = !prefixed && !t.empty() && t[0] == '-';
  const char* digits = t.data() + (prefixed ? 4 : before_end ? 1 : 0);
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(digits, t.data() + t.size(), seq);
  if (end == t.data() + t.size() &&
      (ec == std::errc::result_out_of_range || seq > kMaxSeq))
    return Status::Usage("invalid position \"" + t + "\": seqs go up to " +
                         std::to_string(kMaxSeq));
  if (ec != std::errc() || end != t.data() + t.size() || end == digits ||
      (seq == 0 && !before_end))
    return bad();
  p.kind = before_end ? Position::Kind::kBeforeEnd : Position::Kind::kSeq;
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
    case Position::Kind::kBeforeEnd: {
      // The last p.seq events, or all that are retained when fewer are.
      CDC_RETURN_IF_ERROR(r.SeekEarliest());
      const uint64_t first = r.next_seq();
      CDC_RETURN_IF_ERROR(r.SeekEnd());
      const uint64_t end = r.next_seq();
      if (end - first <= p.seq) return r.SeekEarliest();
      return r.SeekSeq(end - p.seq);
    }
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
