// Debezium's conventions for the date, time and interval types, from the
// values as the log stores them (cdc-capture(1), Types): ISO 8601 dates
// and times in UTC, intervals in PostgreSQL's IntervalStyle postgres.
//
// The interval arithmetic repeats Java's double expressions operation by
// operation, so this file is compiled with -ffp-contract=off (a fused
// multiply-add would round differently).
#include <cmath>
#include <limits>

#include "cdc/base/time.h"
#include "cdc/event/debezium_internal.h"
#include "cdc/event/debezium_values.h"

namespace cdc::event::dbz {

int64_t JavaDoubleToLong(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

int32_t JavaDoubleToInt(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  if (d <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(d);
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil; C++ division truncates, which it relies on).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Debezium's stand-ins for PostgreSQL's infinities (PostgresValueConverter).
// A date's depends on the connector's path to the value. Streamed
// (pgoutput text, DateTimeFormat.date) they are LocalDate.parse
// ("-5877611-06-21") for infinity and "-5877611-06-22" for -infinity, as
// epoch days -2147472692 and -2147472691: PostgreSQL's own day numbers
// for them (INT32_MAX and INT32_MIN days from 2000-01-01) moved to 1970 in
// 32-bit arithmetic, so infinity wraps around below -infinity. Read by a
// snapshot (JDBC), the value is pgjdbc's java.sql.Date stand-in
// (PGStatement.DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY ms), which
// Date.toEpochDay turns into a LocalDate with java.sql.Date.toLocalDate
// (in the JVM's time zone, and java.util.Date's Julian calendar for the
// negative one) and then into an int: -622191234 and -625821272 in a JVM
// running in UTC or a zone behind it (one more in a zone ahead of UTC).
// Timestamps are the same on both paths: pgjdbc's DATE_POSITIVE_INFINITY
// / DATE_NEGATIVE_INFINITY taken as µs, in ms where the schema is in ms
// (exact: both end in 000).
constexpr int64_t kDateInfinity = -2147472692, kDateMinusInfinity = -2147472691;
constexpr int64_t kSnapshotDateInfinity = -622191234,
                  kSnapshotDateMinusInfinity = -625821272;
constexpr int64_t kTimestampInfinityUs = 9223372036825200000;
constexpr int64_t kTimestampMinusInfinityUs = -9223372036832400000;
static_assert(kTimestampInfinityUs % 1000 == 0 &&
              kTimestampMinusInfinityUs % 1000 == 0);

// "YYYY-MM-DD" (4-digit years, as the log stores 0000 to 9999): days
// since the epoch.
bool ParseDate(std::string_view s, int64_t* days) {
  int y, m, d;
  if (s.size() < 10 || s[4] != '-' || s[7] != '-' ||
      !ParseDigits(s, 0, 4, &y) || !ParseDigits(s, 5, 2, &m) ||
      !ParseDigits(s, 8, 2, &d))
    return false;
  *days = DaysFromCivil(y, m, d);
  return true;
}

// The length of the date at s[0] as the log writes it and java.time's
// ISO_LOCAL_DATE prints it: "YYYY-MM-DD" or, after 9999, "+YYYYY-MM-DD";
// 0 if there is none. (Years before 0000 are left alone.)
size_t DateLength(std::string_view s) {
  size_t i = 0;
  if (!s.empty() && s[0] == '+') ++i;
  const size_t y = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  const size_t n = i - y;
  int m, d;
  if ((y == 0 ? n != 4 : n < 5) || i + 6 > s.size() || s[i] != '-' ||
      s[i + 3] != '-' || !ParseDigits(s, i + 1, 2, &m) ||
      !ParseDigits(s, i + 4, 2, &d))
    return 0;
  return i + 6;
}

// "HH:MM:SS[.ffffff]" at s[0]: µs since midnight; *end past it.
bool ParseClock(std::string_view s, int64_t* us, size_t* end) {
  int h, mi, se;
  if (s.size() < 8 || s[2] != ':' || s[5] != ':' || !ParseDigits(s, 0, 2, &h) ||
      !ParseDigits(s, 3, 2, &mi) || !ParseDigits(s, 6, 2, &se))
    return false;
  int64_t frac = 0;
  size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    int n = 0;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++n)
      if (n < 6) frac = frac * 10 + (s[i] - '0');
    for (; n < 6; ++n) frac *= 10;
  }
  *us = ((h * 60 + mi) * 60 + se) * int64_t{1000000} + frac;
  *end = i;
  return true;
}

// Time precision of a time/timestamp column: its typmod, else 6 (pgjdbc's
// TypeInfoCache.getScale, which Debezium takes as the column's scale).
int Precision(int32_t typmod) {
  return typmod >= 0 && typmod <= 6 ? typmod : 6;
}

// "HH:MM:SS" of `us_of_day`, then the fraction: with `width` < 0 as
// java.time's ISO formatters print it (trailing zeros removed, none when
// zero); else exactly `width` digits (none for 0).
void AppendClock(int64_t us_of_day, int width, std::string* out) {
  char buf[16];
  const int64_t s = us_of_day / 1000000;
  const int64_t fields[3] = {s / 3600 % 100, s / 60 % 60, s % 60};
  for (int i = 0; i < 3; ++i) {
    buf[i * 3] = static_cast<char>('0' + fields[i] / 10);
    buf[i * 3 + 1] = static_cast<char>('0' + fields[i] % 10);
    buf[i * 3 + 2] = ':';
  }
  out->append(buf, 8);
  int frac = static_cast<int>(us_of_day % 1000000);
  if (width == 0 || (width < 0 && frac == 0)) return;
  buf[0] = '.';
  for (int i = 6; i >= 1; --i, frac /= 10)
    buf[i] = static_cast<char>('0' + frac % 10);
  size_t n = 7;
  if (width < 0) {
    while (buf[n - 1] == '0') --n;
  } else {
    n = 1 + static_cast<size_t>(width);
  }
  out->append(buf, n);
}

// The fields of an interval as pgjdbc's PGInterval holds them.
struct IntervalFields {
  int32_t years = 0, months = 0, days = 0, hours = 0, minutes = 0;
  double seconds = 0;
};

// Java's Integer.parseInt of s[0..n): a sign, digits, in int range.
bool JavaParseInt(std::string_view s, int32_t* v) {
  size_t i = s.empty() || (s[0] != '-' && s[0] != '+') ? 0 : 1;
  if (i == s.size()) return false;
  int64_t x = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + (s[i] - '0');
    if (x > int64_t{1} << 31) return false;
  }
  if (s[0] == '-') x = -x;
  if (x > std::numeric_limits<int32_t>::max()) return false;
  *v = static_cast<int32_t>(x);
  return true;
}

