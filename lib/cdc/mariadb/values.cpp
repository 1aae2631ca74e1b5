#include "cdc/mariadb/values.h"

#include <iconv.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>

#include "cdc/base/coding.h"
#include "cdc/base/time.h"
#include "cdc/event/json_text.h"

namespace cdc::mariadb {

namespace {

// No byte of `b` has its high bit set (eight at a time).
bool IsAscii(std::string_view b) {
  uint64_t any = 0;
  size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, b.data() + i, 8);
    any |= w;
  }
  for (; i < b.size(); ++i) any |= static_cast<uint8_t>(b[i]);
  return (any & 0x8080808080808080ull) == 0;
}

using event::AppendBase64;
using event::AppendJsonString;

// MariaDB's latin1 is Windows-1252, with the five bytes 1252 leaves
// undefined mapped to the C1 controls of the same number.
constexpr uint16_t kCp1252High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void PutUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

struct NameMap {
  const char* mariadb;
  const char* iconv;
};
constexpr NameMap kIconvNames[] = {
    {"ucs2", "UCS-2BE"},
    {"utf16", "UTF-16BE"},
    {"utf16le", "UTF-16LE"},
    {"utf32", "UTF-32BE"},
    {"latin2", "ISO-8859-2"},
    {"latin5", "ISO-8859-9"},
    {"latin7", "ISO-8859-13"},
    {"greek", "ISO-8859-7"},
    {"hebrew", "ISO-8859-8"},
    {"cp1250", "CP1250"},
    {"cp1251", "CP1251"},
    {"cp1256", "CP1256"},
    {"cp1257", "CP1257"},
    {"cp850", "CP850"},
    {"cp852", "CP852"},
    {"cp866", "CP866"},
    {"koi8r", "KOI8-R"},
    {"koi8u", "KOI8-U"},
    {"sjis", "SHIFT_JIS"},
    {"cp932", "CP932"},
    {"ujis", "EUC-JP"},
    {"eucjpms", "EUC-JP-MS"},
    {"gbk", "GBK"},
    {"gb2312", "GB2312"},
    {"big5", "BIG5"},
    {"euckr", "EUC-KR"},
    {"tis620", "TIS-620"},
    {"macroman", "MACINTOSH"},
    {"macce", "MAC-CENTRALEUROPE"},
    {"armscii8", "ARMSCII-8"},
    {"geostd8", "GEORGIAN-PS"},
    {"keybcs2", "KEYBCS2"},
};

Status Truncated(const Column& c) {
  return Status::BadInput("row image ends inside column \"" + c.name + "\"");
}

uint64_t Le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t Be(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

bool Take(std::string_view* in, size_t n, std::string_view* out) {
  if (in->size() < n) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

void Pad(uint64_t v, int width, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  for (int i = static_cast<int>(r.ptr - buf); i < width; ++i)
    out->push_back('0');
  out->append(buf, r.ptr);
}

// ".f" with trailing zeros dropped, nothing for 0 (as PostgreSQL shows
// fractions of a second).
void AppendFraction(uint64_t micros, std::string* out) {
  if (micros == 0) return;
  char d[7];
  for (int i = 5; i >= 0; --i) {
    d[i] = static_cast<char>('0' + micros % 10);
    micros /= 10;
  }
  int n = 6;
  while (n > 0 && d[n - 1] == '0') --n;
  out->push_back('.');
  out->append(d, n);
}

// The fractional seconds of the *2 temporal types: (fsp + 1) / 2 bytes,
// big-endian, in units of 10^-(2 * bytes) seconds.
bool TakeFraction(std::string_view* in, int fsp, uint64_t* micros) {
  const int bytes = (fsp + 1) / 2;
  std::string_view b;
  if (!Take(in, bytes, &b)) return false;
  const uint64_t v = Be(b.data(), bytes);
  *micros = bytes == 0 ? 0 : bytes == 1 ? v * 10000 : bytes == 2 ? v * 100 : v;
  return true;
}

void AppendDate(uint64_t y, uint64_t m, uint64_t d, std::string* out) {
  Pad(y, 4, out);
  out->push_back('-');
  Pad(m, 2, out);
  out->push_back('-');
  Pad(d, 2, out);
}

void AppendClock(uint64_t h, uint64_t mi, uint64_t s, std::string* out) {
  Pad(h, 2, out);
  out->push_back(':');
  Pad(mi, 2, out);
  out->push_back(':');
  Pad(s, 2, out);
}

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

template <typename F>
void AppendFloat(F v, std::string* out) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    AppendNumber(v, out);
  }
}

