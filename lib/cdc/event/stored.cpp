#include "cdc/event/stored.h"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cdc/event/json_text.h"

namespace cdc::event {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// Moves *p past the string token at line[*p] ('"').
bool SkipString(std::string_view s, size_t* p) {
  size_t i = *p + 1;
  while (true) {
    const void* hit = std::memchr(s.data() + i, '"', s.size() - i);
    if (hit == nullptr) return false;
    size_t q = static_cast<size_t>(static_cast<const char*>(hit) - s.data());
    // The quote ends the string unless an odd run of backslashes escapes it.
    size_t slashes = 0;
    while (q - slashes > *p + 1 && s[q - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) {
      *p = q + 1;
      return true;
    }
    i = q + 1;
  }
}

Status Bad(const char* what) {
  return Status::Corruption(std::string("stored event ") + what);
}

}  // namespace

bool SkipJsonValue(std::string_view s, size_t* p) {
  size_t i = *p;
  if (i >= s.size()) return false;
  char c = s[i];
  if (c == '"') return SkipString(s, p);
  if (c == '{' || c == '[') {
    size_t depth = 0;
    while (i < s.size()) {
      char d = s[i];
      if (d == '"') {
        if (!SkipString(s, &i)) return false;
        continue;
      }
      if (d == '{' || d == '[') {
        ++depth;
      } else if (d == '}' || d == ']') {
        if (--depth == 0) {
          *p = i + 1;
          return true;
        }
      }
      ++i;
    }
    return false;
  }
  if (c != '-' && c != 't' && c != 'f' && c != 'n' && (c < '0' || c > '9'))
    return false;
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' &&
         !IsSpace(s[i]))
    ++i;
  *p = i;
  return true;
}

bool PlainStringContent(std::string_view token, std::string_view* content) {
  if (token.size() < 2 || token.front() != '"' || token.back() != '"')
    return false;
  std::string_view inner = token.substr(1, token.size() - 2);
  if (inner.find('\\') != std::string_view::npos) return false;
  *content = inner;
  return true;
}

bool AppendQualifiedName(std::string_view schema, std::string_view table,
                         std::string* out) {
  std::string_view a, b;
  if (PlainStringContent(schema, &a) && PlainStringContent(table, &b)) {
    out->push_back('"');
    out->append(a);
    out->push_back('.');
    out->append(b);
    out->push_back('"');
    return true;
  }
  try {
    std::string name = nlohmann::json::parse(schema).get<std::string>() + "." +
                       nlohmann::json::parse(table).get<std::string>();
    AppendJsonStringUnchecked(name, out);
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

Status ScanStored(std::string_view s, StoredFields* f) {
  *f = StoredFields{};
  if (s.empty() || s[0] != '{') return Bad("is not a JSON object");
  size_t p = 1;
  auto ws = [&] {
    while (p < s.size() && IsSpace(s[p])) ++p;
  };
  ws();
  if (p < s.size() && s[p] == '}') return Bad("has no \"lsn\"");
  while (true) {
    ws();
    if (p >= s.size() || s[p] != '"') return Bad("has a member without a key");
    size_t k = p;
    if (!SkipString(s, &p)) return Bad("has an unterminated key");
    std::string_view key = s.substr(k + 1, p - k - 2);
    ws();
    if (p >= s.size() || s[p] != ':') return Bad("has a key without a value");
    ++p;
    ws();
    size_t v = p;
    if (!SkipJsonValue(s, &p)) return Bad("has a value that is not JSON");
    std::string_view value = s.substr(v, p - v);
    std::string_view* slot = nullptr;
    switch (key.size()) {
      case 2:
        slot = key == "ts" ? &f->ts : key == "op" ? &f->op : nullptr;
        break;
      case 3:
        slot = key == "lsn"   ? &f->lsn
               : key == "xid" ? &f->xid
               : key == "key" ? &f->key
               : key == "pos" ? &f->pos
                              : nullptr;
        break;
      case 4:
        slot = key == "gtid" ? &f->gtid : key == "file" ? &f->file : nullptr;
        break;
      case 5:
        slot = key == "after"   ? &f->after
               : key == "table" ? &f->table
                                : nullptr;
        break;
      case 6:
        slot = key == "schema"   ? &f->schema
               : key == "before" ? &f->before
               : key == "prefix" ? &f->prefix
                                 : nullptr;
        break;
      default:
        slot = key == "unchanged"          ? &f->unchanged
               : key == "json_null"        ? &f->json_null
               : key == "snapshot"         ? &f->snapshot
               : key == "content"          ? &f->content
               : key == "content_encoding" ? &f->content_encoding
               : key == "transactional"    ? &f->transactional
               : key == "options"          ? &f->options
               : key == "columns"          ? &f->columns
                                           : nullptr;
    }
    if (slot != nullptr) *slot = value;
    ws();
    if (p >= s.size()) return Bad("is cut short");
    if (s[p] == '}') {
      ++p;
      ws();
      if (p != s.size()) return Bad("has text after its object");
      break;
    }
    if (s[p] != ',') return Bad("has members not separated by commas");
    ++p;
  }
  std::string_view text;
  if (!PlainStringContent(f->lsn, &text)) return Bad("has no string \"lsn\"");
  auto lsn = ParseLsn(text);
  if (!lsn.ok()) return Bad("has an \"lsn\" that is not X/Y");
  f->lsn_value = *lsn;
  auto [ptr, ec] = std::from_chars(f->xid.data(), f->xid.data() + f->xid.size(),
                                   f->xid_value);
  if (f->xid.empty() || ec != std::errc() ||
      ptr != f->xid.data() + f->xid.size())
    return Bad("has no integer \"xid\"");
  if (!PlainStringContent(f->ts, &text)) return Bad("has no string \"ts\"");
  if (f->op.size() != 3 || f->op[0] != '"' || f->op[2] != '"')
    return Bad("has no one-letter \"op\"");
  f->op_code = f->op[1];
  return Status::OK();
}

}  // namespace cdc::event
