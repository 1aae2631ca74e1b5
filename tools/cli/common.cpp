#include "common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"
#include "cdc/base/version.h"
#include "cdc/cli/cli.h"

namespace cdc::tools {

std::string OptionName(const CLI::Option& opt) {
  std::string name = opt.get_name();
  // A hidden option (an earlier flag name) has no name for CLI11.
  if (name.empty() && !opt.get_lnames().empty())
    name = "--" + opt.get_lnames()[0];
  return name;
}

namespace {

// CLI11 reads a config file line by line with no limit: /dev/zero or a FIFO
// would grow memory or hang. Look at the file first (following a symlink:
// the operator named it).
Status CheckConfigFile(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    std::string path;
    if (a == "--config" && i + 1 < argc)
      path = argv[i + 1];
    else if (a.rfind("--config=", 0) == 0)
      path = std::string(a.substr(9));
    else
      continue;
    if (path.empty()) continue;  // reported as an empty value
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;  // CLI11 reports a missing file (64)
    FileHandle f(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0) return ErrnoStatus("stat", path, errno);
    if (!S_ISREG(st.st_mode))
      return Status::Config("--config " + path + ": not a regular file");
    if (static_cast<uint64_t>(st.st_size) > kMaxConfigBytes)
      return Status::Config("--config " + path + ": larger than " +
                            std::to_string(kMaxConfigBytes) + " bytes");
  }
  return Status::OK();
}

// An option given an empty value ('' on the command line, "" in a config
// file) is a mistake, never a request for the default.
Status CheckNoEmptyValues(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0 || opt->count() == 0) continue;
    std::string name = OptionName(*opt);
    if (name.empty()) name = opt->get_name(true);
    for (const std::string& v : opt->results())
      if (v.empty()) return Status::Usage(name + " must not be empty");
  }
  for (const CLI::App* sub : app.get_subcommands())
    CDC_RETURN_IF_ERROR(CheckNoEmptyValues(*sub));
  return Status::OK();
}

}  // namespace

std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  app.set_version_flag("--version",
                       std::string(app.get_name()) + " (cdc) " + kVersion);
  Status s = CheckConfigFile(argc, argv);
  if (!s.ok()) return cli::Report(app.get_name(), s);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // A misspelt key must not be ignored: it is bad configuration.
    std::string what = e.what();
    constexpr std::string_view kExtra = "INI was not able to parse ";
    if (what.rfind(kExtra, 0) == 0)
      what = "unknown key \"" + what.substr(kExtra.size()) + "\"";
    return cli::Report(app.get_name(), Status::Config("--config: " + what));
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return cli::Report(app.get_name(), Status::Usage(e.what()));
  }
  s = CheckNoEmptyValues(app);
  if (!s.ok()) return cli::Report(app.get_name(), s);
  return std::nullopt;
}

void AddLogOption(CLI::App& app, std::string* dir) {
  app.add_option("--log", *dir, "Log directory")
      ->envname("CDC_LOG")
      ->required()
      ->type_name("DIR");
}