// PostgreSQL's IntervalStyle postgres text ("1 year 2 mons -3 days
// +04:05:06.78", "00:00:01.000001"), read as pgjdbc 42.6's PGInterval
// (which Debezium 2.7 uses) reads it: "N unit" pairs, then the time, whose
// sign applies to hours, minutes and seconds; the seconds as a double,
// then kept as whole seconds and rounded µs (PGInterval.setSeconds).
bool ParseInterval(std::string_view s, IntervalFields* f) {
  if (s.empty() || s.back() == ' ') return false;
  bool time_seen = false;
  size_t p = 0;
  while (p < s.size()) {
    size_t e = s.find(' ', p);
    if (e == std::string_view::npos) e = s.size();
    std::string_view tok = s.substr(p, e - p);
    p = e + 1;
    if (tok.empty() || time_seen) return false;
    const size_t colon = tok.find(':');
    if (colon == std::string_view::npos) {
      int32_t n;
      if (!JavaParseInt(tok, &n) || e >= s.size()) return false;
      e = s.find(' ', p);
      if (e == std::string_view::npos) e = s.size();
      std::string_view unit = s.substr(p, e - p);
      p = e + 1;
      if (unit == "year" || unit == "years") {
        f->years = n;
      } else if (unit == "mon" || unit == "mons") {
        f->months = n;
      } else if (unit == "day" || unit == "days") {
        f->days = n;
      } else {
        return false;
      }
      continue;
    }
    // [+-]H+:MM:SS[.f]
    time_seen = true;
    const bool negative = tok[0] == '-';
    const size_t h0 = tok[0] == '-' || tok[0] == '+' ? 1 : 0;
    int32_t hours;
    int minutes;
    if (colon == h0 || !JavaParseInt(tok.substr(h0, colon - h0), &hours) ||
        tok.size() < colon + 6 || tok[colon + 3] != ':' ||
        !ParseDigits(tok, colon + 1, 2, &minutes))
      return false;
    std::string_view sec = tok.substr(colon + 4);
    if (sec.size() < 2 || sec[0] < '0' || sec[0] > '9') return false;
    double seconds;
    auto [end, ec] =
        std::from_chars(sec.data(), sec.data() + sec.size(), seconds);
    if (ec != std::errc() || end != sec.data() + sec.size()) return false;
    if (negative) {
      hours = -hours;
      minutes = -minutes;
      seconds = -seconds;
    }
    f->hours = hours;
    f->minutes = minutes;
    // setSeconds: wholeSeconds = (int) s; microSeconds = (int)
    // Math.round((s - wholeSeconds) * 1e6); getSeconds() adds them back.
    const int32_t whole = JavaDoubleToInt(seconds);
    const double us = (seconds - whole) * 1e6;
    double rounded = std::floor(us);  // Math.round: half up
    if (us - rounded >= 0.5) rounded += 1;
    const int32_t micros = static_cast<int32_t>(rounded);
    f->seconds = whole + static_cast<double>(micros) / 1e6;
  }
  return true;
}

