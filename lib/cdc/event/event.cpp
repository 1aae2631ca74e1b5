#include "cdc/event/event.h"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cdc/base/time.h"
#include "cdc/event/json_object.h"
#include "cdc/event/json_text.h"

namespace cdc::event {

NativePieces SplitNative(uint64_t seq, std::string_view stored, bool last,
                         char (&scratch)[32]) {
  std::memcpy(scratch, "{\"seq\":", 7);
  auto [end, ec] =
      std::to_chars(scratch + 7, scratch + sizeof scratch - 1, seq);
  (void)ec;
  NativePieces p;
  if (stored.size() <= 2) {  // "{}" (readers pass only "{...}" lines)
    p.head = std::string_view(scratch, static_cast<size_t>(end - scratch));
    p.tail = last ? ",\"last\":true}\n" : "}\n";
    return p;
  }
  *end++ = ',';
  p.head = std::string_view(scratch, static_cast<size_t>(end - scratch));
  if (last) {
    p.body = stored.substr(1, stored.size() - 2);
    p.tail = ",\"last\":true}\n";
  } else {
    p.body = stored.substr(1);
    p.tail = "\n";
  }
  return p;
}

void AppendNative(uint64_t seq, std::string_view stored, bool last,
                  std::string* out) {
  char scratch[32];
  NativePieces p = SplitNative(seq, stored, last, scratch);
  out->append(p.head);
  out->append(p.body);
  out->append(p.tail);
}

namespace {

// Reads a JSON string token at `p` (which must point at '"').
bool ReadString(std::string_view s, size_t* p, std::string* out) {
  size_t i = *p;
  if (i >= s.size() || s[i] != '"') return false;
  size_t j = i + 1;
  bool escaped = false;
  while (j < s.size() && s[j] != '"') {
    if (s[j] == '\\') {
      escaped = true;
      ++j;
    }
    ++j;
  }
  if (j >= s.size()) return false;
  if (!escaped) {
    out->assign(s.data() + i + 1, j - i - 1);
  } else {
    try {
      *out = nlohmann::json::parse(s.substr(i, j - i + 1)).get<std::string>();
    } catch (const nlohmann::json::exception&) {
      return false;
    }
  }
  *p = j + 1;
  return true;
}

}  // namespace

bool ParseHead(std::string_view s, EventHead* h) {
  size_t p = 0;
  if (s.empty() || s[0] != '{') return false;
  ++p;
  std::string key;
  for (int field = 0; field < 6; ++field) {
    if (field > 0) {
      if (p >= s.size() || s[p] != ',') return field >= 4;
      ++p;
    }
    size_t save = p;
    if (!ReadString(s, &p, &key) || p >= s.size() || s[p] != ':') return false;
    ++p;
    if (key == "xid") {
      auto [ptr, ec] =
          std::from_chars(s.data() + p, s.data() + s.size(), h->xid);
      if (ec != std::errc()) return false;
      p = static_cast<size_t>(ptr - s.data());
      continue;
    }
    std::string* dst = key == "lsn"      ? &h->lsn
                       : key == "ts"     ? &h->ts
                       : key == "op"     ? &h->op
                       : key == "schema" ? &h->schema
                       : key == "table"  ? &h->table
                                         : nullptr;
    if (dst == nullptr) {
      (void)save;
      return field >= 4;
    }
    if (!ReadString(s, &p, dst)) return false;
  }
  return true;
}

namespace {

// Reads `key` (N - 1 bytes, ending with the value's opening quote) at *p,
// then the string value up to its closing quote, which must hold no
// backslash. Inline loops: these strings are a few bytes long, shorter
// than a call to memchr costs.
template <size_t N>
bool ScanString(std::string_view s, size_t* p, const char (&key)[N],
                std::string_view* out) {
  constexpr size_t kLen = N - 1;
  if (s.size() - *p < kLen || std::memcmp(s.data() + *p, key, kLen) != 0)
    return false;
  const size_t start = *p + kLen;
  for (size_t i = start; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      *out = s.substr(start, i - start);
      *p = i + 1;
      return true;
    }
    if (c == '\\') return false;
  }
  return false;
}

template <size_t N>
bool StartsAt(std::string_view s, size_t p, const char (&key)[N]) {
  return s.size() - p >= N - 1 && std::memcmp(s.data() + p, key, N - 1) == 0;
}

}  // namespace

bool ScanHead(std::string_view s, HeadView* h) {
  return ScanHeadStart(s, h) && ScanHeadFrom(s, h->op_at, h);
}

