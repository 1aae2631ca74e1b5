// Debezium's value conventions for numbers (numeric, money, real, double
// precision), bit strings, bytea and JSON; the date and time types are in
// debezium_time.cpp. The reference is Debezium's PostgresValueConverter and
// JsonConverter (2.7; HEAD where it differs), as cdc-tail(1), FORMATS,
// describes.
#include "cdc/event/debezium_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "cdc/event/debezium_internal.h"
#include "cdc/event/json_text.h"
#include "cdc/event/stored.h"

namespace cdc::event {

namespace dbz {

namespace {

// Java's Double.toString and Float.toString (JDK 19 and later: the
// shortest digits that read back as the same double or float, which
// std::to_chars on that type gives): plain "123.45" for 1e-3 <= |v| < 1e7,
// with at least one digit after the point ("12.0"); otherwise
// "d.dddE[-]n" ("1.23456789E7", "1.0E-4").
template <typename T>
void AppendJavaFloating(T v, std::string* out) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0.0" : "0.0");
    return;
  }
  char buf[40];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  (void)ec;
  // [-]D[.DDD]e(+|-)XX
  const char* p = buf;
  if (*p == '-') {
    out->push_back('-');
    ++p;
  }
  char digits[24];
  size_t n = 0;
  for (; p < end && *p != 'e'; ++p)
    if (*p != '.') digits[n++] = *p;
  ++p;  // 'e'
  if (p < end && *p == '+') ++p;
  int exp = 0;
  (void)std::from_chars(p, end, exp);
  if (n == 1) {
    // Java chooses among decimals of one *or two* digits the one closest
    // to v: two digits win where one is far off (4.9E-324, not 5.0E-324;
    // 1.4E-45 for the smallest float).
    char two[40];
    auto [e2, ec2] = std::to_chars(two, two + sizeof two, v,
                                   std::chars_format::scientific, 1);
    (void)ec2;
    T back = 0;
    (void)std::from_chars(two, e2, back);
    const char* q = two[0] == '-' ? two + 1 : two;  // D.De(+|-)XX
    if (back == v && q[2] != '0') {
      digits[0] = q[0];
      digits[1] = q[2];
      n = 2;
      exp = 0;
      (void)std::from_chars(q[4] == '+' ? q + 5 : q + 4, e2, exp);
    }
  }
  const std::string_view ds(digits, n);
  if (exp >= 0 && exp < 7) {
    const size_t int_digits = static_cast<size_t>(exp) + 1;
    out->append(ds.substr(0, int_digits));
    if (n < int_digits) out->append(int_digits - n, '0');
    out->push_back('.');
    if (n > int_digits) {
      out->append(ds.substr(int_digits));
    } else {
      out->push_back('0');
    }
  } else if (exp < 0 && exp >= -3) {
    out->append("0.");
    out->append(static_cast<size_t>(-exp - 1), '0');
    out->append(ds);
  } else {
    out->push_back(ds[0]);
    out->push_back('.');
    if (n > 1) {
      out->append(ds.substr(1));
    } else {
      out->push_back('0');
    }
    out->push_back('E');
    AppendInt(exp, out);
  }
}

}  // namespace

void AppendJavaDouble(double d, std::string* out) {
  AppendJavaFloating(d, out);
}

void AppendJavaFloat(float f, std::string* out) { AppendJavaFloating(f, out); }

// bit and varbit: a boolean for length 1 (PostgresValueConverter.
// convertBit); longer (or of unknown length), io.debezium.data.Bits: the
// bits as a java.util.BitSet (bit k is the k-th character from the right)
// in BitSet.toByteArray()'s little-endian bytes, no longer than the
// highest set bit needs. Bits is a Connect bytes schema, which
// JsonConverter writes in base64 whatever binary.handling.mode says (that
// mode is bytea's). `column_sized`: the MySQL connector's (JdbcValueConverters.
// convertBits), as many bytes as the column's typmod bits need.
bool AppendBits(std::string_view s, int32_t typmod, bool column_sized,
                std::string* out) {
  for (char c : s)
    if (c != '0' && c != '1') return false;
  if (typmod == 1) {
    if (s.empty()) return false;  // Integer.valueOf("", 2) throws
    out->append(s.find('1') == std::string_view::npos ? "false" : "true");
    return true;
  }
  const size_t highest = s.find('1');  // the highest set bit's position
  const size_t nbits = column_sized
                           ? std::max<size_t>(s.size(), typmod > 0 ? typmod : 0)
                       : highest == std::string_view::npos ? 0
                                                           : s.size() - highest;
  std::string bytes((nbits + 7) / 8, '\0');
  for (size_t k = 0; k < std::min(nbits, s.size()); ++k)
    if (s[s.size() - 1 - k] == '1')
      bytes[k / 8] = static_cast<char>(bytes[k / 8] | (1 << (k % 8)));
  out->push_back('"');
  AppendBase64(bytes, out);
  out->push_back('"');
  return true;
}

}  // namespace dbz

