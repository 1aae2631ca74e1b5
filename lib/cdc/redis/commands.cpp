// The commands of one event, in each mode (Sink::AppendStream and
// Sink::AppendHash). See cdc-redis(1), KEY LAYOUT.
#include <nlohmann/json.hpp>

#include "cdc/redis/sink.h"

namespace cdc::redis {

namespace {

using event::JsonKind;
using event::JsonMember;
using event::JsonObject;

// Value of a member as a Redis field value: a string without its quotes,
// anything else as its compact JSON text.
std::string_view FieldValue(const JsonObject& o, const JsonMember& m) {
  return m.kind == JsonKind::kString ? std::string_view(m.string_value)
                                     : o.value(m);
}

// The Lua script a truncate runs inside the batch's MULTI: every row hash
// the table's membership set names, read in chunks with SSCAN, then the set.
constexpr const char* kTruncateScript =
    "local cursor = '0'\n"
    "repeat\n"
    "  local r = redis.call('SSCAN', KEYS[1], cursor, 'COUNT', 1000)\n"
    "  cursor = r[1]\n"
    "  local m = r[2]\n"
    "  for i = 1, #m, 500 do\n"
    "    redis.call('DEL', unpack(m, i, math.min(i + 499, #m)))\n"
    "  end\n"
    "until cursor == '0'\n"
    "redis.call('DEL', KEYS[1])\n"
    "return 0\n";

// Column names listed by a JSON array of strings ("unchanged"), or of
// JSON Pointers under "/after/" ("json_null", top level only).
Status Names(std::string_view text, std::string_view pointer_prefix,
             std::vector<std::string>* out) {
  out->clear();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return Status::BadInput("not a JSON array");
  }
  if (!j.is_array()) return Status::BadInput("not a JSON array");
  for (const auto& v : j) {
    if (!v.is_string()) return Status::BadInput("not an array of strings");
    std::string s = v.get<std::string>();
    if (pointer_prefix.empty()) {
      out->push_back(std::move(s));
      continue;
    }
    if (s.rfind(pointer_prefix, 0) != 0) continue;
    s.erase(0, pointer_prefix.size());
    if (s.find('/') != std::string::npos) continue;  // inside a value
    std::string name;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '~' && i + 1 < s.size() &&
          (s[i + 1] == '0' || s[i + 1] == '1')) {
        name.push_back(s[i + 1] == '0' ? '~' : '/');
        ++i;
      } else {
        name.push_back(s[i]);
      }
    }
    out->push_back(std::move(name));
  }
  return Status::OK();
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
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

// The top level of a compact JSON object, as ParseJsonObject gives it,
// without a full parse: what the log stores (and cdc-tail prints) is
// compact and was checked when it was written. False for anything else;
// the caller then parses it in full.
bool FastParse(std::string_view s, JsonObject* out) {
  // Members are reused from the last parse: their strings keep their
  // capacity, so a line of the usual shape allocates nothing.
  size_t n = 0;
  auto done = [&](bool ok) {
    out->members.resize(ok ? n : 0);
    return ok;
  };
  // An escape may be written more than one way: the full parse renders
  // it as the log does.
  if (s.find('\\') != std::string_view::npos) return done(false);
  out->text.assign(s);
  if (s.size() < 2 || s[0] != '{' || s.back() != '}') return done(false);
  size_t i = 1;
  if (s[i] == '}') return done(i + 1 == s.size());
  for (;;) {
    bool esc = false;
    if (s[i] != '"') return done(false);
    size_t ke = StringEnd(s, i, &esc);
    if (ke == std::string_view::npos || esc || ke >= s.size() || s[ke] != ':')
      return done(false);
    if (n == out->members.size()) out->members.emplace_back();
    JsonMember& m = out->members[n++];
    m.key.assign(s.data() + i + 1, ke - i - 2);
    size_t vb = ke + 1;
    size_t ve = ValueEnd(s, vb);
    if (ve == std::string_view::npos || ve >= s.size()) return done(false);
    m.begin = vb;
    m.end = ve;
    m.unsigned_value = 0;
    switch (s[vb]) {
      case '"':
        m.string_value.assign(s.data() + vb + 1, ve - vb - 2);
        m.kind = JsonKind::kString;
        break;
      case '{':
        m.kind = JsonKind::kObject;
        break;
      case '[':
        m.kind = JsonKind::kArray;
        break;
      case 'n':
        m.kind = JsonKind::kNull;
        break;
      case 't':
      case 'f':
        m.kind = JsonKind::kBool;
        break;
      default:
        m.kind = JsonKind::kFloat;
        break;
    }
    if (m.kind != JsonKind::kString) m.string_value.clear();
    if (s[ve] == '}') return done(ve + 1 == s.size());
    if (s[ve] != ',') return done(false);
    i = ve + 1;
    if (i >= s.size()) return done(false);
  }
}

}  // namespace

