// Flag parsing and helpers shared by the tools' command-line runners.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cdc/base/status.h"
#include "cdc/event/renderer.h"

namespace cdc::tools {

// A --config file is read whole by CLI11: bigger ones are refused.
inline constexpr uint64_t kMaxConfigBytes = 1 << 20;

// Parses argv. Returns an exit code when the program should stop now
// (0 after --help/--version, 64 on a usage error or an empty option value,
// 78 for a --config file that holds an unknown key, is not a regular file
// or is over kMaxConfigBytes; already reported).
std::optional<int> Parse(CLI::App& app, int argc, char** argv);

// --log DIR, also from $CDC_LOG.
void AddLogOption(CLI::App& app, std::string* dir);

// --decimal-handling, --time-precision and --binary-handling (for
// --format debezium; event::ApplyDebeziumModes checks them).
void AddDebeziumModeFlags(CLI::App& app, event::DebeziumModeNames* modes);

// "64M", "1G", "512k", "1000" (bytes).
Result<uint64_t> ParseSize(const std::string& text);
// One grammar for every duration a tool takes: NUMBER[UNIT], decimal
// digits with an optional fraction, UNIT one of ms s m h d w ("500ms",
// "1.5s", "15m", "12h", "7d", "2w"). ParseDuration: a bare number is
// seconds; returns µs. A duration that does not fit is a usage error,
// never a wrapped value.
Result<int64_t> ParseDuration(const std::string& text);

// Duration flags kept in a double (seconds, or milliseconds for the few
// whose bare numbers always meant that): the same grammar, converted to
// that unit, in [min, kMaxFlagDuration] of it (above `min` when
// `exclusive`). Give it to transform(), not check(): it rewrites the value
// into the bare unit. Hexadecimal, exponents, signs, spaces, NaN and
// infinity are refused.
inline constexpr double kMaxFlagDuration = 1e9;
enum class DurationUnit { kSeconds, kMillis };
CLI::Validator DurationFlag(double min, bool exclusive = false,
                            DurationUnit bare = DurationUnit::kSeconds);

// Duration flags kept as text and parsed with ParseDuration later: checks
// them at parse time, so a bad one is refused as the other flags are.
CLI::Validator DurationText();

// The option's name as errors give it (--name), hidden options' too.
std::string OptionName(const CLI::Option& opt);

// Size flags (SIZE) kept as text and parsed with ParseSize later: checks
// them at parse time, so that the error names the flag.
CLI::Validator SizeText();

// Flags that count (N): decimal digits only, in [min, max]. CLI11 reads
// integers with strtoull(..., 0), which takes "0x10" as 16, "010" as 8,
// " 5" as 5 and "-1" as the largest value. Give it to transform(), not
// check(): it also drops leading zeros, so that "010" is 10.
CLI::Validator CountFlag(uint64_t min, uint64_t max);

// True when `text` is one or more decimal digits and nothing else.
bool IsDecimal(std::string_view text);

std::string JsonString(const std::string& s);

// The password in FILE (a regular file of at most 4096 bytes; a trailing
// newline dropped): Config naming the file otherwise.
Result<std::string> ReadPasswordFile(const std::string& file);

}  // namespace cdc::tools
