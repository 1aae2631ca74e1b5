// --format debezium: the change-event value of Debezium's PostgreSQL
// connector as JsonConverter prints it with schemas.enable=false, built
// from the stored event by copying its JSON values (rows are never
// re-encoded). What Debezium would show differently is listed in
// cdc-tail(1), FORMATS (Debezium).
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cdc/base/time.h"
#include "cdc/base/version.h"
#include "cdc/event/debezium_internal.h"
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

// The options as the MySQL connector takes them for a MariaDB log: its
// time.precision.mode has no "adaptive", and its default is
// adaptive_time_microseconds.
RenderOptions ForSource(RenderOptions o, const SourceInfo& source) {
  if (source.kind == "mariadb" && o.time_precision == TimePrecision::kAdaptive)
    o.time_precision = TimePrecision::kAdaptiveTimeMicroseconds;
  return o;
}

// How a MariaDB column's stored values become the MySQL connector's.
enum class MariaKind : uint8_t {
  kAsStored,  // numbers, text, ENUM, SET, JSON (text already)
  kPg,        // as the PostgreSQL type it maps to (oid, typmod)
  kTemporal,  // DATE, DATETIME, TIMESTAMP: a zero or partial date is null
  kTime,      // TIME: signed, up to 838 hours
  kGeometry,  // {"srid","wkb"} -> {"wkb","srid"} (srid 0: null)
  kBits,      // BIT(1) boolean; BIT(n) n bits' bytes, little-endian
};

// The MariaDB type name of a schema event ("decimal(10,2) unsigned",
// "datetime(6)") as the PostgreSQL type whose Debezium form is the MySQL
// connector's for it.
MariaKind MapMariaType(std::string_view type, uint32_t* oid, int32_t* typmod) {
  auto paren = [&](std::string_view name) -> int {
    if (type.substr(0, name.size()) != name) return -2;
    std::string_view rest = type.substr(name.size());
    if (rest.empty() || rest[0] == ' ') return -1;  // no (n)
    if (rest[0] != '(') return -2;
    int n = 0;
    size_t i = 1;
    for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i)
      n = n * 10 + (rest[i] - '0');
    return i < rest.size() && (rest[i] == ')' || rest[i] == ',') ? n : -2;
  };
  *typmod = -1;
  if (type.substr(0, 8) == "decimal(") {
    int p = 0, sc = 0;
    size_t i = 8;
    for (; i < type.size() && type[i] >= '0' && type[i] <= '9'; ++i)
      p = p * 10 + (type[i] - '0');
    if (i < type.size() && type[i] == ',') {
      for (++i; i < type.size() && type[i] >= '0' && type[i] <= '9'; ++i)
        sc = sc * 10 + (type[i] - '0');
    }
    *oid = pgtype::kNumeric;
    *typmod = ((p << 16) | sc) + 4;
    return MariaKind::kPg;
  }
  if (type == "date") {
    *oid = pgtype::kDate;
    return MariaKind::kTemporal;
  }
  for (auto [name, pg] :
       {std::pair<std::string_view, uint32_t>{"datetime", pgtype::kTimestamp},
        {"timestamp", pgtype::kTimestamptz}}) {
    const int n = paren(name);
    if (n == -2) continue;
    *oid = pg;
    *typmod = n < 0 ? 0 : n;
    return MariaKind::kTemporal;
  }
  if (paren("time") != -2) {
    *oid = pgtype::kTime;
    return MariaKind::kTime;
  }
  if (const int n = paren("bit"); n > 0) {
    *oid = pgtype::kBit;
    *typmod = n;
    return MariaKind::kBits;
  }
  if (type == "binary" || type == "varbinary" || type == "blob") {
    *oid = pgtype::kBytea;
    return MariaKind::kPg;
  }
  if (type == "geometry") return MariaKind::kGeometry;
  return MariaKind::kAsStored;
}