Status ParseCompact(std::string_view text, JsonObject* out) {
  if (FastParse(text, out)) return Status::OK();
  return event::ParseJsonObject(text, out);
}

Result<std::string> EncodeRowKey(std::string_view key_object) {
  JsonObject k;
  CDC_RETURN_IF_ERROR(event::ParseJsonObject(key_object, &k));
  std::string out = "[";
  for (size_t i = 0; i < k.members.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(k.value(k.members[i]));
  }
  out.push_back(']');
  return out;
}

Status Sink::AppendStream(Connection& c, const EventRef& ev,
                          std::string_view op, const JsonObject& obj) {
  const JsonMember* schema = obj.find("schema");
  const JsonMember* table = obj.find("table");
  std::string key;
  if (op == "m" && (schema == nullptr || table == nullptr)) {
    key = o_.prefix + "__cdc_messages";
  } else {
    if (schema == nullptr || table == nullptr ||
        schema->kind != JsonKind::kString || table->kind != JsonKind::kString)
      return Status::BadInput("event seq " + std::to_string(ev.seq) +
                              " has no \"schema\" and \"table\"");
    key = Expand(schema->string_value, table->string_value, "");
  }
  std::string id = std::to_string(ev.seq) + "-0";
  args_ << "XADD" << key;
  if (o_.maxlen > 0) {
    scratch_.push_back(std::to_string(o_.maxlen));
    args_ << "MAXLEN"
          << "~" << scratch_.back();
  }
  args_ << id;
  for (const JsonMember& m : obj.members) {
    if (m.key == "seq" || m.key == "last" || m.key == "schema" ||
        m.key == "table")
      continue;
    args_ << m.key << FieldValue(obj, m);
  }
  return Queue(c, ev.seq, key);
}