namespace {

using dbz::AppendInt;
using dbz::AppendJavaDouble;
using dbz::AppendJavaFloat;

// A decimal number: sign, the digits before and after the point.
struct DecimalText {
  bool negative = false;
  std::string_view int_part, frac_part;
  bool IsZero() const {
    return int_part.find_first_not_of('0') == std::string_view::npos &&
           frac_part.find_first_not_of('0') == std::string_view::npos;
  }
};

bool AllDigits(std::string_view s) {
  for (char c : s)
    if (!IsDigit(c)) return false;
  return true;
}

// numeric's text, "[-]D*[.D*]" with at least one digit. False for NaN,
// Infinity and the like.
bool ParseDecimal(std::string_view t, DecimalText* d) {
  d->negative = !t.empty() && t[0] == '-';
  if (d->negative) t.remove_prefix(1);
  const size_t dot = t.find('.');
  d->int_part = t.substr(0, dot);
  d->frac_part =
      dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  return !(d->int_part.empty() && d->frac_part.empty()) &&
         AllDigits(d->int_part) && AllDigits(d->frac_part);
}

// Java's BigInteger.toByteArray() of a decimal digit string: minimal
// big-endian two's complement. For values beyond 128 bits.
std::string TwosComplement(std::string digits, bool negative) {
  std::string mag;  // little-endian magnitude
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
    mag.push_back(static_cast<char>(rem));
    digits = q;
  }
  while (!mag.empty() && mag.back() == 0) mag.pop_back();
  if (mag.empty()) return std::string(1, '\0');
  auto byte = [&](size_t i) { return static_cast<uint8_t>(mag[i]); };
  if (negative) {
    int carry = 1;
    for (char& b : mag) {
      int v = static_cast<uint8_t>(~static_cast<uint8_t>(b)) + carry;
      b = static_cast<char>(v & 0xff);
      carry = v >> 8;
    }
    if (!(byte(mag.size() - 1) & 0x80)) mag.push_back(static_cast<char>(0xff));
    while (mag.size() > 1 && byte(mag.size() - 1) == 0xff &&
           (byte(mag.size() - 2) & 0x80))
      mag.pop_back();
  } else if (byte(mag.size() - 1) & 0x80) {
    mag.push_back(0);
  }
  return std::string(mag.rbegin(), mag.rend());
}

// Appends the unscaled value of `d` at `scale` (rounded half up, as
// BigDecimal.setScale(scale, HALF_UP), when digits are dropped) as
// BigInteger.toByteArray() in base64: what JsonConverter writes for a
// Connect Decimal.
void AppendUnscaledBase64(const DecimalText& d, size_t scale,
                          std::string* out) {
  const size_t kept = std::min(scale, d.frac_part.size());
  const bool round_up = d.frac_part.size() > scale && d.frac_part[scale] >= '5';
  if (d.int_part.size() + scale <= 38) {  // fits in 127 bits
    unsigned __int128 mag = 0;
    for (char c : d.int_part) mag = mag * 10 + static_cast<unsigned>(c - '0');
    for (size_t i = 0; i < scale; ++i)
      mag = mag * 10 +
            (i < kept ? static_cast<unsigned>(d.frac_part[i] - '0') : 0u);
    if (round_up) ++mag;
    const __int128 v =
        d.negative ? -static_cast<__int128>(mag) : static_cast<__int128>(mag);
    uint8_t b[16];
    for (int i = 0; i < 16; ++i)
      b[15 - i] =
          static_cast<uint8_t>(static_cast<unsigned __int128>(v) >> (8 * i));
    size_t start = 0;
    while (start < 15 && ((b[start] == 0 && !(b[start + 1] & 0x80)) ||
                          (b[start] == 0xff && (b[start + 1] & 0x80))))
      ++start;
    AppendBase64(
        std::string_view(reinterpret_cast<const char*>(b) + start, 16 - start),
        out);
    return;
  }
  std::string digits(d.int_part);
  digits.append(d.frac_part.substr(0, kept));
  digits.append(scale - kept, '0');
  if (round_up) {
    size_t i = digits.size();
    while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
    if (i == 0) {
      digits.insert(digits.begin(), '1');
    } else {
      ++digits[i - 1];
    }
  }
  const bool nonzero = digits.find_first_not_of('0') != std::string::npos;
  AppendBase64(TwosComplement(std::move(digits), d.negative && nonzero), out);
}

