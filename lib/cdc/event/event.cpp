#include "cdc/event/event.h"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cdc/base/time.h"

namespace cdc::event {

NativePieces SplitNative(uint64_t seq, std::string_view stored, bool last,
                         char (&scratch)[32]) {
  std::memcpy(scratch, "{\"seq\":", 7);
  auto [end, ec] =
      std::to_chars(scratch + 7, scratch + sizeof scratch - 1, seq);
  (void)ec;
  *end++ = ',';
  NativePieces p;
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

Result<ImportedEvent> ParseImportLine(std::string_view line) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    size_t p = what.find("parse error");
    return Status::BadInput("not valid JSON (" +
                            (p == std::string::npos ? what : what.substr(p)) +
                            ")");
  }
  if (!j.is_object()) return Status::BadInput("not a JSON object");
  auto need_string = [&](const char* k) -> Result<std::string> {
    auto it = j.find(k);
    if (it == j.end())
      return Status::BadInput(std::string("missing \"") + k + "\"");
    if (!it->is_string())
      return Status::BadInput(std::string("\"") + k + "\" must be a string");
    return it->get<std::string>();
  };
  ImportedEvent ev;
  CDC_ASSIGN_OR_RETURN(std::string lsn, need_string("lsn"));
  auto parsed_lsn = ParseLsn(lsn);
  if (!parsed_lsn.ok()) return parsed_lsn.status();
  ev.lsn = *parsed_lsn;
  auto xid = j.find("xid");
  if (xid == j.end()) return Status::BadInput("missing \"xid\"");
  if (!xid->is_number_unsigned())
    return Status::BadInput("\"xid\" must be an integer >= 0");
  ev.xid = xid->get<uint64_t>();
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
  std::string schema, table;
  if (op != "m" || j.contains("schema") || j.contains("table")) {
    CDC_ASSIGN_OR_RETURN(schema, need_string("schema"));
    CDC_ASSIGN_OR_RETURN(table, need_string("table"));
  }
  for (const char* k : {"key", "before", "after"}) {
    auto it = j.find(k);
    if (it != j.end() && !it->is_object() && !it->is_null())
      return Status::BadInput(std::string("\"") + k +
                              "\" must be an object or null");
  }

  nlohmann::ordered_json out;
  out["lsn"] = FormatLsn(ev.lsn);
  out["xid"] = ev.xid;
  out["ts"] = FormatTimestamp(ev.ts);
  out["op"] = op;
  if (!schema.empty() || !table.empty() || op != "m") {
    out["schema"] = schema;
    out["table"] = table;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "lsn" || k == "xid" || k == "ts" || k == "op" || k == "schema" ||
        k == "table" || k == "seq" || k == "last")
      continue;
    out[k] = std::move(it.value());
  }
  try {
    ev.stored = out.dump(-1, ' ', false,
                         nlohmann::ordered_json::error_handler_t::strict);
  } catch (const nlohmann::json::exception&) {
    return Status::BadInput("string is not valid UTF-8");
  }
  return ev;
}

}  // namespace cdc::event