// io.debezium.time.MicroDuration.durationMicros with DAYS_PER_MONTH_AVG
// (365.25 / 12): Java's expression, in its order and types, truncated.
int64_t DurationMicros(const IntervalFields& f) {
  const double days_per_month_avg = 365.25 / 12.0;
  const int32_t months = static_cast<int32_t>(
      static_cast<uint32_t>(f.years) * 12u + static_cast<uint32_t>(f.months));
  const double days = months * days_per_month_avg + f.days;
  const double seconds =
      (((days * 24 + f.hours) * 60) + f.minutes) * 60 + f.seconds;
  return JavaDoubleToLong(seconds * 1e6 + 0);
}

}  // namespace

bool AppendTimeValue(std::string_view s, uint32_t oid, int32_t typmod,
                     const RenderOptions& o, bool snapshot_read,
                     std::string* out) {
  switch (oid) {
    case pgtype::kDate: {
      // io.debezium.time.Date / Connect Date: days since the epoch.
      int64_t days;
      if (s == "infinity") {
        days = snapshot_read ? kSnapshotDateInfinity : kDateInfinity;
      } else if (s == "-infinity") {
        days = snapshot_read ? kSnapshotDateMinusInfinity : kDateMinusInfinity;
      } else if (s.size() != 10 || !ParseDate(s, &days)) {
        return false;
      }
      AppendInt(days, out);
      return true;
    }
    case pgtype::kTime: {
      int64_t us;
      size_t end;
      if (!ParseClock(s, &us, &end) || end != s.size()) return false;
      const bool micros =
          o.time_precision == TimePrecision::kAdaptiveTimeMicroseconds ||
          (o.time_precision == TimePrecision::kAdaptive &&
           Precision(typmod) > 3);
      AppendInt(micros ? us : us / 1000, out);
      return true;
    }
    case pgtype::kTimetz: {
      // io.debezium.time.ZonedTime: the time in UTC, ISO 8601.
      int64_t us;
      size_t end;
      if (!ParseClock(s, &us, &end) || end >= s.size() ||
          (s[end] != '+' && s[end] != '-'))
        return false;
      int oh = 0, om = 0, os = 0;
      std::string_view z = s.substr(end + 1);
      if (!ParseDigits(z, 0, 2, &oh)) return false;
      if (z.size() >= 5 && z[2] == ':' && !ParseDigits(z, 3, 2, &om))
        return false;
      if (z.size() >= 8 && z[5] == ':' && !ParseDigits(z, 6, 2, &os))
        return false;
      int64_t off = ((oh * 60 + om) * 60 + os) * int64_t{1000000};
      if (s[end] == '-') off = -off;
      const int64_t day = 86400 * int64_t{1000000};
      const int64_t utc = ((us - off) % day + day) % day;
      out->push_back('"');
      AppendClock(utc, -1, out);
      out->append("Z\"");
      return true;
    }
    case pgtype::kTimestamp: {
      // MicroTimestamp (µs) or, for precision 0 to 3 and in connect mode,
      // Timestamp (ms, floored as Instant.toEpochMilli does).
      const bool micros =
          o.time_precision != TimePrecision::kConnect && Precision(typmod) > 3;
      int64_t epoch_us;
      if (s == "infinity") {
        epoch_us = kTimestampInfinityUs;
      } else if (s == "-infinity") {
        epoch_us = kTimestampMinusInfinityUs;
      } else {
        int64_t days, us;
        size_t end;
        if (s.size() < 19 || s[10] != 'T' || !ParseDate(s, &days) ||
            !ParseClock(s.substr(11), &us, &end) || end != s.size() - 11)
          return false;
        epoch_us = days * 86400 * int64_t{1000000} + us;
      }
      if (micros) {
        AppendInt(epoch_us, out);
      } else {
        AppendInt(epoch_us >= 0 ? epoch_us / 1000 : -((-epoch_us + 999) / 1000),
                  out);
      }
      return true;
    }
    case pgtype::kTimestamptz: {
      // io.debezium.time.ZonedTimestamp: UTC, ISO 8601, since Debezium 2.2
      // (DBZ-5996) with exactly the column's precision in fraction digits
      // (6 without a typmod, none for 0), trailing zeros kept. The
      // infinities stay the strings "infinity" and "-infinity".
      const size_t date = DateLength(s);
      int64_t us;
      size_t end;
      if (date == 0 || s.size() < date + 10 || s[date] != 'T' ||
          s.back() != 'Z' ||
          !ParseClock(s.substr(date + 1, s.size() - date - 2), &us, &end) ||
          end != s.size() - date - 2)
        return false;
      out->push_back('"');
      out->append(s.substr(0, date + 1));
      AppendClock(us, Precision(typmod), out);
      out->append("Z\"");
      return true;
    }
    case pgtype::kInterval: {
      // interval.handling.mode=numeric: io.debezium.time.MicroDuration.
      IntervalFields f;
      if (!ParseInterval(s, &f)) return false;
      AppendInt(DurationMicros(f), out);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace cdc::event::dbz
