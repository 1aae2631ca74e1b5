// The commands of one event, in each mode (Sink::AppendStream and
// Sink::AppendHash). See cdc-redis(1), KEY LAYOUT.
#include <nlohmann/json.hpp>

#include "cdc/redis/sink.h"

namespace cdc::redis {

namespace {

using event::JsonKind;

// Value of a member as a Redis field value: a string without its quotes,
// anything else as its compact JSON text.
std::string_view FieldValue(const Field& m) {
  return m.kind == JsonKind::kString ? m.str : m.value;
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

}  // namespace

Result<std::string> EncodeRowKey(std::string_view key_object) {
  event::JsonObject k;
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
                          std::string_view op, const Fields& obj) {
  const Field* schema = obj.find("schema");
  const Field* table = obj.find("table");
  std::string key;
  if (op == "m" && (schema == nullptr || table == nullptr)) {
    key = o_.prefix + "__cdc_messages";
  } else {
    if (schema == nullptr || table == nullptr ||
        schema->kind != JsonKind::kString || table->kind != JsonKind::kString)
      return Status::BadInput("event seq " + std::to_string(ev.seq) +
                              " has no \"schema\" and \"table\"");
    key = Expand(schema->str, table->str, "");
  }
  std::string id = std::to_string(ev.seq) + "-0";
  args_ << "XADD" << key;
  if (o_.maxlen > 0) {
    scratch_.push_back(std::to_string(o_.maxlen));
    args_ << "MAXLEN"
          << "~" << scratch_.back();
  }
  args_ << id;
  for (const Field& m : obj.members()) {
    if (m.key == "seq" || m.key == "last" || m.key == "schema" ||
        m.key == "table")
      continue;
    args_ << m.key << FieldValue(m);
  }
  return Queue(c, ev.seq, key);
}

Status Sink::AppendHash(Connection& c, const EventRef& ev, std::string_view op,
                        const Fields& obj, BatchResult* r) {
  auto bad = [&](const std::string& why) {
    return Status::BadInput("event seq " + std::to_string(ev.seq) + ": " + why);
  };
  if (op == "m" || op == "s") {
    ++r->ignored;
    return Status::OK();
  }
  const Field* schema = obj.find("schema");
  const Field* table = obj.find("table");
  if (schema == nullptr || table == nullptr ||
      schema->kind != JsonKind::kString || table->kind != JsonKind::kString)
    return bad("no \"schema\" and \"table\"");
  const std::string_view sch = schema->str;
  const std::string_view tab = table->str;
  std::string set_key = MembersKey(sch, tab);
  if (op == "t") {
    CDC_RETURN_IF_ERROR(FlushMembership(c, set_key));
    args_ << "EVAL" << kTruncateScript << "1" << set_key;
    return Queue(c, ev.seq, set_key);
  }
  const bool upsert = op == "c" || op == "r" || op == "u";
  if (!upsert && op != "d")
    return bad("unknown op \"" + std::string(op) + "\"");
  const Field* key = obj.find("key");
  if (key == nullptr || key->kind != JsonKind::kObject) {
    ++r->unkeyed;  // a table without a primary key or replica identity
    return Status::OK();
  }
  Status s = key_.Parse(key->value);
  if (!s.ok()) return bad("\"key\": " + s.message());
  const std::vector<Field>& key_cols = key_.members();
  if (key_cols.empty()) {
    ++r->unkeyed;
    return Status::OK();
  }
  std::string old_part = "[";
  for (size_t i = 0; i < key_cols.size(); ++i) {
    if (i > 0) old_part.push_back(',');
    old_part.append(key_cols[i].value);
  }
  old_part.push_back(']');
  std::string old_key = Expand(sch, tab, old_part);
  auto& members = members_[set_key];

  if (op == "d") {
    args_ << "DEL" << old_key;
    members[old_key] = false;
    return Queue(c, ev.seq, old_key);
  }

  const Field* after = obj.find("after");
  if (after == nullptr || after->kind != JsonKind::kObject)
    return bad("op " + std::string(op) + " without an \"after\" object");
  s = after_.Parse(after->value);
  if (!s.ok()) return bad("\"after\": " + s.message());
  std::vector<std::string> unchanged, json_null;
  if (const Field* u = obj.find("unchanged");
      u != nullptr && u->kind != JsonKind::kNull) {
    s = Names(u->value, "", &unchanged);
    if (!s.ok()) return bad("\"unchanged\": " + s.message());
  }
  if (const Field* jn = obj.find("json_null");
      jn != nullptr && jn->kind != JsonKind::kNull) {
    s = Names(jn->value, "/after/", &json_null);
    if (!s.ok()) return bad("\"json_null\": " + s.message());
  }

  // The row's key after the change: the key columns' new values (an
  // unchanged key column keeps its old one).
  std::string new_part = "[";
  for (size_t i = 0; i < key_cols.size(); ++i) {
    if (i > 0) new_part.push_back(',');
    const Field* m = after_.find(key_cols[i].key);
    new_part.append(m != nullptr ? m->value : key_cols[i].value);
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
  for (const Field& m : after_.members()) {
    if (m.kind == JsonKind::kNull && !Contains(json_null, m.key)) continue;
    args_ << m.key << FieldValue(m);
  }
  if (args_.size() > 2) {
    CDC_RETURN_IF_ERROR(Queue(c, ev.seq, row_key));
  } else {
    args_.clear();
  }
  args_ << "HDEL" << row_key;
  for (const Field& m : after_.members())
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