// BigDecimal.doubleValue() of `d` (whose text is `text`), as Jackson
// writes it.
void AppendDecimalAsDouble(std::string_view text, const DecimalText& d,
                           std::string* out) {
  if (d.IsZero()) {  // a BigDecimal has no negative zero
    out->append("0.0");
    return;
  }
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  (void)end;
  if (ec == std::errc::result_out_of_range) {
    const bool big = d.int_part.find_first_not_of('0') != std::string::npos;
    v = big ? HUGE_VAL : 0.0;
    if (d.negative) v = -v;
  }
  AppendJavaDouble(v, out);
}

void AppendNumeric(std::string_view v, int32_t typmod, const RenderOptions& o,
                   std::string* out) {
  std::string_view text;
  if (!PlainStringContent(v, &text)) {
    out->append(v);
    return;
  }
  // NaN and the infinities: SpecialValueDecimal. Precise mode has no
  // decimal for them (Debezium stops the connector): as stored.
  const int special = text == "NaN"         ? 1
                      : text == "Infinity"  ? 2
                      : text == "-Infinity" ? 3
                                            : 0;
  if (special != 0) {
    static constexpr std::string_view kNames[] = {
        "\"NAN\"", "\"POSITIVE_INFINITY\"", "\"NEGATIVE_INFINITY\""};
    static constexpr std::string_view kDoubles[] = {"\"NaN\"", "\"Infinity\"",
                                                    "\"-Infinity\""};
    if (o.decimal_handling == DecimalHandling::kString) {
      out->append(kNames[special - 1]);
    } else if (o.decimal_handling == DecimalHandling::kDouble) {
      out->append(kDoubles[special - 1]);
    } else {
      out->append(v);
    }
    return;
  }
  DecimalText d;
  if (o.decimal_handling == DecimalHandling::kString ||
      !ParseDecimal(text, &d)) {
    out->append(v);  // string: PostgreSQL's text is toPlainString()'s
    return;
  }
  if (o.decimal_handling == DecimalHandling::kDouble) {
    AppendDecimalAsDouble(text, d, out);
    return;
  }
  // precise: a declared scale is the schema's; the value is the unscaled
  // integer at that scale. Without one (numeric with no typmod) Debezium
  // sends a VariableScaleDecimal struct of the value with its trailing
  // fractional zeros stripped (stripTrailingZeros, then scale 0 at least).
  const bool declared = typmod >= 4;
  if (declared) {
    out->push_back('"');
    AppendUnscaledBase64(d, static_cast<size_t>((typmod - 4) & 0xffff), out);
    out->push_back('"');
    return;
  }
  while (!d.frac_part.empty() && d.frac_part.back() == '0')
    d.frac_part.remove_suffix(1);
  out->append("{\"scale\":");
  AppendInt(static_cast<int64_t>(d.frac_part.size()), out);
  out->append(",\"value\":\"");
  AppendUnscaledBase64(d, d.frac_part.size(), out);
  out->append("\"}");
}

// money's text as PostgreSQL writes it in the lc_monetary locale
// ("$1,234.11", "-$1,234.11", "($1,234.11)"): a prefix without digits (the
// currency symbol, a sign, a parenthesis), digits with "," between groups
// of three, optionally "." and the fraction, and ")" if one was opened.
// The digits are copied into `buf` (d points into it). False for another
// form, such as a symbol after the number or "." between groups.
bool ParseMoney(std::string_view s, char (&buf)[48], DecimalText* d) {
  size_t i = 0;
  bool minus = false, paren = false;
  for (; i < s.size() && !IsDigit(s[i]); ++i) {
    if (s[i] == '-') minus = true;
    if (s[i] == '(') paren = true;
  }
  size_t n = 0, int_digits = 0;
  for (; i < s.size(); ++i) {
    if (IsDigit(s[i])) {
      if (n == sizeof buf) return false;
      buf[n++] = s[i];
      ++int_digits;
      continue;
    }
    if (s[i] != ',') break;
    // a thousands separator: exactly three digits follow
    if (int_digits == 0 || i + 4 > s.size() || !IsDigit(s[i + 1]) ||
        !IsDigit(s[i + 2]) || !IsDigit(s[i + 3]) ||
        (i + 4 < s.size() && IsDigit(s[i + 4])))
      return false;
  }
  if (int_digits == 0) return false;
  if (i < s.size() && s[i] == '.') {
    const size_t f = ++i;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (n == sizeof buf) return false;
      buf[n++] = s[i];
    }
    if (i == f) return false;
  }
  if (paren) {
    if (i == s.size() || s[i] != ')') return false;
    ++i;
  }
  if (i != s.size()) return false;
  d->negative = minus || paren;
  d->int_part = std::string_view(buf, int_digits);
  d->frac_part = std::string_view(buf + int_digits, n - int_digits);
  return true;
}

