// --format debezium: the change-event value of Debezium's PostgreSQL
// connector as JsonConverter prints it with schemas.enable=false, built
// from the stored event by copying its JSON values (rows are never
// re-encoded). What Debezium would show differently is listed in
// cdc-tail(1), DEBEZIUM FORMAT.
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cdc/base/time.h"
#include "cdc/base/version.h"
#include "cdc/event/debezium_values.h"
#include "cdc/event/formats.h"
#include "cdc/event/json_text.h"
#include "cdc/event/stored.h"

namespace cdc::event {

namespace {

void AppendUint(uint64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out->append(buf, static_cast<size_t>(end - buf));
}

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out->append(buf, static_cast<size_t>(end - buf));
}

// Appends ,"ts_ms":..,"ts_us":..,"ts_ns":.. for `us` µs since the epoch.
void AppendStamps(int64_t us, std::string* out) {
  out->append(",\"ts_ms\":");
  AppendInt(us / 1000, out);
  out->append(",\"ts_us\":");
  AppendInt(us, out);
  out->append(",\"ts_ns\":");
  AppendInt(us * 1000, out);
}

bool IsNull(std::string_view v) { return v.empty() || v == "null"; }

class DebeziumRenderer : public Renderer {
 public:
  DebeziumRenderer(const RenderOptions& o, const SourceInfo& source)
      : o_(o),
        with_key_(o.with_key),
        clock_(o.clock ? o.clock : std::function<int64_t()>(NowMicros)) {
    std::string name = o.server_name;
    if (name.empty()) name = source.database.empty() ? "cdc" : source.database;
    fixed_ = "{\"version\":";
    AppendJsonStringUnchecked(std::string("cdc-") + kVersion, &fixed_);
    fixed_.append(",\"connector\":\"postgresql\",\"name\":");
    if (!AppendJsonString(name, &fixed_)) fixed_.append("\"cdc\"");
    db_.append(",\"db\":");
    if (!AppendJsonString(source.database, &db_)) db_.append("\"\"");
  }

  void Restart(bool at_transaction_start) override {
    at_start_ = at_transaction_start;
    open_ = false;
  }

  void LearnSchema(std::string_view stored) override {
    if (ScanStored(stored, &f_).ok() && f_.op_code == 's') Learn();
  }

  Status Skip(uint64_t, std::string_view stored, bool last) override {
    CDC_RETURN_IF_ERROR(ScanStored(stored, &f_));
    if (f_.op_code == 's') Learn();
    Track(last);
    return Status::OK();
  }

  Status Append(uint64_t, std::string_view stored, bool last,
                std::string* out) override {
    CDC_RETURN_IF_ERROR(ScanStored(stored, &f_));
    const char op = f_.op_code;
    if (op == 's') {  // Debezium's PostgreSQL connector has no such event
      Learn();
      Track(last);
      return Status::OK();
    }
    std::string content;  // op m: the message's bytes in base64
    if (op == 'm') {
      Status s = MessageContent(&content);
      if (!s.ok()) return s;
    }
    NewTransactionIfNeeded();
    const bool known = Track(last) > 0;
    rel_ = FindRelation();
    if (with_key_) {
      out->append("{\"key\":");
      if (op == 'm') {
        out->append("{\"prefix\":");
        out->append(IsNull(f_.prefix) ? std::string_view("\"\"") : f_.prefix);
        out->push_back('}');
      } else {
        AppendRow(IsNull(f_.key) ? std::string_view("null") : f_.key, out);
      }
      out->append(",\"value\":");
    }
    out->push_back('{');
    if (op != 't' && op != 'm') {
      out->append("\"before\":");
      if (!IsNull(f_.before)) {
        AppendRow(f_.before, out);
      } else if ((op == 'u' || op == 'd') && !IsNull(f_.key)) {
        AppendRow(f_.key, out);  // the identity is all PostgreSQL sent
      } else {
        out->append("null");
      }
      out->append(",\"after\":");
      AppendAfter(out);
      out->push_back(',');
    }
    AppendSource(op, last, out);
    out->append(",\"op\":\"");
    out->push_back(op);
    out->push_back('"');
    AppendStamps(clock_(), out);
    if (op == 'm') {
      out->append(",\"message\":{\"prefix\":");
      out->append(IsNull(f_.prefix) ? std::string_view("\"\"") : f_.prefix);
      out->append(",\"content\":\"");
      out->append(content);
      out->append("\"}");
    }
    out->append(",\"transaction\":");
    if (known && f_.xid_value != 0) {
      out->append(txn_id_);
      out->append(",\"total_order\":");
      AppendUint(total_, out);
      out->append(",\"data_collection_order\":");
      AppendUint(collection_order_, out);
      out->push_back('}');
    } else {
      out->append("null");
    }
    out->append(with_key_ ? "}}\n" : "}\n");
    return Status::OK();
  }