Status Sink::AppendHash(Connection& c, const EventRef& ev, std::string_view op,
                        const JsonObject& obj, BatchResult* r) {
  auto bad = [&](const std::string& why) {
    return Status::BadInput("event seq " + std::to_string(ev.seq) + ": " + why);
  };
  if (op == "m" || op == "s") {
    ++r->ignored;
    return Status::OK();
  }
  const JsonMember* schema = obj.find("schema");
  const JsonMember* table = obj.find("table");
  if (schema == nullptr || table == nullptr ||
      schema->kind != JsonKind::kString || table->kind != JsonKind::kString)
    return bad("no \"schema\" and \"table\"");
  const std::string& sch = schema->string_value;
  const std::string& tab = table->string_value;
  std::string set_key = MembersKey(sch, tab);
  if (op == "t") {
    CDC_RETURN_IF_ERROR(FlushMembership(c, set_key));
    args_ << "EVAL" << kTruncateScript << "1" << set_key;
    return Queue(c, ev.seq, set_key);
  }
  const bool upsert = op == "c" || op == "r" || op == "u";
  if (!upsert && op != "d")
    return bad("unknown op \"" + std::string(op) + "\"");
  const JsonMember* key = obj.find("key");
  if (key == nullptr || key->kind != JsonKind::kObject) {
    ++r->unkeyed;  // a table without a primary key or replica identity
    return Status::OK();
  }
  Status s = ParseCompact(obj.value(*key), &key_);
  if (!s.ok()) return bad("\"key\": " + s.message());
  if (key_.members.empty()) {
    ++r->unkeyed;
    return Status::OK();
  }
  std::string old_part = "[";
  for (size_t i = 0; i < key_.members.size(); ++i) {
    if (i > 0) old_part.push_back(',');
    old_part.append(key_.value(key_.members[i]));
  }
  old_part.push_back(']');
  std::string old_key = Expand(sch, tab, old_part);
  auto& members = members_[set_key];

  if (op == "d") {
    args_ << "DEL" << old_key;
    members[old_key] = false;
    return Queue(c, ev.seq, old_key);
  }

  const JsonMember* after = obj.find("after");
  if (after == nullptr || after->kind != JsonKind::kObject)
    return bad("op " + std::string(op) + " without an \"after\" object");
  s = ParseCompact(obj.value(*after), &after_);
  if (!s.ok()) return bad("\"after\": " + s.message());
  std::vector<std::string> unchanged, json_null;
  if (const JsonMember* u = obj.find("unchanged");
      u != nullptr && u->kind != JsonKind::kNull) {
    s = Names(obj.value(*u), "", &unchanged);
    if (!s.ok()) return bad("\"unchanged\": " + s.message());
  }
  if (const JsonMember* jn = obj.find("json_null");
      jn != nullptr && jn->kind != JsonKind::kNull) {
    s = Names(obj.value(*jn), "/after/", &json_null);
    if (!s.ok()) return bad("\"json_null\": " + s.message());
  }

  // The row's key after the change: the key columns' new values (an
  // unchanged key column keeps its old one).
  std::string new_part = "[";
  for (size_t i = 0; i < key_.members.size(); ++i) {
    if (i > 0) new_part.push_back(',');
    const JsonMember* m = after_.find(key_.members[i].key);
    new_part.append(m != nullptr ? after_.value(*m)
                                 : key_.value(key_.members[i]));
  }
  new_part.push_back(']');
  std::string row_key =
      new_part == old_part ? old_key : Expand(sch, tab, new_part);
  if (row_key != old_key) {
    // A primary-key change moves the row. Unchanged TOAST columns are only
    // in the old hash: copy it first (COPY of a missing key does nothing).
    if (!unchanged.empty()) {
      args_ << "COPY" << old_key << row_key << "REPLACE";
      CDC_RETURN_IF_ERROR(Queue(c, ev.seq, old_key));
    }
    args_ << "DEL" << old_key;
    CDC_RETURN_IF_ERROR(Queue(c, ev.seq, old_key));
    members[old_key] = false;
  }
  // Fields: every column of the after image; SQL NULL is no field (HDEL),
  // a json/jsonb JSON null is the text null.
  args_ << "HSET" << row_key;
  for (const JsonMember& m : after_.members) {
    if (m.kind == JsonKind::kNull && !Contains(json_null, m.key)) continue;
    args_ << m.key << FieldValue(after_, m);
  }
  if (args_.size() > 2) {
    CDC_RETURN_IF_ERROR(Queue(c, ev.seq, row_key));
  } else {
    args_.clear();
  }
  args_ << "HDEL" << row_key;
  for (const JsonMember& m : after_.members)
    if (m.kind == JsonKind::kNull && !Contains(json_null, m.key))
      args_ << m.key;
  if (args_.size() > 2) {
    CDC_RETURN_IF_ERROR(Queue(c, ev.seq, row_key));
  } else {
    args_.clear();
  }
  members[row_key] = true;
  return Status::OK();
}

}  // namespace cdc::redis
