#include "cdc/event/debezium_values.h"

#include <charconv>
#include <cstdlib>
#include <vector>

#include "cdc/event/json_text.h"
#include "cdc/event/stored.h"

namespace cdc::event {

namespace {

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out->append(buf, static_cast<size_t>(end - buf));
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(std::string_view s, size_t at, size_t n, int* v) {
  if (at + n > s.size()) return false;
  int x = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + (s[i] - '0');
  }
  *v = x;
  return true;
}

// "YYYY-MM-DD" (4-digit years, as the log stores them): days since epoch.
bool ParseDate(std::string_view s, int64_t* days) {
  int y, m, d;
  if (s.size() < 10 || s[4] != '-' || s[7] != '-' || !Digits(s, 0, 4, &y) ||
      !Digits(s, 5, 2, &m) || !Digits(s, 8, 2, &d))
    return false;
  *days = DaysFromCivil(y, m, d);
  return true;
}

// "HH:MM:SS[.ffffff]" at s[0]: µs since midnight; *end past it.
bool ParseClock(std::string_view s, int64_t* us, size_t* end) {
  int h, mi, se;
  if (s.size() < 8 || s[2] != ':' || s[5] != ':' || !Digits(s, 0, 2, &h) ||
      !Digits(s, 3, 2, &mi) || !Digits(s, 6, 2, &se))
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

// Time precision of a time/timestamp column: its typmod, else 6.
int Precision(int32_t typmod) {
  return typmod >= 0 && typmod <= 6 ? typmod : 6;
}

// java.time's ISO formatters: the fraction with trailing zeros removed.
void AppendIsoClock(int64_t us_of_day, std::string* out) {
  char buf[32];
  int64_t s = us_of_day / 1000000;
  int frac = static_cast<int>(us_of_day % 1000000);
  snprintf(buf, sizeof buf, "%02d:%02d:%02d", static_cast<int>(s / 3600),
           static_cast<int>(s / 60 % 60), static_cast<int>(s % 60));
  out->append(buf);
  if (frac != 0) {
    snprintf(buf, sizeof buf, ".%06d", frac);
    std::string_view f(buf);
    while (f.back() == '0') f.remove_suffix(1);
    out->append(f);
  }
}

// numeric text "[-]D*[.D*]": the unscaled value's decimal digits (no
// sign), its scale, and the sign. False for NaN, Infinity and the like.
bool ParseDecimal(std::string_view t, std::string* digits, int* scale,
                  bool* negative) {
  digits->clear();
  *negative = !t.empty() && t[0] == '-';
  size_t i = *negative || (!t.empty() && t[0] == '+') ? 1 : 0;
  *scale = 0;
  bool dot = false, any = false;
  for (; i < t.size(); ++i) {
    if (t[i] == '.' && !dot) {
      dot = true;
    } else if (t[i] >= '0' && t[i] <= '9') {
      digits->push_back(t[i]);
      any = true;
      if (dot) ++*scale;
    } else {
      return false;
    }
  }
  return any;
}

// Java's BigInteger.toByteArray(): minimal big-endian two's complement.
std::string TwosComplement(std::string digits, bool negative) {
  std::vector<uint8_t> mag;  // little-endian magnitude
  // Repeated division of the decimal digit string by 256.
  while (!digits.empty()) {
    int rem = 0;
    std::string q;
    for (char c : digits) {
      int cur = rem * 10 + (c - '0');
      if (!q.empty() || cur / 256 != 0)
        q.push_back(static_cast<char>('0' + cur / 256));
      rem = cur % 256;
    }
    mag.push_back(static_cast<uint8_t>(rem));
    digits = q;
  }
  while (!mag.empty() && mag.back() == 0) mag.pop_back();
  if (mag.empty()) return std::string(1, '\0');
  if (negative) {
    int carry = 1;
    for (auto& b : mag) {
      int v = static_cast<uint8_t>(~b) + carry;
      b = static_cast<uint8_t>(v & 0xff);
      carry = v >> 8;
    }
    if (!(mag.back() & 0x80)) mag.push_back(0xff);
    while (mag.size() > 1 && mag.back() == 0xff && (mag[mag.size() - 2] & 0x80))
      mag.pop_back();
  } else if (mag.back() & 0x80) {
    mag.push_back(0);
  }
  return std::string(mag.rbegin(), mag.rend());
}

bool DecodeBase64(std::string_view in, std::string* out) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = val(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

bool StringContent(std::string_view v, std::string* s) {
  std::string_view plain;
  if (PlainStringContent(v, &plain)) {
    s->assign(plain);
    return true;
  }
  return false;
}

void AppendNumeric(std::string_view v, int32_t typmod, const RenderOptions& o,
                   std::string* out) {
  std::string text;
  if (!StringContent(v, &text)) {
    out->append(v);
    return;
  }
  if (o.decimal_handling == DecimalHandling::kString) {
    out->append(v);
    return;
  }
  std::string digits;
  int scale;
  bool negative;
  if (!ParseDecimal(text, &digits, &scale, &negative)) {
    out->append(v);  // NaN, ±Infinity: as stored
    return;
  }
  if (o.decimal_handling == DecimalHandling::kDouble) {
    char* end = nullptr;
    double d = strtod(text.c_str(), &end);
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
    (void)ec;
    std::string_view n(buf, static_cast<size_t>(p - buf));
    out->append(n);
    // Java prints a double with a fraction: 12.0, not 12.
    if (n.find_first_of(".eE") == std::string_view::npos) out->append(".0");
    return;
  }
  // precise: a declared scale is the schema's; the value is the unscaled
  // integer at that scale. Without one (numeric with no typmod) Debezium
  // sends a struct of the value's own scale and unscaled integer.
  const bool declared = typmod >= 4;
  if (declared) {
    int want = (typmod - 4) & 0xffff;
    for (; scale < want; ++scale) digits.push_back('0');
  }
  std::string b64;
  AppendBase64(
      TwosComplement(digits, negative && digits.find_first_not_of('0') !=
                                             std::string::npos),
      &b64);
  if (declared) {
    out->push_back('"');
    out->append(b64);
    out->push_back('"');
  } else {
    out->append("{\"scale\":");
    AppendInt(scale, out);
    out->append(",\"value\":\"");
    out->append(b64);
    out->append("\"}");
  }
}

}  // namespace

bool DebeziumConverts(uint32_t oid, const RenderOptions& o) {
  switch (oid) {
    case pgtype::kNumeric:
      return o.decimal_handling != DecimalHandling::kString;
    case pgtype::kBytea:
      return o.binary_handling == BinaryHandling::kHex;
    case pgtype::kJson:
    case pgtype::kJsonb:
    case pgtype::kDate:
    case pgtype::kTime:
    case pgtype::kTimetz:
    case pgtype::kTimestamp:
    case pgtype::kTimestamptz:
      return true;
    default:
      return false;
  }
}

void AppendDebeziumValue(std::string_view v, uint32_t oid, int32_t typmod,
                         const RenderOptions& o, std::string* out) {
  if (v == "null") {
    out->append(v);
    return;
  }
  std::string s;
  switch (oid) {
    case pgtype::kNumeric:
      AppendNumeric(v, typmod, o, out);
      return;
    case pgtype::kJson:
    case pgtype::kJsonb:
      // io.debezium.data.Json: the document as a string.
      if (!AppendJsonString(v, out)) out->append(v);
      return;
    case pgtype::kBytea: {
      if (o.binary_handling != BinaryHandling::kHex || !StringContent(v, &s))
        break;
      std::string raw;
      if (!DecodeBase64(s, &raw)) break;
      static const char kHex[] = "0123456789abcdef";
      out->push_back('"');
      for (unsigned char c : raw) {
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
      }
      out->push_back('"');
      return;
    }
    case pgtype::kDate: {
      int64_t days;
      if (!StringContent(v, &s) || s.size() != 10 || !ParseDate(s, &days))
        break;
      AppendInt(days, out);  // io.debezium.time.Date / connect Date
      return;
    }
    case pgtype::kTime: {
      int64_t us;
      size_t end;
      if (!StringContent(v, &s) || !ParseClock(s, &us, &end) || end != s.size())
        break;
      const bool micros =
          o.time_precision == TimePrecision::kAdaptiveTimeMicroseconds ||
          (o.time_precision == TimePrecision::kAdaptive &&
           Precision(typmod) > 3);
      AppendInt(micros ? us : us / 1000, out);
      return;
    }
    case pgtype::kTimetz: {
      // io.debezium.time.ZonedTime: the time in UTC, ISO 8601.
      int64_t us;
      size_t end;
      if (!StringContent(v, &s) || !ParseClock(s, &us, &end) ||
          end >= s.size() || (s[end] != '+' && s[end] != '-'))
        break;
      int oh = 0, om = 0, os = 0;
      std::string_view z(s);
      z.remove_prefix(end + 1);
      if (!Digits(z, 0, 2, &oh)) break;
      if (z.size() >= 5 && z[2] == ':' && !Digits(z, 3, 2, &om)) break;
      if (z.size() >= 8 && z[5] == ':' && !Digits(z, 6, 2, &os)) break;
      int64_t off = ((oh * 60 + om) * 60 + os) * int64_t{1000000};
      if (s[end] == '-') off = -off;
      const int64_t day = 86400 * int64_t{1000000};
      int64_t utc = ((us - off) % day + day) % day;
      out->push_back('"');
      AppendIsoClock(utc, out);
      out->append("Z\"");
      return;
    }
    case pgtype::kTimestamp: {
      int64_t days, us;
      size_t end;
      if (!StringContent(v, &s) || s.size() < 19 || s[10] != 'T' ||
          !ParseDate(s, &days))
        break;
      std::string_view clock(s);
      clock.remove_prefix(11);
      if (!ParseClock(clock, &us, &end) || end != clock.size()) break;
      int64_t epoch_us = days * 86400 * int64_t{1000000} + us;
      const bool micros = o.time_precision == TimePrecision::kConnect
                              ? false
                              : Precision(typmod) > 3;
      if (micros) {
        AppendInt(epoch_us, out);
      } else {
        int64_t ms =
            epoch_us >= 0 ? epoch_us / 1000 : -((-epoch_us + 999) / 1000);
        AppendInt(ms, out);
      }
      return;
    }
    case pgtype::kTimestamptz: {
      // io.debezium.time.ZonedTimestamp: UTC, ISO 8601, the fraction as
      // java.time prints it (no trailing zeros).
      int64_t days, us;
      size_t end;
      if (!StringContent(v, &s) || s.size() < 20 || s[10] != 'T' ||
          s.back() != 'Z' || !ParseDate(s, &days))
        break;
      std::string_view clock(s);
      clock.remove_prefix(11);
      clock.remove_suffix(1);
      if (!ParseClock(clock, &us, &end) || end != clock.size()) break;
      out->push_back('"');
      out->append(s, 0, 11);
      AppendIsoClock(us, out);
      out->append("Z\"");
      return;
    }
    default:
      break;
  }
  out->append(v);
}

}  // namespace cdc::event