 private:
  // Starts a new transaction when the previous one ended or this event
  // belongs to another (which only a log that lost events would show).
  void NewTransactionIfNeeded() {
    if (open_ && f_.lsn_value == lsn_ && f_.xid_value == xid_) return;
    known_ = open_ ? false : at_start_;
    open_ = true;
    lsn_ = f_.lsn_value;
    xid_ = f_.xid_value;
    total_ = 0;
    collections_.clear();
    txn_id_ = "{\"id\":\"";
    AppendUint(xid_, &txn_id_);
    txn_id_.push_back(':');
    AppendUint(lsn_, &txn_id_);
    txn_id_.push_back('"');
    auto ts = ParseTimestamp(f_.ts.substr(1, f_.ts.size() - 2));
    commit_us_ = ts.ok() ? *ts : 0;
    // source fields that are the same for every event of the transaction
    src_head_ = fixed_;
    AppendStamps(commit_us_, &src_head_);
    src_tail_ = db_;
    src_tail_.append(",\"sequence\":\"[");
    if (have_prev_) {
      src_tail_.append("\\\"");
      AppendUint(prev_lsn_, &src_tail_);
      src_tail_.append("\\\"");
    } else {
      src_tail_.append("null");
    }
    src_tail_.append(",\\\"");
    AppendUint(lsn_, &src_tail_);
    src_tail_.append("\\\"]\"");
    txid_lsn_ = ",\"txId\":";
    if (xid_ == 0) {
      txid_lsn_.append("null");
    } else {
      AppendUint(xid_, &txid_lsn_);
    }
    txid_lsn_.append(",\"lsn\":");
    AppendUint(lsn_, &txid_lsn_);
    txid_lsn_.append(",\"xmin\":null}");
  }

  // Counts the event in its transaction; returns its total_order, or 0
  // when the start of the transaction was not seen.
  uint64_t Track(bool last) {
    NewTransactionIfNeeded();
    ++total_;
    uint64_t order = known_ ? total_ : 0;
    collection_order_ = 0;
    if (known_) {
      std::string name(f_.schema);
      name.push_back('.');
      name.append(f_.table);
      for (auto& [n, count] : collections_) {
        if (n == name) {
          collection_order_ = ++count;
          break;
        }
      }
      if (collection_order_ == 0) {
        collections_.emplace_back(std::move(name), 1);
        collection_order_ = 1;
      }
    }
    if (last) {
      open_ = false;
      at_start_ = true;
      have_prev_ = true;
      prev_lsn_ = lsn_;
    }
    return order;
  }

  struct Column {
    std::string name;  // its JSON string token, as rows hold it
    uint32_t oid = 0;
    int32_t typmod = -1;
    bool converts = false;
  };
  struct Relation {
    std::vector<Column> columns;
    bool converts = false;  // some column's values are converted
  };

  static std::string RelationKey(std::string_view schema,
                                 std::string_view table) {
    std::string k(schema);
    k.push_back('\0');
    k.append(table);
    return k;
  }

  // A schema event: the relation's columns and their types, for the
  // value conventions of the events after it.
  void Learn() {
    Relation rel;
    try {
      auto cols = nlohmann::json::parse(f_.columns);
      for (const auto& c : cols) {
        Column col;
        if (!AppendJsonString(c.at("name").get<std::string>(), &col.name))
          continue;
        col.oid = c.at("type_oid").get<uint32_t>();
        if (c.contains("type_mod")) col.typmod = c["type_mod"].get<int32_t>();
        col.converts = DebeziumConverts(col.oid, o_);
        rel.converts = rel.converts || col.converts;
        rel.columns.push_back(std::move(col));
      }
    } catch (const nlohmann::json::exception&) {
      return;  // a schema event without column types: values as stored
    }
    relations_[RelationKey(f_.schema, f_.table)] = std::move(rel);
  }

  const Relation* FindRelation() const {
    if (relations_.empty()) return nullptr;
    auto it = relations_.find(RelationKey(f_.schema, f_.table));
    if (it == relations_.end() || !it->second.converts) return nullptr;
    return &it->second;
  }