// A stored MariaDB TIME ("[-]HHH:MM:SS[.ffffff]") in microseconds.
bool ParseMariaTime(std::string_view s, int64_t* us) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  int64_t h = 0, m = 0, sec = 0, frac = 0;
  size_t i = 0, digits = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 4; ++i)
    h = h * 10 + (s[i] - '0');
  if (i == 0 || s.size() < i + 6 || s[i] != ':' || s[i + 3] != ':')
    return false;
  for (size_t k : {i + 1, i + 2, i + 4, i + 5})
    if (s[k] < '0' || s[k] > '9') return false;
  m = (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
  sec = (s[i + 4] - '0') * 10 + (s[i + 5] - '0');
  i += 6;
  if (i < s.size()) {
    if (s[i] != '.') return false;
    for (++i; i < s.size(); ++i, ++digits) {
      if (s[i] < '0' || s[i] > '9' || digits == 6) return false;
      frac = frac * 10 + (s[i] - '0');
    }
    for (; digits < 6; ++digits) frac *= 10;
  }
  if (m > 59 || sec > 59) return false;
  const int64_t v = ((h * 60 + m) * 60 + sec) * 1000000 + frac;
  *us = negative ? -v : v;
  return true;
}

class DebeziumRenderer : public Renderer {
 public:
  DebeziumRenderer(const RenderOptions& o, const SourceInfo& source)
      : o_(ForSource(o, source)),
        mysql_(source.kind == "mariadb"),
        with_key_(o.with_key),
        clock_(o.clock ? o.clock : std::function<int64_t()>(NowMicros)) {
    std::string name = o.server_name;
    if (name.empty()) name = source.database.empty() ? "cdc" : source.database;
    fixed_ = "{\"version\":";
    AppendJsonStringUnchecked(std::string("cdc-") + kVersion, &fixed_);
    fixed_.append(mysql_ ? ",\"connector\":\"mysql\",\"name\":"
                         : ",\"connector\":\"postgresql\",\"name\":");
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
    if (f_.op_code == 's') {
      Learn();
      Boundary(last);
    } else {
      Track(last, !IsIncrementalRead());
    }
    return Status::OK();
  }

