// Wall-clock and monotonic time, and RFC 3339 timestamps with microseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc {

// Microseconds since the Unix epoch (UTC).
int64_t NowMicros();
// Monotonic microseconds, for deadlines and latencies.
int64_t MonoMicros();

// "2026-11-29T07:41:02.123456Z".
std::string FormatTimestamp(int64_t unix_micros);
// The proleptic Gregorian date of a day count since 1970-01-01.
void CivilFromDays(int64_t days, int64_t* y, unsigned* m, unsigned* d);
// The decimal number of exactly `n` digits at s[pos]; false if any is not
// a digit or the text ends first.
bool ParseDigits(std::string_view s, size_t pos, size_t n, int* out);
// Accepts RFC 3339 / ISO 8601: date, 'T' or ' ', time with optional fraction
// (up to 9 digits, truncated to µs), and 'Z' or a ±HH:MM offset (hours
// 00-23, minutes 00-59, as RFC 3339 allows). A bare date means midnight UTC.
// The date must exist (2026-02-30 does not; leap years are Gregorian).
Result<int64_t> ParseTimestamp(std::string_view text);

}  // namespace cdc
