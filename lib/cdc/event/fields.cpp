#include "cdc/event/fields.h"

#include <cstring>

#include "cdc/event/json_scan.h"
#include "cdc/event/json_text.h"

namespace cdc::event {

namespace {

// A string or key longer than this gives its decoded copy back after use.
constexpr size_t kKeepBytes = 1 << 20;

// True when every escape in `s` is the one event::AppendJsonString writes
// for its character (\" \\ \b \f \n \r \t, and \u00xx in lower case for
// the other control characters): the text of a value is then exactly the
// full parse's rendering of it.
bool EscapedAsTheLogDoes(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  while ((p = static_cast<const char*>(
              std::memchr(p, '\\', static_cast<size_t>(end - p)))) != nullptr) {
    if (end - p < 2) return false;
    const char e = p[1];
    if (std::strchr("\"\\bfnrt", e) != nullptr && e != '\0') {
      p += 2;
      continue;
    }
    if (e != 'u' || end - p < 6 || p[2] != '0' || p[3] != '0') return false;
    auto lower_hex = [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    };
    if (!lower_hex(p[4]) || !lower_hex(p[5]) || p[4] > '1') return false;
    const int v = event::HexValue(p[4]) * 16 + event::HexValue(p[5]);
    if (v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t')
      return false;
    p += 6;
  }
  return true;
}

// The end of the JSON string whose opening quote is at s[i] (one past the
// closing quote), or npos; sets *escaped when it holds a backslash.
size_t StringEnd(std::string_view s, size_t i, bool* escaped) {
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') {
      *escaped = true;
      ++j;
    } else if (s[j] == '"') {
      return j + 1;
    }
  }
  return std::string_view::npos;
}

// The end of the compact JSON value at s[i], or npos for anything not
// compact (whitespace outside strings) or malformed at this level.
size_t ValueEnd(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  bool esc = false;
  if (s[i] == '"') return StringEnd(s, i, &esc);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (size_t j = i; j < s.size(); ++j) {
      char ch = s[j];
      if (ch == '"') {
        j = StringEnd(s, j, &esc);
        if (j == std::string_view::npos) return j;
        --j;
      } else if (ch == '{' || ch == '[') {
        ++depth;
      } else if (ch == '}' || ch == ']') {
        if (--depth == 0) return j + 1;
      } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
        return std::string_view::npos;
      }
    }
    return std::string_view::npos;
  }
  size_t j = i;
  while (j < s.size() && s[j] != ',' && s[j] != '}' && s[j] != ']') {
    if (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r')
      return std::string_view::npos;
    ++j;
  }
  return j == i ? std::string_view::npos : j;
}

}  // namespace

std::string* Fields::Scratch() {
  if (decoded_used_ == decoded_.size()) decoded_.emplace_back();
  std::string* s = &decoded_[decoded_used_++];
  s->clear();
  return s;
}

// The top level of a compact JSON object, as ParseJsonObject gives it,
// without a full parse: what the log stores (and cdc-tail prints) is
// compact and was checked when it was written. False for anything else;
// the caller then parses it in full.
bool Fields::FastParse(std::string_view s) {
  fields_.clear();
  decoded_used_ = 0;
  if (s.size() < 2 || s[0] != '{' || s.back() != '}') return false;
  if (!EscapedAsTheLogDoes(s)) return false;
  size_t i = 1;
  if (s[i] == '}') return i + 1 == s.size();
  for (;;) {
    bool esc = false;
    if (s[i] != '"') return false;
    size_t ke = StringEnd(s, i, &esc);
    if (ke == std::string_view::npos || esc || ke >= s.size() || s[ke] != ':')
      return false;
    Field& f = fields_.emplace_back();
    f.key = s.substr(i + 1, ke - i - 2);
    size_t vb = ke + 1;
    size_t ve = ValueEnd(s, vb);
    if (ve == std::string_view::npos || ve >= s.size()) return false;
    f.value = s.substr(vb, ve - vb);
    switch (s[vb]) {
      case '"': {
        f.kind = JsonKind::kString;
        std::string_view inner = f.value.substr(1, f.value.size() - 2);
        if (inner.find('\\') == std::string_view::npos) {
          f.str = inner;
        } else {
          std::string* d = Scratch();
          event::AppendDecodedJsonString(f.value, d);
          f.str = *d;
        }
        break;
      }
      case '{':
        f.kind = JsonKind::kObject;
        break;
      case '[':
        f.kind = JsonKind::kArray;
        break;
      case 'n':
        f.kind = JsonKind::kNull;
        break;
      case 't':
      case 'f':
        f.kind = JsonKind::kBool;
        break;
      default:
        f.kind = JsonKind::kFloat;
        break;
    }
    if (s[ve] == '}') return ve + 1 == s.size();
    if (s[ve] != ',') return false;
    i = ve + 1;
    if (i >= s.size()) return false;
  }
}

Status Fields::Parse(std::string_view text) {
  for (size_t i = 0; i < decoded_used_; ++i)
    if (decoded_[i].capacity() > kKeepBytes) std::string().swap(decoded_[i]);
  if (full_.text.capacity() > kKeepBytes) std::string().swap(full_.text);
  if (FastParse(text)) return Status::OK();
  fields_.clear();
  decoded_used_ = 0;
  CDC_RETURN_IF_ERROR(event::ParseJsonObject(text, &full_));
  for (const event::JsonMember& m : full_.members) {
    Field& f = fields_.emplace_back();
    f.key = m.key;
    f.kind = m.kind == JsonKind::kInteger || m.kind == JsonKind::kUnsigned
                 ? JsonKind::kFloat
                 : m.kind;
    f.value = full_.value(m);
    if (m.kind == JsonKind::kString) f.str = m.string_value;
  }
  return Status::OK();
}

const Field* Fields::find(std::string_view key) const {
  for (const Field& f : fields_)
    if (f.key == key) return &f;
  return nullptr;
}

void Fields::Release() {
  fields_.clear();
  decoded_.clear();
  decoded_.shrink_to_fit();
  decoded_used_ = 0;
  std::string().swap(full_.text);
  full_.members.clear();
}

}  // namespace cdc::event
