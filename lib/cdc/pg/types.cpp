#include "cdc/pg/types.h"

#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "cdc/event/json_text.h"

namespace cdc::pg {

using event::AppendBase64;
using event::AppendCompactJson;
using event::AppendJsonString;
using event::HexValue;
using event::IsDigit;
using event::IsJsonNumber;
using event::IsValidUtf8;

namespace {

namespace t = type_oid;

// ---- bytea ---------------------------------------------------------------

// PostgreSQL's older bytea output, the escape form: printable bytes as
// they are, "\\" and "\ooo" octal escapes.
bool DecodeEscapedBytea(std::string_view s, std::string* bytes) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      bytes->push_back(s[i]);
    } else if (i + 1 < s.size() && s[i + 1] == '\\') {
      bytes->push_back('\\');
      ++i;
    } else {
      if (i + 3 >= s.size()) return false;
      int v = 0;
      for (size_t k = i + 1; k <= i + 3; ++k) {
        if (s[k] < '0' || s[k] > '7') return false;
        v = v * 8 + (s[k] - '0');
      }
      if (v > 255) return false;
      bytes->push_back(static_cast<char>(v));
      i += 3;
    }
  }
  return true;
}

// Appends a bytea's base64 JSON string. The hex form ("\x0a0b", what
// capture's sessions send) is converted piece by piece, so a large value is
// never held decoded as a whole beside its text and its rendering.
bool AppendBytea(std::string_view s, std::string* out) {
  if (s.size() < 2 || s[0] != '\\' || s[1] != 'x') {
    std::string bytes;
    if (!DecodeEscapedBytea(s, &bytes)) return false;
    AppendBinaryValue(bytes, out);
    return true;
  }
  if (s.size() % 2 != 0) return false;
  const size_t mark = out->size();
  const size_t bytes = (s.size() - 2) / 2;
  out->reserve(mark + (bytes + 2) / 3 * 4 + 2);
  out->push_back('"');
  constexpr size_t kPiece = 3 * 4096;  // a multiple of 3: no padding inside
  char piece[kPiece];
  for (size_t i = 2; i < s.size();) {
    size_t n = 0;
    for (; n < kPiece && i < s.size(); ++n, i += 2) {
      int hi = HexValue(s[i]), lo = HexValue(s[i + 1]);
      if (hi < 0 || lo < 0) {
        out->resize(mark);
        return false;
      }
      piece[n] = static_cast<char>(hi * 16 + lo);
    }
    AppendBase64(std::string_view(piece, n), out);
  }
  out->push_back('"');
  return true;
}

// ---- dates and times -----------------------------------------------------

// Days since 1970-01-01 of a proleptic Gregorian date (astronomical years).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int* m, int* d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

struct DateTime {
  int64_t year = 0;  // astronomical: 1 BC is 0
  int month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::string_view fraction;  // digits after '.', without the '.'
  bool has_time = false;
  bool has_offset = false;
  int offset_seconds = 0;  // east of UTC
};

// Reads `n` digits at s[*p...] (n == 0: one or more).
bool ReadNumber(std::string_view s, size_t* p, size_t n, int64_t* v) {
  size_t start = *p, end = start;
  while (end < s.size() && IsDigit(s[end]) && (n == 0 || end - start < n)) {
    ++end;
  }
  if (end == start || (n != 0 && end - start != n) || end - start > 12) {
    return false;
  }
  *v = 0;
  for (size_t i = start; i < end; ++i) *v = *v * 10 + (s[i] - '0');
  *p = end;
  return true;
}

bool Expect(std::string_view s, size_t* p, char c) {
  if (*p >= s.size() || s[*p] != c) return false;
  ++*p;
  return true;
}