  Status Append(uint64_t seq, std::string_view stored, bool last,
                std::string* out) override {
    CDC_RETURN_IF_ERROR(ScanStored(stored, &f_));
    const char op = f_.op_code;
    if (op == 's') {  // Debezium's PostgreSQL connector has no such event
      Learn();
      Boundary(last);
      return Status::OK();
    }
    std::string content;  // op m: the message's bytes in base64
    if (op == 'm') {
      Status s = MessageContent(&content);
      if (!s.ok()) return s;
    }
    // A row of an incremental snapshot is no change of the transaction it
    // was written in: the connector reads it outside the stream, so it
    // has no transaction block, txId or lsn, and is not counted.
    const bool incremental = IsIncrementalRead();
    const uint64_t order = Track(last, !incremental);
    const bool known = order > 0;
    MysqlPosition();
    rel_ = FindRelation();
    if (o_.schemas_required && !relation_known_ && op != 't' && op != 'm')
      return Status::Corruption(
          "seq " + std::to_string(seq) + ": no schema event of " +
          std::string(f_.schema) + "." + std::string(f_.table) +
          " comes before it, so its values have no types (the log's "
          "schemas.ndjson lost it? see cdc-log verify)");
    if (with_key_) {
      out->append("{\"key\":");
      if (op == 'm') {
        out->append("{\"prefix\":");
        out->append(IsNull(f_.prefix) ? std::string_view("\"\"") : f_.prefix);
        out->push_back('}');
      } else {
        AppendRow(IsNull(f_.key) ? std::string_view("null") : f_.key, "key",
                  out);
      }
      out->append(",\"value\":");
    }
    out->push_back('{');
    if (op != 't' && op != 'm') {
      out->append("\"before\":");
      if (!IsNull(f_.before)) {
        AppendRow(f_.before, "before", out);
      } else if ((op == 'u' || op == 'd') && !IsNull(f_.key)) {
        // The identity is all PostgreSQL sent. (For an update Debezium's
        // code has "before":null; its documentation, which this follows,
        // shows the key.)
        AppendRow(f_.key, "key", out);
      } else {
        out->append("null");
      }
      out->append(",\"after\":");
      AppendAfter(out);
      out->push_back(',');
    }
    AppendSource(op == 'r' ? SnapshotMarker(last, order) : "\"false\"",
                 !incremental, out);
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
    collections_used_ = 0;
    txn_id_ = "{\"id\":\"";
    AppendUint(xid_, &txn_id_);
    txn_id_.push_back(':');
    AppendUint(lsn_, &txn_id_);
    txn_id_.push_back('"');
    mysql_position_ = false;
    auto ts = ParseTimestamp(f_.ts.substr(1, f_.ts.size() - 2));
    commit_us_ = ts.ok() ? *ts : 0;
    // source fields that are the same for every event of the transaction
    src_head_ = fixed_;
    AppendStamps(commit_us_, &src_head_);
    src_tail_ = db_;
    if (mysql_) return;  // MysqlPosition, at the first row change
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

  // A MariaDB log's transaction: its binlog coordinates (server_id, gtid,
  // file and the GTID event's pos, the same for all its rows) and the
  // GTID as its id, from its first row change (a schema event before it
  // carries none).
  void MysqlPosition() {
    if (!mysql_ || mysql_position_) return;
    mysql_position_ = !f_.gtid.empty();
    if (mysql_position_) {
      txn_id_ = "{\"id\":";  // the GTID, as the connector with GTIDs
      txn_id_.append(f_.gtid);
    }
    mysql_pos_ = ",\"server_id\":";
    AppendUint(xid_, &mysql_pos_);
    mysql_pos_.append(",\"gtid\":");
    mysql_pos_.append(f_.gtid.empty() ? std::string_view("null") : f_.gtid);
    mysql_pos_.append(",\"file\":");
    mysql_pos_.append(f_.file.empty() ? std::string_view("null") : f_.file);
    mysql_pos_.append(",\"pos\":");
    mysql_pos_.append(f_.pos.empty() ? std::string_view("null") : f_.pos);
    mysql_pos_.append(",\"row\":");
  }

  // Follows the transaction boundaries: an event starts a transaction or
  // belongs to the open one, and `last` ends it. All that a schema event
  // does: Debezium has no such event, so it is not counted.
  void Boundary(bool last) {
    NewTransactionIfNeeded();
    EndIfLast(last);
  }

  void EndIfLast(bool last) {
    if (last) {
      open_ = false;
      at_start_ = true;
      have_prev_ = true;
      prev_lsn_ = lsn_;
    }
  }

  // Counts a change (or message) in its transaction (Debezium's
  // TransactionMonitor) when `counted`; returns its total_order, or 0 when
  // the start of the transaction was not seen or it is not counted.
  uint64_t Track(bool last, bool counted) {
    NewTransactionIfNeeded();
    if (!counted) {
      EndIfLast(last);
      return 0;
    }
    ++total_;
    uint64_t order = known_ ? total_ : 0;
    collection_order_ = 0;
    if (known_) {
      // "schema\0table" of the JSON tokens, compared in place.
      const std::string_view schema = f_.schema, table = f_.table;
      auto same = [&](const std::string& n) {
        return n.size() == schema.size() + 1 + table.size() &&
               n.compare(0, schema.size(), schema) == 0 &&
               n[schema.size()] == '\0' &&
               n.compare(schema.size() + 1, table.size(), table) == 0;
      };
      for (size_t i = 0; i < collections_used_; ++i) {
        if (same(collections_[i].first)) {
          collection_order_ = ++collections_[i].second;
          break;
        }
      }
      if (collection_order_ == 0) {
        // Entries of earlier transactions are reused, strings and all.
        if (collections_used_ == collections_.size())
          collections_.emplace_back();
        auto& [n, count] = collections_[collections_used_++];
        n.assign(schema);
        n.push_back('\0');
        n.append(table);
        count = 1;
        collection_order_ = 1;
      }
    }
    EndIfLast(last);
    return order;
  }

  // Whether the event is a row of an incremental snapshot (op r, stored
  // with "snapshot":"incremental"), not of the initial snapshot.
  bool IsIncrementalRead() const {
    return f_.op_code == 'r' && f_.snapshot == "\"incremental\"";
  }

  // source.snapshot of a snapshot read, as Debezium's
  // RelationalSnapshotChangeEventSource.setSnapshotMarker has it (with one
  // snapshot thread, its default), from the stored "snapshot" member
  // (a table's "first", "last" or "only" row) and the event's place in the
  // snapshot's transaction: "last" for its last event, "first" for its
  // first (the first table's first row; `order` 1), then
  // "last_in_data_collection" and "first_in_data_collection" for a
  // table's last and first rows, and "true" for the others. A row of an
  // incremental snapshot is "incremental" (SnapshotRecord.INCREMENTAL).
  std::string_view SnapshotMarker(bool last, uint64_t order) const {
    if (IsIncrementalRead()) return "\"incremental\"";
    if (last) return "\"last\"";
    const std::string_view tag = f_.snapshot;
    const bool first = tag == "\"first\"", only = tag == "\"only\"";
    if ((first || only) && order == 1) return "\"first\"";
    if (only || tag == "\"last\"") return "\"last_in_data_collection\"";
    if (first) return "\"first_in_data_collection\"";
    return "\"true\"";
  }

  struct Column {
    std::string name;     // its JSON string token, as rows hold it
    std::string pointer;  // the name as a JSON Pointer token (RFC 6901)
    uint32_t oid = 0;
    int32_t typmod = -1;
    bool converts = false;
    MariaKind maria = MariaKind::kAsStored;  // a MariaDB log's column
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
        const std::string name = c.at("name").get<std::string>();
        if (!AppendJsonString(name, &col.name)) continue;
        for (char ch : name) {
          if (ch == '~') {
            col.pointer.append("~0");
          } else if (ch == '/') {
            col.pointer.append("~1");
          } else {
            col.pointer.push_back(ch);
          }
        }
        if (mysql_) {
          // A MariaDB log's columns name their type in words, mapped to
          // the MySQL connector's conventions.
          col.maria = MapMariaType(c.value("type", std::string()), &col.oid,
                                   &col.typmod);
          col.converts = col.maria != MariaKind::kAsStored;
        } else {
          col.oid = c.value("type_oid", 0u);
          if (c.contains("type_mod")) col.typmod = c["type_mod"].get<int32_t>();
          col.converts = DebeziumConverts(col.oid, o_);
        }
        rel.converts = rel.converts || col.converts;
        rel.columns.push_back(std::move(col));
      }
    } catch (const nlohmann::json::exception&) {
      return;  // a schema event without column types: values as stored
    }
    relations_[RelationKey(f_.schema, f_.table)] = std::move(rel);
    cached_ = false;
  }

  // The event's relation when some of its values convert, else null
  // (relation_known_ tells whether a schema event described it at all);
  // the last one looked up is kept, so a run of one table's events costs
  // no lookup (and no allocation).
  const Relation* FindRelation() {
    relation_known_ = false;
    if (relations_.empty()) return nullptr;
    if (cached_ && f_.schema == cached_schema_ && f_.table == cached_table_) {
      relation_known_ = cached_known_;
      return cached_rel_;
    }
    auto it = relations_.find(RelationKey(f_.schema, f_.table));
    relation_known_ = cached_known_ = it != relations_.end();
    cached_rel_ =
        it == relations_.end() || !it->second.converts ? nullptr : &it->second;
    cached_schema_.assign(f_.schema);
    cached_table_.assign(f_.table);
    cached_ = true;
    return cached_rel_;
  }

  // The column `name` (a JSON string token) of rel_; columns come in the
  // relation's order, so the one after the last found is tried first.
  const Column* FindColumn(std::string_view name, size_t* next) const {
    const std::vector<Column>& cols = rel_->columns;
    if (*next < cols.size() && cols[*next].name == name)
      return &cols[(*next)++];
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].name == name) {
        *next = i + 1;
        return &cols[i];
      }
    }
    return nullptr;
  }

  // Whether the event's "json_null" lists /section/<column>: that column's
  // null is the JSON literal null, which Debezium's Json has as "null".
  bool IsJsonNull(std::string_view section, const Column& col) const {
    bool hit = false;
    (void)ForEachElement(f_.json_null, [&](std::string_view token) {
      std::string_view p;
      std::string decoded;
      if (hit) return;
      if (!PlainStringContent(token, &p)) {
        try {
          decoded = nlohmann::json::parse(token).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          return;
        }
        p = decoded;
      }
      hit = p.size() == section.size() + 2 + col.pointer.size() &&
            p[0] == '/' && p.substr(1, section.size()) == section &&
            p[section.size() + 1] == '/' &&
            p.substr(section.size() + 2) == col.pointer;
    });
    return hit;
  }

  // A row object (the event's `section`: before, after or key), its
  // values converted per column type when the relation's types are known.
  void AppendRow(std::string_view row, std::string_view section,
                 std::string* out) const {
    if (rel_ == nullptr || row.size() < 2 || row.front() != '{') {
      out->append(row);
      return;
    }
    const size_t start = out->size();
    out->push_back('{');
    size_t p = 1, next_column = 0;
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
      const Column* col = FindColumn(name, &next_column);
      if (col == nullptr || !col->converts) {
        out->append(value);
      } else if (col->maria != MariaKind::kAsStored &&
                 col->maria != MariaKind::kPg) {
        AppendMariaValue(value, *col, out);
      } else if (value == "null" && !f_.json_null.empty() &&
                 (col->oid == pgtype::kJson || col->oid == pgtype::kJsonb) &&
                 IsJsonNull(section, *col)) {
        out->append("\"null\"");
      } else {
        AppendDebeziumValue(value, col->oid, col->typmod, o_, f_.op_code == 'r',
                            out);
      }
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

  // A MariaDB TIME, zero-able date or GEOMETRY value as the MySQL
  // connector has it.
  void AppendMariaValue(std::string_view value, const Column& col,
                        std::string* out) const {
    std::string_view s;
    if (value == "null") {
      out->append(value);
      return;
    }
    switch (col.maria) {
      case MariaKind::kTime: {
        int64_t us;
        if (!PlainStringContent(value, &s) || !ParseMariaTime(s, &us)) break;
        AppendInt(o_.time_precision == TimePrecision::kConnect ? us / 1000 : us,
                  out);
        return;
      }
      case MariaKind::kTemporal:
        // Zero dates ("0000-00-00", a zero month or day) are no instant:
        // null, as the connector has them in a nullable column.
        if (!PlainStringContent(value, &s) || s.size() < 10 ||
            s.substr(5, 2) == "00" || s.substr(8, 2) == "00" ||
            !dbz::AppendTimeValue(s, col.oid, col.typmod, o_, f_.op_code == 'r',
                                  out))
          out->append("null");
        return;
      case MariaKind::kBits:
        // io.debezium.data.Bits sized to the column, as the MySQL
        // connector's JdbcValueConverters.convertBits has it.
        if (!PlainStringContent(value, &s) ||
            !dbz::AppendBits(s, col.typmod, /*column_sized=*/true, out))
          break;
        return;
      case MariaKind::kGeometry: {
        // io.debezium.data.geometry.Geometry: {"wkb","srid"}, srid 0 null.
        try {
          const auto g = nlohmann::json::parse(value);
          const std::string wkb = g.at("wkb").get<std::string>();
          const int64_t srid = g.at("srid").get<int64_t>();
          out->append("{\"wkb\":");
          AppendJsonStringUnchecked(wkb, out);
          out->append(",\"srid\":");
          if (srid == 0)
            out->append("null");
          else
            AppendInt(srid, out);
          out->push_back('}');
          return;
        } catch (const nlohmann::json::exception&) {
          break;
        }
      }
      default:
        break;
    }
    out->append(value);
  }

  void AppendAfter(std::string* out) const {
    if (IsNull(f_.after) || f_.after.size() < 2 || f_.after.back() != '}') {
      out->append(IsNull(f_.after) ? std::string_view("null") : f_.after);
      return;
    }
    const size_t start = out->size();
    AppendRow(f_.after, "after", out);
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

  // `position`: txId and lsn, which PostgresSourceInfoStructMaker leaves
  // out (null) for an incremental snapshot's rows, as it does xmin.
  void AppendSource(std::string_view snapshot, bool position,
                    std::string* out) const {
    if (mysql_) {
      AppendMysqlSource(snapshot, out);
      return;
    }
    out->append("\"source\":");
    out->append(src_head_);
    out->append(",\"snapshot\":");
    out->append(snapshot);
    out->append(src_tail_);
    out->append(",\"schema\":");
    out->append(f_.schema.empty() ? std::string_view("\"\"") : f_.schema);
    out->append(",\"table\":");
    out->append(f_.table.empty() ? std::string_view("\"\"") : f_.table);
    out->append(position ? std::string_view(txid_lsn_)
                         : ",\"txId\":null,\"lsn\":null,\"xmin\":null}");
  }

  // The MySQL connector's source block (its documented example's fields,
  // in their order): "row" counts the transaction's changes from 0, and
  // "thread" and "query" are not in the log.
  void AppendMysqlSource(std::string_view snapshot, std::string* out) const {
    out->append("\"source\":");
    out->append(src_head_);
    out->append(",\"snapshot\":");
    out->append(snapshot);
    out->append(src_tail_);
    out->append(",\"table\":");
    out->append(f_.table.empty() ? std::string_view("\"\"") : f_.table);
    out->append(mysql_pos_);
    AppendUint(total_ > 0 ? total_ - 1 : 0, out);
    out->append(",\"thread\":null,\"query\":null}");
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
  const bool mysql_;  // a MariaDB log: the MySQL connector's envelope
  const bool with_key_;
  const std::function<int64_t()> clock_;
  std::unordered_map<std::string, Relation> relations_;
  const Relation* rel_ = nullptr;  // the event's, when values convert
  bool cached_ = false;            // FindRelation's last answer
  bool cached_known_ = false;
  bool relation_known_ = false;  // the event's relation was described
  std::string cached_schema_, cached_table_;
  const Relation* cached_rel_ = nullptr;
  std::string fixed_;  // {"version":..,"connector":..,"name":..
  std::string db_;     // ,"db":..
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
  // "schema\0table" and data_collection_order of the tables seen in the
  // transaction: the first collections_used_ entries.
  std::vector<std::pair<std::string, uint64_t>> collections_;
  size_t collections_used_ = 0;
  std::string txn_id_;    // {"id":"xid:lsn"
  std::string src_head_;  // fixed_ and the commit stamps
  std::string src_tail_;  // ,"db":..,"sequence":..
  std::string txid_lsn_;  // ,"txId":..,"lsn":..,"xmin":null}
  // ,"server_id":..,"gtid":..,"file":..,"pos":..,"row":
  std::string mysql_pos_;
  bool mysql_position_ = false;  // mysql_pos_ and txn_id_ are this txn's
  bool have_prev_ = false;
  Lsn prev_lsn_ = 0;
};

}  // namespace

std::unique_ptr<Renderer> MakeDebeziumRenderer(const RenderOptions& options,
                                               const SourceInfo& source) {
  return std::make_unique<DebeziumRenderer>(options, source);
}

}  // namespace cdc::event