// A TIMESTAMP's seconds since the epoch as UTC fields (all zero for
// MariaDB's zero timestamp, which is stored as 0).
WireTime UtcFields(uint64_t secs, uint64_t micros) {
  WireTime t;
  if (secs == 0 && micros == 0) return t;
  int64_t y;
  unsigned m, d;
  CivilFromDays(static_cast<int64_t>(secs / 86400), &y, &m, &d);
  const uint64_t hms = secs % 86400;
  t.year = static_cast<uint32_t>(y);
  t.month = m;
  t.day = d;
  t.hour = static_cast<uint32_t>(hms / 3600);
  t.minute = static_cast<uint32_t>(hms / 60 % 60);
  t.second = static_cast<uint32_t>(hms % 60);
  t.micros = static_cast<uint32_t>(micros);
  return t;
}

// The one rendering of every temporal type, whichever path decoded it:
// DATE "Y-M-D", TIME "[-]H:M:S[.f]", DATETIME "Y-M-DTH:M:S[.f]", TIMESTAMP
// the same in UTC with "Z".
void AppendTemporal(uint8_t real, const WireTime& t, std::string* out) {
  out->push_back('"');
  switch (real) {
    case 10:
    case 14:
      AppendDate(t.year, t.month, t.day, out);
      break;
    case 11:
    case 19:
      if (t.neg) out->push_back('-');
      AppendClock(t.hour, t.minute, t.second, out);
      AppendFraction(t.micros, out);
      break;
    default:  // 12, 18 DATETIME; 7, 17 TIMESTAMP
      AppendDate(t.year, t.month, t.day, out);
      out->push_back('T');
      AppendClock(t.hour, t.minute, t.second, out);
      AppendFraction(t.micros, out);
      if (real == 7 || real == 17) out->push_back('Z');
      break;
  }
  out->push_back('"');
}

// BIT(bits) from its big-endian bytes: "0101...", most significant first.
void AppendBitString(std::string_view b, uint32_t bits, std::string* out) {
  const size_t len = b.size();
  out->push_back('"');
  for (uint32_t i = 0; i < bits; ++i) {
    const uint32_t bit = bits - 1 - i;  // from the most significant
    const uint8_t byte =
        bit / 8 < len ? static_cast<uint8_t>(b[len - 1 - bit / 8]) : 0;
    out->push_back((byte >> (bit % 8)) & 1 ? '1' : '0');
  }
  out->push_back('"');
}

uint32_t BitCount(const Column& c) {
  return (c.meta >> 8) * 8 + (c.meta & 0xFF);
}

// GEOMETRY as stored: the SRID (4 bytes, little-endian), then WKB.
Status AppendGeometry(const Column& c, std::string_view b, std::string* out) {
  if (b.size() < 4) return Truncated(c);
  out->append("{\"srid\":");
  AppendNumber(GetFixed32(b.data()), out);
  out->append(",\"wkb\":\"");
  AppendBase64(b.substr(4), out);
  out->append("\"}");
  return Status::OK();
}

Status AppendDecimal(const Column& c, std::string_view* in, std::string* out) {
  size_t used = 0;
  auto text = DecodeDecimal(*in, c.meta & 0xFF, c.meta >> 8, &used);
  if (!text.ok()) return text.status().Annotate("column \"" + c.name + "\"");
  in->remove_prefix(used);
  out->push_back('"');
  out->append(*text);
  out->push_back('"');
  return Status::OK();
}

Status AppendText(const Column& c, std::string_view bytes, std::string* out) {
  if (c.charset == nullptr) {
    // No charset metadata (binlog_row_metadata below FULL): bytes as
    // UTF-8 when they are, else base64.
    if (AppendJsonString(bytes, out)) return Status::OK();
    out->push_back('"');
    AppendBase64(bytes, out);
    out->push_back('"');
    return Status::OK();
  }
  Status s = c.charset->AppendJson(bytes, out);
  if (!s.ok()) return s.Annotate("column \"" + c.name + "\"");
  return Status::OK();
}

}  // namespace