// ISO DateStyle output: "YYYY-MM-DD[ HH:MM:SS[.ffffff][±HH[:MM[:SS]]]][ BC]".
bool ParseDateTime(std::string_view s, bool want_time, bool want_offset,
                   DateTime* dt) {
  size_t p = 0;
  int64_t y, mo, d;
  if (!ReadNumber(s, &p, 0, &y) || p < 4 || !Expect(s, &p, '-') ||
      !ReadNumber(s, &p, 2, &mo) || !Expect(s, &p, '-') ||
      !ReadNumber(s, &p, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31) {
    return false;
  }
  dt->year = y;
  dt->month = static_cast<int>(mo);
  dt->day = static_cast<int>(d);
  if (want_time) {
    int64_t h, mi, se;
    if (!Expect(s, &p, ' ') || !ReadNumber(s, &p, 2, &h) ||
        !Expect(s, &p, ':') || !ReadNumber(s, &p, 2, &mi) ||
        !Expect(s, &p, ':') || !ReadNumber(s, &p, 2, &se) || h > 23 ||
        mi > 59 || se > 60) {
      return false;
    }
    dt->has_time = true;
    dt->hour = static_cast<int>(h);
    dt->minute = static_cast<int>(mi);
    dt->second = static_cast<int>(se);
    if (p < s.size() && s[p] == '.') {
      size_t start = ++p;
      while (p < s.size() && IsDigit(s[p])) ++p;
      if (p == start || p - start > 6) return false;
      dt->fraction = s.substr(start, p - start);
    }
    if (want_offset) {
      if (p >= s.size() || (s[p] != '+' && s[p] != '-')) return false;
      int sign = s[p++] == '-' ? -1 : 1;
      int64_t oh, om = 0, os = 0;
      if (!ReadNumber(s, &p, 2, &oh)) return false;
      if (p < s.size() && s[p] == ':') {
        ++p;
        if (!ReadNumber(s, &p, 2, &om)) return false;
        if (p < s.size() && s[p] == ':') {
          ++p;
          if (!ReadNumber(s, &p, 2, &os)) return false;
        }
      }
      if (om > 59 || os > 59) return false;
      dt->has_offset = true;
      dt->offset_seconds = sign * static_cast<int>(oh * 3600 + om * 60 + os);
    }
  }
  if (s.substr(p) == " BC") {
    if (dt->year == 0) return false;
    dt->year = 1 - dt->year;
    p = s.size();
  }
  return p == s.size();
}

void AppendDate(int64_t year, int month, int day, std::string* out) {
  char buf[48];
  if (year >= 0 && year <= 9999) {
    snprintf(buf, sizeof buf, "%04lld-%02d-%02d", static_cast<long long>(year),
             month, day);
  } else {
    snprintf(buf, sizeof buf, "%c%04lld-%02d-%02d", year < 0 ? '-' : '+',
             static_cast<long long>(year < 0 ? -year : year), month, day);
  }
  out->append(buf);
}

void AppendClock(int hour, int minute, int second, std::string* out) {
  char buf[16];
  snprintf(buf, sizeof buf, "T%02d:%02d:%02d", hour, minute, second);
  out->append(buf);
}

// "infinity"/"-infinity" for dates and timestamps.
bool IsInfinity(std::string_view s) {
  return s == "infinity" || s == "-infinity";
}

bool AppendDateValue(std::string_view s, std::string* out) {
  DateTime dt;
  if (!ParseDateTime(s, false, false, &dt)) return false;
  out->push_back('"');
  AppendDate(dt.year, dt.month, dt.day, out);
  out->push_back('"');
  return true;
}

bool AppendTimestampValue(std::string_view s, std::string* out) {
  DateTime dt;
  if (!ParseDateTime(s, true, false, &dt)) return false;
  out->push_back('"');
  AppendDate(dt.year, dt.month, dt.day, out);
  AppendClock(dt.hour, dt.minute, dt.second, out);
  if (!dt.fraction.empty()) {
    out->push_back('.');
    out->append(dt.fraction);
  }
  out->push_back('"');
  return true;
}

bool AppendTimestamptzValue(std::string_view s, std::string* out) {
  DateTime dt;
  if (!ParseDateTime(s, true, true, &dt)) return false;
  int64_t secs = DaysFromCivil(dt.year, dt.month, dt.day) * 86400 +
                 dt.hour * 3600 + dt.minute * 60 + dt.second -
                 dt.offset_seconds;
  int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  int64_t sod = secs - days * 86400;
  int64_t y;
  int m, d;
  CivilFromDays(days, &y, &m, &d);
  out->push_back('"');
  AppendDate(y, m, d, out);
  AppendClock(static_cast<int>(sod / 3600), static_cast<int>(sod / 60 % 60),
              static_cast<int>(sod % 60), out);
  out->push_back('.');
  out->append(dt.fraction);
  out->append(6 - dt.fraction.size(), '0');
  out->append("Z\"");
  return true;
}

// ---- arrays --------------------------------------------------------------

// Elements of a one-dimensional array in text form ("{a,"b c",NULL}");
// nullopt elements are NULL. False if `s` is not such an array (for
// example multi-dimensional, or with a "[1:2]=" bounds decoration).
bool SplitArray(std::string_view s,
                std::vector<std::optional<std::string>>* elems) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  if (s.size() == 2) return true;
  size_t p = 1;
  while (true) {
    std::string elem;
    bool quoted = false, escaped = false;
    if (s[p] == '"') {
      quoted = true;
      ++p;
      while (p < s.size() && s[p] != '"') {
        if (s[p] == '\\' && ++p >= s.size()) return false;
        elem.push_back(s[p++]);
      }
      if (p >= s.size()) return false;
      ++p;
    } else {
      while (p < s.size() && s[p] != ',' && s[p] != '}') {
        if (s[p] == '{' || s[p] == '"') return false;
        if (s[p] == '\\') {
          escaped = true;
          if (++p >= s.size()) return false;
        }
        elem.push_back(s[p++]);
      }
      if (elem.empty()) return false;
    }
    // As array_in reads it: an unquoted, unescaped NULL in any case.
    if (!quoted && !escaped && elem.size() == 4 && (elem[0] | 0x20) == 'n' &&
        (elem[1] | 0x20) == 'u' && (elem[2] | 0x20) == 'l' &&
        (elem[3] | 0x20) == 'l') {
      elems->emplace_back(std::nullopt);
    } else {
      elems->emplace_back(std::move(elem));
    }
    if (p >= s.size()) return false;
    if (s[p] == '}') return p + 1 == s.size();
    if (s[p] != ',') return false;
    ++p;
    if (p >= s.size()) return false;
  }
}