void AddDebeziumModeFlags(CLI::App& app, event::DebeziumModeNames* modes) {
  app.add_option("--decimal-handling", modes->decimal_handling,
                 "debezium: numeric and money as precise (default), double "
                 "or string")
      ->type_name("MODE");
  app.add_option("--time-precision", modes->time_precision,
                 "debezium: adaptive (default), adaptive_time_microseconds "
                 "or connect")
      ->type_name("MODE");
  app.add_option("--binary-handling", modes->binary_handling,
                 "debezium: bytea as bytes (default; base64 in JSON), "
                 "base64 or hex")
      ->type_name("MODE");
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

namespace {
constexpr const char* kDurationUnits = "ms, s, m, h, d, w";

// NUMBER[UNIT] in µs: decimal digits, an optional fraction, and a unit
// (ms s m h d w); a bare number counts `bare_us` each.
Result<int64_t> ParseDurationIn(const std::string& t, int64_t bare_us) {
  const Status bad = Status::Usage(
      "invalid duration \"" + t +
      "\" (e.g. 500ms, 10s, 5m, 12h, 7d; units: " + kDurationUnits + ")");
  const Status large = Status::Usage("duration \"" + t + "\" is too large");
  size_t p = 0;
  while (p < t.size() && t[p] >= '0' && t[p] <= '9') ++p;
  const size_t int_end = p;
  size_t frac_begin = p, frac_end = p;
  if (p < t.size() && t[p] == '.') {
    frac_begin = ++p;
    while (p < t.size() && t[p] >= '0' && t[p] <= '9') ++p;
    frac_end = p;
    if (frac_end == frac_begin) return bad;
  }
  if (int_end == 0) return bad;
  const std::string_view unit = std::string_view(t).substr(p);
  static constexpr std::pair<std::string_view, int64_t> kUnitUs[] = {
      {"ms", 1000},      {"s", 1000000},     {"m", 60000000},
      {"h", 3600000000}, {"d", 86400000000}, {"w", 604800000000}};
  int64_t scale = unit.empty() ? bare_us : 0;
  for (const auto& [name, us] : kUnitUs)
    if (unit == name) scale = us;
  if (scale == 0) return bad;
  // As µs it must fit the signed clock arithmetic it is used in: a wrapped
  // (negative) age limit would make every segment "too old".
  unsigned __int128 us = 0;
  for (size_t i = 0; i < int_end; ++i) {
    us = us * 10 + static_cast<unsigned>(t[i] - '0');
    if (us > static_cast<unsigned __int128>(INT64_MAX)) return large;
  }
  us *= static_cast<unsigned __int128>(scale);
  // The fraction, to the µs (digits past nine add nothing a clock keeps).
  unsigned __int128 frac = 0, denom = 1;
  for (size_t i = frac_begin; i < frac_end && i < frac_begin + 9; ++i) {
    frac = frac * 10 + static_cast<unsigned>(t[i] - '0');
    denom *= 10;
  }
  us += frac * static_cast<unsigned __int128>(scale) / denom;
  if (us > static_cast<unsigned __int128>(INT64_MAX)) return large;
  return static_cast<int64_t>(us);
}
}  // namespace

Result<int64_t> ParseDuration(const std::string& t) {
  return ParseDurationIn(t, 1000000);
}

bool IsDecimal(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

CLI::Validator DurationFlag(double min, bool exclusive, DurationUnit bare) {
  return CLI::Validator(
      [min, exclusive, bare](std::string& in) -> std::string {
        const int64_t unit_us = bare == DurationUnit::kMillis ? 1000 : 1000000;
        auto us = ParseDurationIn(in, unit_us);
        if (!us.ok()) return us.status().message();
        const double v = static_cast<double>(*us) / unit_us;
        if (v < min || (exclusive && v == min) || v > kMaxFlagDuration) {
          const char* u = bare == DurationUnit::kMillis ? "ms" : "s";
          char range[128];
          snprintf(range, sizeof range, "%s %g%s and at most %g%s",
                   exclusive ? "above" : "at least", min, u, kMaxFlagDuration,
                   u);
          return "value " + in + " out of range: must be " + range;
        }
        // The flag's variable holds the count of its bare unit.
        char out[64];
        snprintf(out, sizeof out, "%.17g", v);
        in = out;
        return std::string();
      },
      "");
}

namespace {

// A check that `parse` accepts the text; its error is the message.
template <typename Parse>
CLI::Validator ParsedBy(Parse parse) {
  return CLI::Validator(
      [parse](std::string& in) -> std::string {
        auto r = parse(in);
        return r.ok() ? std::string() : r.status().message();
      },
      "");
}

}  // namespace

CLI::Validator DurationText() { return ParsedBy(ParseDuration); }

CLI::Validator SizeText() { return ParsedBy(ParseSize); }

CLI::Validator CountFlag(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& in) -> std::string {
        const std::string range =
            "must be " + std::to_string(min) + " to " + std::to_string(max);
        if (!IsDecimal(in))
          return "not a decimal integer: " + in + " (" + range + ")";
        uint64_t v = 0;
        auto r = std::from_chars(in.data(), in.data() + in.size(), v);
        if (r.ec != std::errc() || v < min || v > max)
          return "value " + in + " out of range: " + range;
        in = std::to_string(v);
        return std::string();
      },
      "");
}

std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump();
}

Result<std::string> ReadPasswordFile(const std::string& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::Config("--password-file " + file + ": " + strerror(errno));
  FileHandle f(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096)
    return Status::Config("--password-file " + file +
                          ": not a regular file of at most 4096 bytes");
  std::string pw(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::read(fd, pw.data(), pw.size());
  if (n < 0)
    return Status::Config("--password-file " + file + ": " + strerror(errno));
  pw.resize(static_cast<size_t>(n));
  while (!pw.empty() && (pw.back() == '\n' || pw.back() == '\r')) pw.pop_back();
  return pw;
}

}  // namespace cdc::tools