bool ScanHeadStart(std::string_view s, HeadView* h) {
  size_t p = 0;
  if (!ScanString(s, &p, "{\"lsn\":\"", &h->lsn)) return false;
  if (!StartsAt(s, p, ",\"xid\":")) return false;
  p += 7;
  auto [ptr, ec] = std::from_chars(s.data() + p, s.data() + s.size(), h->xid);
  if (ec != std::errc()) return false;
  p = static_cast<size_t>(ptr - s.data());
  if (!ScanString(s, &p, ",\"ts\":\"", &h->ts) || !StartsAt(s, p, ",\"op\":\""))
    return false;
  h->op_at = p + 7;
  return true;
}

bool ScanHeadFrom(std::string_view s, size_t op_at, HeadView* h) {
  size_t p = op_at;
  if (p > s.size() || !ScanString(s, &p, "", &h->op)) return false;
  h->end = p;
  if (StartsAt(s, p, ",\"prefix\":")) {
    h->schema = h->table = std::string_view();
    return true;
  }
  if (!ScanString(s, &p, ",\"schema\":\"", &h->schema) ||
      !ScanString(s, &p, ",\"table\":\"", &h->table))
    return false;
  h->end = p;
  return true;
}

Result<ImportedEvent> ParseImportLine(std::string_view line) {
  JsonObject j;
  CDC_RETURN_IF_ERROR(ParseJsonObject(line, &j));
  auto need_string = [&](const char* k) -> Result<std::string> {
    const JsonMember* m = j.find(k);
    if (m == nullptr)
      return Status::BadInput(std::string("missing \"") + k + "\"");
    if (m->kind != JsonKind::kString)
      return Status::BadInput(std::string("\"") + k + "\" must be a string");
    return m->string_value;
  };
  ImportedEvent ev;
  CDC_ASSIGN_OR_RETURN(std::string lsn, need_string("lsn"));
  auto parsed_lsn = ParseLsn(lsn);
  if (!parsed_lsn.ok()) return parsed_lsn.status();
  ev.lsn = *parsed_lsn;
  const JsonMember* xid = j.find("xid");
  if (xid == nullptr) return Status::BadInput("missing \"xid\"");
  if (xid->kind != JsonKind::kUnsigned)
    return Status::BadInput("\"xid\" must be an integer >= 0");
  ev.xid = xid->unsigned_value;
  CDC_ASSIGN_OR_RETURN(std::string ts, need_string("ts"));
  auto parsed_ts = ParseTimestamp(ts);
  if (!parsed_ts.ok())
    return Status::BadInput("\"ts\": " + parsed_ts.status().message());
  ev.ts = *parsed_ts;
  CDC_ASSIGN_OR_RETURN(std::string op, need_string("op"));
  if (op.size() != 1 ||
      std::string_view("cudrtms").find(op[0]) == std::string_view::npos)
    return Status::BadInput("\"op\" must be one of c u d r t m s, not \"" + op +
                            "\"");
  ev.op = op[0];
  std::string schema, table;
  if (op != "m" || j.find("schema") || j.find("table")) {
    CDC_ASSIGN_OR_RETURN(schema, need_string("schema"));
    CDC_ASSIGN_OR_RETURN(table, need_string("table"));
  }
  for (const char* k : {"key", "before", "after"}) {
    const JsonMember* m = j.find(k);
    if (m != nullptr && m->kind != JsonKind::kObject &&
        m->kind != JsonKind::kNull)
      return Status::BadInput(std::string("\"") + k +
                              "\" must be an object or null");
  }

  std::string& out = ev.stored;
  out.reserve(line.size() + 64);
  out += "{\"lsn\":";
  AppendJsonStringUnchecked(FormatLsn(ev.lsn), &out);
  out += ",\"xid\":" + std::to_string(ev.xid) + ",\"ts\":";
  AppendJsonStringUnchecked(FormatTimestamp(ev.ts), &out);
  out += ",\"op\":";
  AppendJsonStringUnchecked(op, &out);
  if (!schema.empty() || !table.empty() || op != "m") {
    out += ",\"schema\":";
    AppendJsonStringUnchecked(schema, &out);
    out += ",\"table\":";
    AppendJsonStringUnchecked(table, &out);
  }
  for (const JsonMember& m : j.members) {
    const std::string& k = m.key;
    if (k == "lsn" || k == "xid" || k == "ts" || k == "op" || k == "schema" ||
        k == "table" || k == "seq" || k == "last")
      continue;
    out.push_back(',');
    AppendJsonStringUnchecked(k, &out);
    out.push_back(':');
    out.append(j.value(m));
  }
  out.push_back('}');
  return ev;
}

}  // namespace cdc::event