// ---- dispatch ------------------------------------------------------------

// Built-in array types (typdelim ',') and their element types.
constexpr std::pair<Oid, Oid> kBuiltinArrays[] = {
    {1000, t::kBool},    {1001, t::kBytea},       {1002, t::kChar},
    {1003, t::kName},    {1005, t::kInt2},        {1007, t::kInt4},
    {1009, t::kText},    {1014, t::kBpchar},      {1015, t::kVarchar},
    {1016, t::kInt8},    {1021, t::kFloat4},      {1022, t::kFloat8},
    {1028, t::kOid},     {143, t::kXml},          {199, t::kJson},
    {791, t::kMoney},    {1040, t::kMacaddr},     {1041, t::kInet},
    {651, t::kCidr},     {1115, t::kTimestamp},   {1182, t::kDate},
    {1183, t::kTime},    {1185, t::kTimestamptz}, {1187, t::kInterval},
    {1231, t::kNumeric}, {1270, t::kTimetz},      {1561, t::kBit},
    {1563, t::kVarbit},  {2951, t::kUuid},        {3807, t::kJsonb},
};

// Names for error messages, of the types whose text form is checked.
constexpr std::pair<Oid, const char*> kCheckedTypes[] = {
    {t::kBool, "bool"},
    {t::kBytea, "bytea"},
    {t::kInt8, "int8"},
    {t::kInt2, "int2"},
    {t::kInt4, "int4"},
    {t::kOid, "oid"},
    {t::kFloat4, "float4"},
    {t::kFloat8, "float8"},
    {t::kDate, "date"},
    {t::kTimestamp, "timestamp"},
    {t::kTimestamptz, "timestamptz"},
};

