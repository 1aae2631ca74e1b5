#include "cdc/pgsink/values.h"

#include "cdc/event/json_scan.h"
#include "cdc/event/json_text.h"

namespace cdc::pgsink {

namespace {

using event::JsonKind;

constexpr uint32_t kBytea = 17, kJson = 114, kJsonb = 3802;
constexpr uint32_t kDate = 1082, kTimestamp = 1114, kTimestamptz = 1184;

ValueKind KindOf(uint32_t oid) {
  switch (oid) {
    case kBytea:
      return ValueKind::kBytea;
    case kJson:
    case kJsonb:
      return ValueKind::kJson;
    case kDate:
      return ValueKind::kDate;
    case kTimestamp:
    case kTimestamptz:
      return ValueKind::kTimestamp;
    default:
      return ValueKind::kText;
  }
}

// One scalar (not an array) in text input form; false for SQL NULL.
Result<bool> AppendScalar(ValueKind kind, const JsonValue& v, bool json_null,
                          std::string* out) {
  if (kind == ValueKind::kJson) {
    if (v.kind == JsonKind::kNull) {
      if (!json_null) return false;
      out->append("null");
      return true;
    }
    out->append(v.text);
    return true;
  }
  switch (v.kind) {
    case JsonKind::kNull:
      return false;
    case JsonKind::kBool:
      out->push_back(v.text == "true" ? 't' : 'f');
      return true;
    case JsonKind::kString:
      break;
    default:  // numbers as written; objects and arrays as JSON text
      out->append(v.text);
      return true;
  }
  if (v.str == "infinity" || v.str == "-infinity") {
    out->append(v.str);
    return true;
  }
  switch (kind) {
    case ValueKind::kBytea:
      out->append("\\x");
      if (!event::AppendBase64AsHex(v.str, out))
        return Status::BadInput("a bytea value is not base64");
      return true;
    case ValueKind::kDate:
    case ValueKind::kTimestamp:
      CDC_RETURN_IF_ERROR(AppendDateTime(v.str, out));
      return true;
    default:
      out->append(v.str);
      return true;
  }
}

// The end of the JSON value starting at `i` of the compact, checked text
// `s` (a string, number, literal, object or array).
size_t ValueEnd(std::string_view s, size_t i) {
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\')
        ++i;
      else if (s[i] == '"')
        return i + 1;
    }
    return s.size();
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        i = ValueEnd(s, i) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return s.size();
  }
  while (i < s.size() && s[i] != ',' && s[i] != ']' && s[i] != '}') ++i;
  return i;
}

JsonKind KindOfText(std::string_view t) {
  switch (t.empty() ? 'n' : t[0]) {
    case 'n':
      return JsonKind::kNull;
    case 't':
    case 'f':
      return JsonKind::kBool;
    case '"':
      return JsonKind::kString;
    case '{':
      return JsonKind::kObject;
    case '[':
      return JsonKind::kArray;
    default:
      return JsonKind::kFloat;
  }
}

// A JSON array as an array literal: {"e1",NULL,"e2"}.
Status AppendArray(ValueKind kind, std::string_view text,
                   const JsonNullTest& json_null, std::string* out) {
  std::vector<std::string_view> elems;
  SplitJsonArray(text, &elems);
  out->push_back('{');
  std::string decoded, elem;
  for (size_t n = 0; n < elems.size(); ++n) {
    JsonValue e;
    e.text = elems[n];
    e.kind = KindOfText(e.text);
    if (e.kind == JsonKind::kString) {
      decoded.clear();
      event::AppendDecodedJsonString(e.text, &decoded);
      e.str = decoded;
    }
    if (n > 0) out->push_back(',');
    elem.clear();
    CDC_ASSIGN_OR_RETURN(
        bool present,
        AppendScalar(kind, e, json_null && json_null(static_cast<int>(n)),
                     &elem));
    if (present)
      AppendArrayElement(elem, out);
    else
      out->append("NULL");
  }
  out->push_back('}');
  return Status::OK();
}

}  // namespace

void AppendArrayElement(std::string_view value, std::string* out) {
  out->push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

void SplitJsonArray(std::string_view text,
                    std::vector<std::string_view>* elems) {
  elems->clear();
  size_t i = 1;  // past '['
  while (i < text.size() && text[i] != ']') {
    const size_t end = ValueEnd(text, i);
    elems->push_back(text.substr(i, end - i));
    i = end;
    if (i < text.size() && text[i] == ',') ++i;
  }
}

ColumnType ClassifyType(uint32_t base_oid, uint32_t elem_oid) {
  ColumnType t;
  if (elem_oid != 0) {
    t.array = true;
    t.kind = KindOf(elem_oid);
  } else {
    t.kind = KindOf(base_oid);
  }
  return t;
}

Result<bool> AppendValue(const ColumnType& t, const JsonValue& v,
                         const JsonNullTest& json_null, std::string* out) {
  if (t.array && v.kind == JsonKind::kArray) {
    CDC_RETURN_IF_ERROR(AppendArray(t.kind, v.text, json_null, out));
    return true;
  }
  if (t.array) {  // NULL, or an array in text form (several dimensions)
    if (v.kind == JsonKind::kNull) return false;
    out->append(v.kind == JsonKind::kString ? v.str : v.text);
    return true;
  }
  return AppendScalar(t.kind, v, json_null && json_null(-1), out);
}

Status AppendDateTime(std::string_view iso, std::string* out) {
  size_t i = 0;
  bool negative = false;
  if (!iso.empty() && (iso[0] == '+' || iso[0] == '-')) {
    negative = iso[0] == '-';
    i = 1;
  }
  const size_t digits_begin = i;
  int64_t year = 0;
  while (i < iso.size() && event::IsDigit(iso[i]) && i - digits_begin < 9)
    year = year * 10 + (iso[i++] - '0');
  if (i - digits_begin < 4 || i >= iso.size() || iso[i] != '-')
    return Status::BadInput("not an ISO 8601 date: \"" +
                            std::string(iso.substr(0, 40)) + "\"");
  if (negative) year = -year;
  const bool bc = year <= 0;
  std::string y = std::to_string(bc ? 1 - year : year);
  if (y.size() < 4) out->append(4 - y.size(), '0');
  out->append(y);
  out->append(iso.substr(i));
  if (bc) out->append(" BC");
  return Status::OK();
}

}  // namespace cdc::pgsink