Result<Charset> Charset::ForName(std::string_view name) {
  Charset c;
  c.name_.assign(name);
  if (name == "utf8mb4" || name == "utf8mb3" || name == "utf8") {
    c.kind_ = kUtf8;
  } else if (name == "latin1") {
    c.kind_ = kLatin1;
  } else if (name == "binary") {
    c.kind_ = kBinary;
  } else if (name == "ascii") {
    c.kind_ = kAscii;
  } else {
    for (const NameMap& m : kIconvNames)
      if (name == m.mariadb) c.iconv_name_ = m.iconv;
    if (c.iconv_name_.empty())
      return Status::Config("character set " + std::string(name) +
                            " is not one cdc-capture converts to UTF-8");
    iconv_t cd = iconv_open("UTF-8", c.iconv_name_.c_str());
    if (cd == reinterpret_cast<iconv_t>(-1))
      return Status::Config("character set " + std::string(name) +
                            ": this system's iconv does not know " +
                            c.iconv_name_);
    iconv_close(cd);
    c.kind_ = kIconv;
  }
  return c;
}

Status Charset::ToUtf8(std::string_view b, std::string* out) const {
  switch (kind_) {
    case kUtf8:
    case kBinary:
      out->append(b);
      return Status::OK();
    case kAscii:
      for (char ch : b)
        if (static_cast<uint8_t>(ch) >= 0x80)
          return Status::BadInput("a byte above 0x7F in ascii text");
      out->append(b);
      return Status::OK();
    case kLatin1:
      for (char ch : b) {
        const uint8_t u = static_cast<uint8_t>(ch);
        PutUtf8(u >= 0x80 && u < 0xA0 ? kCp1252High[u - 0x80] : u, out);
      }
      return Status::OK();
    case kIconv: {
      iconv_t cd = iconv_open("UTF-8", iconv_name_.c_str());
      if (cd == reinterpret_cast<iconv_t>(-1))
        return Status::Config("iconv cannot convert " + name_);
      std::unique_ptr<void, int (*)(iconv_t)> closer(cd, iconv_close);
      std::string buf(b.size() * 4 + 16, '\0');
      char* src = const_cast<char*>(b.data());
      size_t src_left = b.size();
      char* dst = buf.data();
      size_t dst_left = buf.size();
      if (iconv(cd, &src, &src_left, &dst, &dst_left) ==
          static_cast<size_t>(-1))
        return Status::BadInput("text that is not valid " + name_);
      out->append(buf.data(), buf.size() - dst_left);
      return Status::OK();
    }
  }
  return Status::OK();
}

Status Charset::AppendJson(std::string_view b, std::string* out) const {
  if (kind_ == kBinary) {
    out->push_back('"');
    AppendBase64(b, out);
    out->push_back('"');
    return Status::OK();
  }
  if (kind_ == kUtf8) {
    if (!AppendJsonString(b, out))
      return Status::BadInput("text that is not valid UTF-8 in a " + name_ +
                              " column");
    return Status::OK();
  }
  // ASCII text is the same in every single-byte set capture converts
  // here: no conversion.
  if (kind_ != kIconv && IsAscii(b)) {
    event::AppendJsonStringUnchecked(b, out);  // ASCII is UTF-8
    return Status::OK();
  }
  std::string utf8;
  CDC_RETURN_IF_ERROR(ToUtf8(b, &utf8));
  if (!AppendJsonString(utf8, out))
    return Status::BadInput("text of " + name_ + " that is not valid UTF-8");
  return Status::OK();
}