// pg_catalog names of the element types above (an array is "_" + its
// element's name).
constexpr std::pair<Oid, std::string_view> kBuiltinNames[] = {
    {t::kBool, "bool"},
    {t::kBytea, "bytea"},
    {t::kChar, "char"},
    {t::kName, "name"},
    {t::kInt8, "int8"},
    {t::kInt2, "int2"},
    {t::kInt4, "int4"},
    {t::kText, "text"},
    {t::kOid, "oid"},
    {t::kJson, "json"},
    {t::kXml, "xml"},
    {t::kFloat4, "float4"},
    {t::kFloat8, "float8"},
    {t::kMoney, "money"},
    {t::kMacaddr, "macaddr"},
    {t::kInet, "inet"},
    {t::kCidr, "cidr"},
    {t::kBpchar, "bpchar"},
    {t::kVarchar, "varchar"},
    {t::kDate, "date"},
    {t::kTime, "time"},
    {t::kTimestamp, "timestamp"},
    {t::kTimestamptz, "timestamptz"},
    {t::kInterval, "interval"},
    {t::kTimetz, "timetz"},
    {t::kBit, "bit"},
    {t::kVarbit, "varbit"},
    {t::kNumeric, "numeric"},
    {t::kUuid, "uuid"},
    {t::kJsonb, "jsonb"},
};

Oid BuiltinArrayElement(Oid array) {
  for (const auto& [a, e] : kBuiltinArrays) {
    if (a == array) return e;
  }
  return 0;
}

std::string TypeName(Oid oid) {
  for (const auto& [o, name] : kCheckedTypes) {
    if (o == oid) return name;
  }
  return "type OID " + std::to_string(oid);
}

// Follows domains to their base type (bounded, in case of a cyclic map).
Oid ResolveDomain(Oid oid, const TypeCatalog* catalog) {
  // Types of pg_type.dat (OIDs below 10000, FirstGenbkiObjectId) are never
  // domains: no lookup for the common case.
  if (catalog == nullptr || oid < 10000 || catalog->domain_base.empty())
    return oid;
  for (int i = 0; i < 32; ++i) {
    auto it = catalog->domain_base.find(oid);
    if (it == catalog->domain_base.end()) break;
    oid = it->second;
  }
  return oid;
}

Status Invalid(Oid oid, std::string_view text, const char* what = nullptr) {
  std::string shown;
  for (char c : text.substr(0, 64)) {
    shown.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (text.size() > 64) shown += "...";
  std::string type = what != nullptr ? what : TypeName(oid);
  return Status::BadInput("invalid " + type + " value \"" + shown + "\"");
}

Status InvalidUtf8(Oid oid) {
  return Status::BadInput("invalid UTF-8 in a value of type OID " +
                          std::to_string(oid));
}

// `json_null` (never null) is set when the value is a json/jsonb whose
// value is the JSON literal null; `nulls` (may be null) collects array
// elements that are.
Status AppendValue(Oid oid, std::string_view text, const TypeCatalog* catalog,
                   int depth, std::string* out, bool* json_null,
                   JsonNulls* nulls);

Status AppendArray(Oid array_oid, Oid element, std::string_view text,
                   const TypeCatalog* catalog, int depth, std::string* out,
                   JsonNulls* nulls) {
  std::vector<std::optional<std::string>> elems;
  if (!SplitArray(text, &elems)) {
    // Multi-dimensional or decorated with bounds: the text form, as it is.
    bool not_flat = text.substr(0, 2) == "{{" || text.substr(0, 1) == "[";
    if (not_flat && AppendJsonString(text, out)) {
      return Status::OK();
    }
    return Invalid(array_oid, text, "array");
  }
  out->push_back('[');
  for (size_t i = 0; i < elems.size(); ++i) {
    if (i > 0) out->push_back(',');
    if (!elems[i]) {
      out->append("null");
      continue;
    }
    bool json_null = false;
    CDC_RETURN_IF_ERROR(AppendValue(element, *elems[i], catalog, depth + 1, out,
                                    &json_null, nullptr));
    if (json_null && nulls != nullptr) {
      nulls->elements.push_back(static_cast<uint32_t>(i));
    }
  }
  out->push_back(']');
  return Status::OK();
}

Status AppendValue(Oid oid, std::string_view text, const TypeCatalog* catalog,
                   int depth, std::string* out, bool* json_null,
                   JsonNulls* nulls) {
  oid = ResolveDomain(oid, catalog);
  bool ok = true;
  switch (oid) {
    case t::kInt2:
    case t::kInt4:
    case t::kInt8:
      ok = IsJsonNumber(text, true);
      if (ok) out->append(text);
      break;
    case t::kOid:
      ok = IsJsonNumber(text, true) && text[0] != '-';
      if (ok) out->append(text);
      break;
    case t::kFloat4:
    case t::kFloat8:
      if (text == "NaN" || text == "Infinity" || text == "-Infinity") {
        (void)AppendJsonString(text, out);
      } else {
        ok = IsJsonNumber(text, false);
        if (ok) out->append(text);
      }
      break;
    case t::kBool:
      ok = text == "t" || text == "f";
      if (ok) out->append(text == "t" ? "true" : "false");
      break;
    case t::kJson:
    case t::kJsonb: {
      const size_t start = out->size();
      if (AppendCompactJson(text, out)) {
        *json_null = std::string_view(*out).substr(start) == "null";
      } else if (!AppendJsonString(text, out)) {
        return InvalidUtf8(oid);
      }
      break;
    }
    case t::kBytea:
      ok = AppendBytea(text, out);
      break;
    case t::kDate:
      if (IsInfinity(text)) {
        (void)AppendJsonString(text, out);
      } else {
        ok = AppendDateValue(text, out);
      }
      break;
    case t::kTimestamp:
    case t::kTimestamptz:
      if (IsInfinity(text)) {
        (void)AppendJsonString(text, out);
      } else {
        ok = oid == t::kTimestamp ? AppendTimestampValue(text, out)
                                  : AppendTimestamptzValue(text, out);
      }
      break;
    default: {
      // An array's text starts with its braces or its bounds ("[1:2]="):
      // other values (text, uuid...) skip looking for an element type.
      Oid element = 0;
      if (!text.empty() && (text[0] == '{' || text[0] == '[')) {
        element = BuiltinArrayElement(oid);
        if (element == 0 && catalog != nullptr &&
            !catalog->array_element.empty()) {
          auto it = catalog->array_element.find(oid);
          if (it != catalog->array_element.end()) element = it->second;
        }
      }
      // Arrays do not nest as types; the bound only guards against a
      // catalog that claims they do.
      if (element != 0 && depth < 4) {
        return AppendArray(oid, element, text, catalog, depth, out, nulls);
      }
      if (!AppendJsonString(text, out)) return InvalidUtf8(oid);
    }
  }
  if (!ok) return Invalid(oid, text);
  return Status::OK();
}

}  // namespace