// money: AbstractColumnValue.asMoney's BigDecimal, then Decimal(2) at
// scale 2 (HALF_UP; money.fraction.digits), doubleValue() or
// toPlainString().
bool AppendMoney(std::string_view s, const RenderOptions& o, std::string* out) {
  char buf[48];
  DecimalText d;
  if (!ParseMoney(s, buf, &d)) return false;
  if (d.IsZero()) d.negative = false;
  char text[64];  // the number as BigDecimal.toPlainString() prints it
  size_t n = 0;
  if (d.negative) text[n++] = '-';
  for (char c : d.int_part) text[n++] = c;
  if (!d.frac_part.empty()) {
    text[n++] = '.';
    for (char c : d.frac_part) text[n++] = c;
  }
  const std::string_view plain(text, n);
  switch (o.decimal_handling) {
    case DecimalHandling::kPrecise:
      out->push_back('"');
      AppendUnscaledBase64(d, 2, out);
      out->push_back('"');
      break;
    case DecimalHandling::kDouble:
      AppendDecimalAsDouble(plain, d, out);
      break;
    case DecimalHandling::kString:
      out->push_back('"');
      out->append(plain);
      out->push_back('"');
      break;
  }
  return true;
}

// real and double precision: Debezium's FLOAT32 and FLOAT64 (a Java float
// and double), which Jackson writes with Float.toString and
// Double.toString. The log holds PostgreSQL's digits as a JSON number
// ("3.4028235e+38"), read back as the column's own type: a real is parsed
// as a float, so its shortest digits are a float's. NaN and the
// infinities, strings in the log, are Jackson's strings already. False
// for anything else.
bool AppendFloating(std::string_view v, bool single, std::string* out) {
  const char* const b = v.data();
  const char* const e = b + v.size();
  if (single) {
    float f = 0;
    auto [end, ec] = std::from_chars(b, e, f);
    if (ec != std::errc() || end != e) return false;
    AppendJavaFloat(f, out);
  } else {
    double d = 0;
    auto [end, ec] = std::from_chars(b, e, d);
    if (ec != std::errc() || end != e) return false;
    AppendJavaDouble(d, out);
  }
  return true;
}

// bytea's base64 (as stored) in lowercase hex, quoted, for
// binary.handling.mode hex. False for text that is not base64.
bool AppendQuotedBase64AsHex(std::string_view in, std::string* out) {
  const size_t start = out->size();
  out->push_back('"');
  if (!AppendBase64AsHex(in, out)) {
    out->resize(start);
    return false;
  }
  out->push_back('"');
  return true;
}

}  // namespace

bool DebeziumConverts(uint32_t oid, const RenderOptions& o) {
  switch (oid) {
    case pgtype::kBytea:
      return o.binary_handling == BinaryHandling::kHex;
    case pgtype::kFloat4:
    case pgtype::kFloat8:
    case pgtype::kNumeric:
    case pgtype::kMoney:
    case pgtype::kBit:
    case pgtype::kVarbit:
    case pgtype::kJson:
    case pgtype::kJsonb:
    case pgtype::kDate:
    case pgtype::kTime:
    case pgtype::kTimetz:
    case pgtype::kTimestamp:
    case pgtype::kTimestamptz:
    case pgtype::kInterval:
      return true;
    default:
      return false;
  }
}

void AppendDebeziumValue(std::string_view v, uint32_t oid, int32_t typmod,
                         const RenderOptions& o, bool snapshot_read,
                         std::string* out) {
  if (v == "null") {
    out->append(v);
    return;
  }
  std::string_view s;
  switch (oid) {
    case pgtype::kNumeric:
      AppendNumeric(v, typmod, o, out);
      return;
    case pgtype::kJson:
    case pgtype::kJsonb:
      // io.debezium.data.Json: the document as a string.
      if (!AppendJsonString(v, out)) out->append(v);
      return;
    case pgtype::kBytea:
      if (o.binary_handling == BinaryHandling::kHex &&
          PlainStringContent(v, &s) && AppendQuotedBase64AsHex(s, out))
        return;
      break;
    case pgtype::kFloat4:
    case pgtype::kFloat8:
      if (AppendFloating(v, oid == pgtype::kFloat4, out)) return;
      break;
    case pgtype::kMoney:
      if (PlainStringContent(v, &s) && AppendMoney(s, o, out)) return;
      break;
    case pgtype::kBit:
    case pgtype::kVarbit:
      if (PlainStringContent(v, &s) && dbz::AppendBits(s, typmod, false, out))
        return;
      break;
    default:
      if (PlainStringContent(v, &s) &&
          dbz::AppendTimeValue(s, oid, typmod, o, snapshot_read, out))
        return;
      break;
  }
  out->append(v);
}

}  // namespace cdc::event