Result<std::string> DecodeDecimal(std::string_view in, int precision, int scale,
                                  size_t* used) {
  static constexpr int kDigBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  if (precision < 1 || precision > 65 || scale < 0 || scale > precision ||
      scale > 38)
    return Status::BadInput("DECIMAL(" + std::to_string(precision) + "," +
                            std::to_string(scale) + ") is not a valid type");
  const int intg = precision - scale;
  const int intg0 = intg / 9, intg0x = intg % 9;
  const int frac0 = scale / 9, frac0x = scale % 9;
  const size_t size =
      intg0 * 4 + kDigBytes[intg0x] + frac0 * 4 + kDigBytes[frac0x];
  if (in.size() < size) return Status::BadInput("DECIMAL value is truncated");
  std::string b(in.substr(0, size));
  *used = size;
  const bool negative = (static_cast<uint8_t>(b[0]) & 0x80) == 0;
  b[0] = static_cast<char>(static_cast<uint8_t>(b[0]) ^ 0x80);
  if (negative)
    for (char& ch : b) ch = static_cast<char>(~static_cast<uint8_t>(ch));
  const char* p = b.data();
  std::string digits;  // integer part, then fraction
  auto group = [&](int bytes, int ndigits) -> bool {
    const uint64_t v = Be(p, bytes);
    p += bytes;
    char buf[16];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    const int len = static_cast<int>(r.ptr - buf);
    if (len > ndigits) return false;
    digits.append(ndigits - len, '0');
    digits.append(buf, r.ptr);
    return true;
  };
  bool ok = true;
  if (intg0x > 0) ok &= group(kDigBytes[intg0x], intg0x);
  for (int i = 0; i < intg0; ++i) ok &= group(4, 9);
  const size_t int_len = digits.size();
  for (int i = 0; i < frac0; ++i) ok &= group(4, 9);
  if (frac0x > 0) ok &= group(kDigBytes[frac0x], frac0x);
  if (!ok) return Status::BadInput("DECIMAL value has a digit group above 9s");
  std::string ip = digits.substr(0, int_len);
  const size_t nz = ip.find_first_not_of('0');
  ip = nz == std::string::npos ? "0" : ip.substr(nz);
  std::string text;
  const std::string frac = digits.substr(int_len);
  if (negative &&
      (ip != "0" || frac.find_first_not_of('0') != std::string::npos))
    text.push_back('-');
  text.append(ip);
  if (scale > 0) {
    text.push_back('.');
    text.append(frac);
  }
  return text;
}

std::string TypeName(const Column& c) {
  const std::string u = c.is_unsigned ? " unsigned" : "";
  const int fsp = c.meta;
  auto with_fsp = [&](const char* t) {
    return fsp > 0 ? std::string(t) + "(" + std::to_string(fsp) + ")"
                   : std::string(t);
  };
  const bool binary =
      c.charset != nullptr && c.charset->kind() == Charset::kBinary;
  switch (c.real) {
    case 1:
      return "tinyint" + u;
    case 2:
      return "smallint" + u;
    case 9:
      return "mediumint" + u;
    case 3:
      return "int" + u;
    case 8:
      return "bigint" + u;
    case 4:
      return "float" + u;
    case 5:
      return "double" + u;
    case 246:
      return "decimal(" + std::to_string(c.meta & 0xFF) + "," +
             std::to_string(c.meta >> 8) + ")" + u;
    case 13:
      return "year";
    case 10:
    case 14:
      return "date";
    case 11:
      return "time";
    case 19:
      return with_fsp("time");
    case 12:
      return "datetime";
    case 18:
      return with_fsp("datetime");
    case 7:
      return "timestamp";
    case 17:
      return with_fsp("timestamp");
    case 16:
      return "bit(" + std::to_string((c.meta >> 8) * 8 + (c.meta & 0xFF)) + ")";
    case 15:
    case 253:
      return binary ? "varbinary" : "varchar";
    case 254:
      return binary ? "binary" : "char";
    case 247:
      return "enum";
    case 248:
      return "set";
    case 252:
      return binary ? "blob" : "text";
    case 245:
      return "json";
    case 255:
      return "geometry";
    default:
      return "type " + std::to_string(c.real);
  }
}

void AppendWireInt(int64_t v, std::string* out) { AppendNumber(v, out); }
void AppendWireUint(uint64_t v, std::string* out) { AppendNumber(v, out); }
void AppendWireFloat(float v, std::string* out) { AppendFloat(v, out); }
void AppendWireDouble(double v, std::string* out) { AppendFloat(v, out); }

Status AppendWireTime(const Column& c, const WireTime& t, std::string* out) {
  switch (c.real) {
    case 10:
    case 14:
    case 11:
    case 19:
    case 12:
    case 18:
    case 7:
    case 17:
      AppendTemporal(c.real, t, out);
      return Status::OK();
    default:
      return Status::Internal("column \"" + c.name + "\" is not temporal");
  }
}