Oid BuiltinTypeOid(std::string_view name) {
  const bool array = !name.empty() && name[0] == '_';
  if (array) name.remove_prefix(1);
  for (const auto& [oid, n] : kBuiltinNames) {
    if (n != name) continue;
    if (!array) return oid;
    for (const auto& [a, e] : kBuiltinArrays) {
      if (e == oid) return a;
    }
  }
  return 0;
}

void AppendBinaryValue(std::string_view bytes, std::string* out) {
  out->push_back('"');
  AppendBase64(bytes, out);
  out->push_back('"');
}

Status AppendTextValue(Oid type_oid, std::string_view text,
                       const TypeCatalog* catalog, std::string* out,
                       JsonNulls* json_nulls) {
  // The commonest types first, rendered as AppendValue would, without its
  // bookkeeping (these are no domains, and their text is never an array):
  // a snapshot renders millions of them. A value they refuse goes the
  // general way, which says why.
  switch (type_oid) {
    case t::kInt2:
    case t::kInt4:
    case t::kInt8:
      if (!IsJsonNumber(text, true)) break;
      out->append(text);
      if (json_nulls != nullptr) json_nulls->clear();
      return Status::OK();
    case t::kText:
    case t::kVarchar:
    case t::kBpchar:
      if (!AppendJsonString(text, out)) break;
      if (json_nulls != nullptr) json_nulls->clear();
      return Status::OK();
    default:
      break;
  }
  size_t mark = out->size();
  JsonNulls scratch;
  JsonNulls* nulls = json_nulls != nullptr ? json_nulls : &scratch;
  nulls->clear();
  Status s = AppendValue(type_oid, text, catalog, 0, out, &nulls->whole, nulls);
  if (!s.ok()) {
    out->resize(mark);
    nulls->clear();
  }
  return s;
}

}  // namespace cdc::pg
