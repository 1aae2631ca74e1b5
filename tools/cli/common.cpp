#include "common.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cdc/base/time.h"
#include "cdc/base/version.h"
#include "cdc/cli/cli.h"

namespace cdc::tools {

std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  app.set_version_flag("--version",
                       std::string(app.get_name()) + " (cdc) " + kVersion);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return cli::Report(app.get_name(), Status::Usage(e.what()));
  }
  return std::nullopt;
}

void AddLogOption(CLI::App& app, std::string* dir) {
  app.add_option("--log", *dir, "Log directory")
      ->envname("CDC_LOG")
      ->required()
      ->type_name("DIR");
}

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

namespace {
Result<uint64_t> ParseScaled(const std::string& t, const char* units,
                             const uint64_t* scale, const char* what,
                             const char* hint) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  size_t rest = static_cast<size_t>(end - t.data());
  if (ec == std::errc::result_out_of_range && t.size() - rest <= 1)
    return Status::Usage(std::string(what) + " \"" + t + "\" is too large");
  if (ec != std::errc() || rest == 0 || t.size() - rest > 1)
    return Status::Usage("invalid " + std::string(what) + " \"" + t + "\"");
  const char* u = rest == t.size() ? units : std::strchr(units + 1, t.back());
  if (u == nullptr || t.back() == '\0')
    return Status::Usage("invalid " + std::string(what) + " \"" + t +
                         "\" (units: " + hint + ")");
  const uint64_t m = scale[u - units];
  if (v > UINT64_MAX / m)
    return Status::Usage(std::string(what) + " \"" + t + "\" is too large");
  return v * m;
}
}  // namespace

Result<uint64_t> ParseSize(const std::string& t) {
  static const uint64_t kScale[] = {1,          1ull << 10, 1ull << 20,
                                    1ull << 30, 1ull << 40, 1ull << 10,
                                    1ull << 20, 1ull << 30};
  // index 0 is "no unit"; units map onto kScale[1..]
  static const char* kUnits = "_kMGTKmg";
  return ParseScaled(t, kUnits, kScale, "size", "k, M, G, T");
}

Result<int64_t> ParseDuration(const std::string& t) {
  static const uint64_t kScale[] = {1000000ull,     1000000ull,
                                    60000000ull,    3600000000ull,
                                    86400000000ull, 604800000000ull};
  static const char* kUnits = "_smhdw";
  CDC_ASSIGN_OR_RETURN(
      uint64_t v, ParseScaled(t, kUnits, kScale, "duration", "s, m, h, d, w"));
  // As µs it must fit the signed clock arithmetic it is used in: a wrapped
  // (negative) age limit would make every segment "too old".
  if (v > static_cast<uint64_t>(INT64_MAX))
    return Status::Usage("duration \"" + t + "\" is too large");
  return static_cast<int64_t>(v);
}

CLI::Validator DurationFlag(double min, bool exclusive) {
  return CLI::Validator(
      [min, exclusive](std::string& in) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(in, &used);
          if (used != in.size()) return "not a number: " + in;
        } catch (const std::exception&) {
          return "not a number: " + in;
        }
        if (!std::isfinite(v) || v < min || (exclusive && v == min) ||
            v > kMaxFlagDuration) {
          char range[96];
          snprintf(range, sizeof range, "%s %g and at most %g",
                   exclusive ? "above" : "at least", min, kMaxFlagDuration);
          return "value " + in + " out of range: must be " + range;
        }
        return std::string();
      },
      "");
}

std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump();
}

}  // namespace cdc::tools