Status AppendWireBytes(const Column& c, std::string_view b, std::string* out) {
  switch (c.real) {
    case 246: {  // DECIMAL's text: [-]digits[.digits], as DecodeDecimal
      size_t i = b.starts_with('-') ? 1 : 0;
      bool digits = false, dot = false;
      for (; i < b.size(); ++i) {
        if (b[i] >= '0' && b[i] <= '9') {
          digits = true;
        } else if (b[i] == '.' && !dot) {
          dot = true;
        } else {
          digits = false;
          break;
        }
      }
      if (!digits)
        return Status::BadInput("column \"" + c.name +
                                "\": a DECIMAL the server sent as \"" +
                                std::string(b.substr(0, 80)) + "\"");
      out->push_back('"');
      out->append(b);
      out->push_back('"');
      return Status::OK();
    }
    case 16:
      AppendBitString(b, BitCount(c), out);
      return Status::OK();
    case 255:
      return AppendGeometry(c, b, out);
    case 245:
      return Status::Config(
          "column \"" + c.name +
          "\" is MySQL's binary JSON, which cdc-capture does not read");
    default:
      return AppendText(c, b, out);
  }
}

Status DecodeRowImage(const std::vector<Column>& cols,
                      const std::vector<bool>& present, std::string_view* rows,
                      std::vector<std::string>* values) {
  size_t n_present = 0;
  for (size_t i = 0; i < cols.size() && i < present.size(); ++i)
    n_present += present[i];
  const size_t null_bytes = (n_present + 7) / 8;
  if (rows->size() < null_bytes)
    return Status::BadInput("a row image is truncated");
  const std::string_view nulls = rows->substr(0, null_bytes);
  rows->remove_prefix(null_bytes);
  values->assign(cols.size(), std::string());
  size_t k = 0;
  for (size_t i = 0; i < cols.size() && i < present.size(); ++i) {
    if (!present[i]) continue;
    std::string& v = (*values)[i];
    if ((static_cast<uint8_t>(nulls[k / 8]) >> (k % 8)) & 1)
      v = "null";
    else
      CDC_RETURN_IF_ERROR(AppendValue(cols[i], rows, &v));
    ++k;
  }
  return Status::OK();
}