  // A row object (before, after, key), its values converted per column
  // type when the relation's types are known.
  void AppendRow(std::string_view row, std::string* out) const {
    if (rel_ == nullptr || row.size() < 2 || row.front() != '{') {
      out->append(row);
      return;
    }
    const size_t start = out->size();
    out->push_back('{');
    size_t p = 1;
    bool first = true;
    auto ws = [&] {
      while (p < row.size() && (row[p] == ' ' || row[p] == '\n' ||
                                row[p] == '\t' || row[p] == '\r'))
        ++p;
    };
    for (;;) {
      ws();
      if (p < row.size() && row[p] == '}') break;
      size_t nb = p;
      if (!SkipJsonValue(row, &p)) break;
      std::string_view name = row.substr(nb, p - nb);
      ws();
      if (p >= row.size() || row[p] != ':') break;
      ++p;
      ws();
      size_t vb = p;
      if (!SkipJsonValue(row, &p)) break;
      std::string_view value = row.substr(vb, p - vb);
      if (!first) out->push_back(',');
      first = false;
      out->append(name);
      out->push_back(':');
      const Column* col = nullptr;
      for (const Column& c : rel_->columns)
        if (c.name == name) col = &c;
      if (col != nullptr && col->converts)
        AppendDebeziumValue(value, col->oid, col->typmod, o_, out);
      else
        out->append(value);
      ws();
      if (p < row.size() && row[p] == ',') ++p;
    }
    ws();
    if (p >= row.size() || row[p] != '}' || p + 1 != row.size()) {
      out->resize(start);  // not an object of members: as stored
      out->append(row);
      return;
    }
    out->push_back('}');
  }

  void AppendAfter(std::string* out) const {
    if (IsNull(f_.after) || f_.after.size() < 2 || f_.after.back() != '}') {
      out->append(IsNull(f_.after) ? std::string_view("null") : f_.after);
      return;
    }
    const size_t start = out->size();
    AppendRow(f_.after, out);
    if (out->size() > start && out->back() == '}') out->pop_back();
    bool empty =
        f_.after.find_first_not_of(" \t\r\n", 1) == f_.after.size() - 1;
    // Unchanged TOASTed columns: Debezium's placeholder, by name.
    (void)ForEachElement(f_.unchanged, [&](std::string_view name) {
      if (name.empty() || name[0] != '"') return;
      if (!empty) out->push_back(',');
      empty = false;
      out->append(name);
      out->append(":\"__debezium_unavailable_value\"");
    });
    out->push_back('}');
  }

  void AppendSource(char op, bool last, std::string* out) const {
    out->append("\"source\":");
    out->append(src_head_);
    out->append(",\"snapshot\":");
    out->append(op != 'r' ? "\"false\"" : last ? "\"last\"" : "\"true\"");
    out->append(src_tail_);
    out->append(",\"schema\":");
    out->append(f_.schema.empty() ? std::string_view("\"\"") : f_.schema);
    out->append(",\"table\":");
    out->append(f_.table.empty() ? std::string_view("\"\"") : f_.table);
    out->append(txid_lsn_);
  }

  // A message's content as base64: stored as text (UTF-8) or, when it was
  // not text, already as base64.
  Status MessageContent(std::string* content) const {
    std::string_view token = f_.content, plain;
    if (f_.content_encoding == "\"base64\"") {
      if (!PlainStringContent(token, &plain))
        return Status::Corruption("stored message content is not base64");
      content->assign(plain);
      return Status::OK();
    }
    if (PlainStringContent(token, &plain)) {
      AppendBase64(plain, content);
      return Status::OK();
    }
    try {
      AppendBase64(nlohmann::json::parse(token).get<std::string>(), content);
    } catch (const nlohmann::json::exception&) {
      return Status::Corruption("stored message content is not a string");
    }
    return Status::OK();
  }

  const RenderOptions o_;
  const bool with_key_;
  const std::function<int64_t()> clock_;
  std::unordered_map<std::string, Relation> relations_;
  const Relation* rel_ = nullptr;  // the event's, when values convert
  std::string fixed_;              // {"version":..,"connector":..,"name":..
  std::string db_;                 // ,"db":..
  StoredFields f_;

  // The transaction being read.
  bool at_start_ = false;  // the next event starts a transaction
  bool open_ = false;
  bool known_ = false;  // its first event was seen
  Lsn lsn_ = 0;
  uint64_t xid_ = 0;
  int64_t commit_us_ = 0;
  uint64_t total_ = 0;
  uint64_t collection_order_ = 0;
  std::vector<std::pair<std::string, uint64_t>> collections_;
  std::string txn_id_;    // {"id":"xid:lsn"
  std::string src_head_;  // fixed_ and the commit stamps
  std::string src_tail_;  // ,"db":..,"sequence":..
  std::string txid_lsn_;  // ,"txId":..,"lsn":..,"xmin":null}
  bool have_prev_ = false;
  Lsn prev_lsn_ = 0;
};

}  // namespace

std::unique_ptr<Renderer> MakeDebeziumRenderer(const RenderOptions& options,
                                               const SourceInfo& source) {
  return std::make_unique<DebeziumRenderer>(options, source);
}

}  // namespace cdc::event