Status AppendValue(const Column& c, std::string_view* in, std::string* out) {
  std::string_view b;
  switch (c.real) {
    case 1:
    case 2:
    case 9:
    case 3:
    case 8: {
      const int n = c.real == 1   ? 1
                    : c.real == 2 ? 2
                    : c.real == 9 ? 3
                    : c.real == 3 ? 4
                                  : 8;
      if (!Take(in, n, &b)) return Truncated(c);
      const uint64_t v = Le(b.data(), n);
      if (c.is_unsigned) {
        AppendNumber(v, out);
      } else {
        const int shift = 64 - 8 * n;
        AppendNumber(static_cast<int64_t>(v << shift) >> shift, out);
      }
      return Status::OK();
    }
    case 4: {
      if (!Take(in, 4, &b)) return Truncated(c);
      float f;
      const uint32_t v = GetFixed32(b.data());
      std::memcpy(&f, &v, 4);
      AppendFloat(f, out);
      return Status::OK();
    }
    case 5: {
      if (!Take(in, 8, &b)) return Truncated(c);
      double d;
      const uint64_t v = GetFixed64(b.data());
      std::memcpy(&d, &v, 8);
      AppendFloat(d, out);
      return Status::OK();
    }
    case 246:
      return AppendDecimal(c, in, out);
    case 13: {
      if (!Take(in, 1, &b)) return Truncated(c);
      const uint8_t y = static_cast<uint8_t>(b[0]);
      AppendNumber(y == 0 ? 0 : 1900 + y, out);
      return Status::OK();
    }
    case 10:
    case 14: {
      if (!Take(in, 3, &b)) return Truncated(c);
      const uint64_t v = Le(b.data(), 3);
      WireTime t;
      t.year = static_cast<uint32_t>(v >> 9);
      t.month = (v >> 5) & 15;
      t.day = v & 31;
      AppendTemporal(c.real, t, out);
      return Status::OK();
    }
    case 11: {  // old TIME: [-]HHMMSS as a 3-byte integer
      if (!Take(in, 3, &b)) return Truncated(c);
      int64_t v = static_cast<int64_t>(Le(b.data(), 3) << 40) >> 40;
      WireTime t;
      t.neg = v < 0;
      if (v < 0) v = -v;
      t.hour = static_cast<uint32_t>(v / 10000);
      t.minute = static_cast<uint32_t>(v / 100 % 100);
      t.second = static_cast<uint32_t>(v % 100);
      AppendTemporal(c.real, t, out);
      return Status::OK();
    }
    case 19: {  // TIME2
      const int fsp = c.meta;
      if (fsp > 6) return Status::BadInput("TIME precision above 6");
      const int fb = (fsp + 1) / 2;
      if (!Take(in, 3 + fb, &b)) return Truncated(c);
      // The whole value is one big-endian number offset by half its
      // range; negative times count down from the offset.
      int64_t intpart = static_cast<int64_t>(Be(b.data(), 3)) - 0x800000;
      int64_t frac = 0;
      if (fb == 1) {
        frac = static_cast<uint8_t>(b[3]);
        if (intpart < 0 && frac != 0) {
          ++intpart;
          frac -= 0x100;
        }
        frac *= 10000;
      } else if (fb == 2) {
        frac = static_cast<int64_t>(Be(b.data() + 3, 2));
        if (intpart < 0 && frac != 0) {
          ++intpart;
          frac -= 0x10000;
        }
        frac *= 100;
      } else if (fb == 3) {
        const int64_t packed =
            static_cast<int64_t>(Be(b.data(), 6)) - 0x800000000000LL;
        intpart = packed >> 24;
        frac = packed & 0xFFFFFF;
        if (packed < 0 && frac != 0) {
          // floor division above: back to truncation toward zero
          ++intpart;
          frac -= 0x1000000;
        }
      }
      int64_t packed = intpart * (int64_t{1} << 24) + frac;
      WireTime t;
      t.neg = packed < 0;
      if (packed < 0) packed = -packed;
      const uint64_t hms = static_cast<uint64_t>(packed) >> 24;
      t.micros =
          static_cast<uint32_t>(static_cast<uint64_t>(packed) & 0xFFFFFF);
      t.hour = static_cast<uint32_t>((hms >> 12) & 0x3FF);
      t.minute = static_cast<uint32_t>((hms >> 6) & 63);
      t.second = static_cast<uint32_t>(hms & 63);
      AppendTemporal(c.real, t, out);
      return Status::OK();
    }
    case 12: {  // old DATETIME: YYYYMMDDHHMMSS as an 8-byte integer
      if (!Take(in, 8, &b)) return Truncated(c);
      const uint64_t v = Le(b.data(), 8);
      const uint64_t d = v / 1000000, hms = v % 1000000;
      WireTime t;
      t.year = static_cast<uint32_t>(d / 10000);
      t.month = static_cast<uint32_t>(d / 100 % 100);
      t.day = static_cast<uint32_t>(d % 100);
      t.hour = static_cast<uint32_t>(hms / 10000);
      t.minute = static_cast<uint32_t>(hms / 100 % 100);
      t.second = static_cast<uint32_t>(hms % 100);
      AppendTemporal(c.real, t, out);
      return Status::OK();
    }
    case 18: {  // DATETIME2
      const int fsp = c.meta;
      if (fsp > 6) return Status::BadInput("DATETIME precision above 6");
      if (!Take(in, 5, &b)) return Truncated(c);
      const uint64_t v = Be(b.data(), 5) - 0x8000000000ULL;
      uint64_t micros;
      if (!TakeFraction(in, fsp, &micros)) return Truncated(c);
      const uint64_t ymd = v >> 17, hms = v & ((1 << 17) - 1);
      const uint64_t ym = ymd >> 5;
      WireTime t;
      t.year = static_cast<uint32_t>(ym / 13);
      t.month = static_cast<uint32_t>(ym % 13);
      t.day = static_cast<uint32_t>(ymd & 31);
      t.hour = static_cast<uint32_t>(hms >> 12);
      t.minute = static_cast<uint32_t>((hms >> 6) & 63);
      t.second = static_cast<uint32_t>(hms & 63);
      t.micros = static_cast<uint32_t>(micros);
      AppendTemporal(c.real, t, out);
      return Status::OK();
    }
    case 7: {
      if (!Take(in, 4, &b)) return Truncated(c);
      AppendTemporal(c.real, UtcFields(GetFixed32(b.data()), 0), out);
      return Status::OK();
    }
    case 17: {  // TIMESTAMP2
      const int fsp = c.meta;
      if (fsp > 6) return Status::BadInput("TIMESTAMP precision above 6");
      if (!Take(in, 4, &b)) return Truncated(c);
      uint64_t micros;
      const uint64_t secs = Be(b.data(), 4);
      if (!TakeFraction(in, fsp, &micros)) return Truncated(c);
      AppendTemporal(c.real, UtcFields(secs, micros), out);
      return Status::OK();
    }
    case 16: {  // BIT(n): n = bytes * 8 + bits, big-endian
      const uint32_t bits = BitCount(c);
      if (!Take(in, (bits + 7) / 8, &b)) return Truncated(c);
      AppendBitString(b, bits, out);
      return Status::OK();
    }
    case 15:
    case 253:
    case 254: {
      uint32_t max = c.meta;
      if (c.real == 254) {
        const uint8_t b0 = c.meta & 0xFF, b1 = c.meta >> 8;
        max = (b0 & 0x30) != 0x30 ? b1 | (((b0 & 0x30) ^ 0x30) << 4) : b1;
      }
      const int lb = max < 256 ? 1 : 2;
      if (!Take(in, lb, &b)) return Truncated(c);
      const uint64_t len = Le(b.data(), lb);
      if (!Take(in, len, &b)) return Truncated(c);
      // BINARY(n) is logged without its trailing zero bytes; a SELECT
      // shows them.
      if (c.real == 254 && len < max && c.charset != nullptr &&
          c.charset->kind() == Charset::kBinary) {
        std::string padded(b);
        padded.resize(max, '\0');
        return AppendText(c, padded, out);
      }
      return AppendText(c, b, out);
    }
    case 247: {  // ENUM: a 1-based index into the labels (0: '')
      const int n = c.meta >> 8;
      if (n != 1 && n != 2) return Status::BadInput("ENUM of odd size");
      if (!Take(in, n, &b)) return Truncated(c);
      const uint64_t i = Le(b.data(), n);
      if (i == 0) {
        out->append("\"\"");
        return Status::OK();
      }
      if (c.labels == nullptr || i > c.labels->size())
        return Status::BadInput("ENUM index " + std::to_string(i) +
                                " of column \"" + c.name +
                                "\" has no label (binlog_row_metadata=FULL "
                                "gives them)");
      return AppendText(c, (*c.labels)[i - 1], out);
    }
    case 248: {  // SET: a bitmap of labels, shown as MariaDB does: "a,b"
      const int n = c.meta >> 8;
      if (n < 1 || n > 8) return Status::BadInput("SET of odd size");
      if (!Take(in, n, &b)) return Truncated(c);
      const uint64_t bits = Le(b.data(), n);
      std::string text;
      for (int i = 0; i < 64; ++i) {
        if (!((bits >> i) & 1)) continue;
        if (c.labels == nullptr || static_cast<size_t>(i) >= c.labels->size())
          return Status::BadInput("SET member " + std::to_string(i) +
                                  " of column \"" + c.name + "\" has no label");
        if (!text.empty()) text.push_back(',');
        text.append((*c.labels)[i]);
      }
      return AppendText(c, text, out);
    }
    case 252:
    case 249:
    case 250:
    case 251:
    case 245:
    case 255: {
      const int lb = c.meta;
      if (lb < 1 || lb > 4)
        return Status::BadInput("BLOB length of " + std::to_string(lb) +
                                " bytes");
      if (!Take(in, lb, &b)) return Truncated(c);
      const uint64_t len = Le(b.data(), lb);
      if (!Take(in, len, &b)) return Truncated(c);
      if (c.real == 255) return AppendGeometry(c, b, out);
      if (c.real == 245)
        return Status::Config(
            "column \"" + c.name +
            "\" is MySQL's binary JSON, which cdc-capture does not read");
      return AppendText(c, b, out);
    }
    default:
      return Status::Config("column \"" + c.name + "\" has binlog type " +
                            std::to_string(c.real) +
                            ", which cdc-capture does not read");
  }
}

}  // namespace cdc::mariadb
