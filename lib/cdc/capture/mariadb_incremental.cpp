#include "cdc/capture/mariadb_incremental.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "cdc/base/logging.h"
#include "cdc/capture/mariadb_snapshot.h"
#include "cdc/event/json_text.h"

namespace cdc::capture {

namespace {

using Kind = mariadb::RowStream::Kind;
using maria::QuoteName;
using maria::ReadPlan;

constexpr char kHex[] = "0123456789abcdef";

struct MariaChunk : ChunkSource::Chunk {
  maria::Table table;               // names_json and shape only
  std::vector<std::string> bodies;  // each row from ,"schema" to "after"
};

bool IsDigits(std::string_view s, bool sign, bool dot) {
  if (sign && s.starts_with('-')) s.remove_prefix(1);
  bool any = false, dotted = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      any = true;
    } else if (c == '.' && dot && !dotted) {
      dotted = true;
    } else {
      return false;
    }
  }
  return any;
}

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

// Why a key column of this type cannot be read in key order, or empty.
std::string UnorderedKeyType(const std::string& sql_type) {
  static const char* const kRefused[] = {"enum",
                                         "set",
                                         "bit",
                                         "geometry",
                                         "point",
                                         "linestring",
                                         "polygon",
                                         "multipoint",
                                         "multilinestring",
                                         "multipolygon",
                                         "geometrycollection",
                                         "uuid",
                                         "inet6",
                                         "inet4"};
  for (const char* t : kRefused)
    if (sql_type == t) return sql_type;
  return "";
}

// The key column's value in the current row as last_key keeps it.
std::string KeyText(const ReadPlan& p, const mariadb::RowStream& r, size_t i) {
  char buf[64];
  switch (p.kinds[i]) {
    case Kind::kSigned:
      return std::to_string(r.i64(i));
    case Kind::kUnsigned:
      return std::to_string(r.u64(i));
    case Kind::kFloat:
      snprintf(buf, sizeof buf, "%.17g", static_cast<double>(r.f32(i)));
      return buf;
    case Kind::kDouble:
      snprintf(buf, sizeof buf, "%.17g", r.f64(i));
      return buf;
    case Kind::kTime: {
      const mariadb::WireTime& t = r.time(i);
      const uint8_t real = p.table.columns[i].real;
      if (real == 10)
        snprintf(buf, sizeof buf, "%04u-%02u-%02u", t.year, t.month, t.day);
      else if (real == 19)
        snprintf(buf, sizeof buf, "%s%02u:%02u:%02u.%06u", t.neg ? "-" : "",
                 t.hour, t.minute, t.second, t.micros);
      else
        snprintf(buf, sizeof buf, "%04u-%02u-%02u %02u:%02u:%02u.%06u", t.year,
                 t.month, t.day, t.hour, t.minute, t.second, t.micros);
      return buf;
    }
    case Kind::kBytes:
      break;
  }
  const std::string_view b = r.bytes(i);
  if (p.table.columns[i].real == 246) return std::string(b);  // DECIMAL
  std::string hex;
  hex.reserve(b.size() * 2);
  for (unsigned char c : b) {
    hex.push_back(kHex[c >> 4]);
    hex.push_back(kHex[c & 15]);
  }
  return hex;
}

// The SQL literal of a last_key value of column i (from a request file,
// so checked: a literal never carries anything else).
Result<std::string> KeyLiteral(const ReadPlan& p, size_t i,
                               const std::string& text) {
  const mariadb::Column& c = p.table.columns[i];
  const auto bad = [&] {
    return Status::Usage("the last key of the snapshot's progress has \"" +
                         text.substr(0, 80) + "\" for column " + c.name +
                         ", which is not a value of its type");
  };
  switch (p.kinds[i]) {
    case Kind::kSigned:
    case Kind::kUnsigned:
      if (!IsDigits(text, p.kinds[i] == Kind::kSigned, false)) return bad();
      return text;
    case Kind::kFloat:
    case Kind::kDouble: {
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) return bad();
      char buf[64];
      snprintf(buf, sizeof buf, "%.17g", d);
      std::string lit = buf;
      // A double literal (1.5 alone would be a DECIMAL).
      if (lit.find('e') == std::string::npos) lit += "E0";
      return lit;
    }
    case Kind::kTime:
      for (char ch : text)
        if (!((ch >= '0' && ch <= '9') || ch == '-' || ch == ':' || ch == '.' ||
              ch == ' '))
          return bad();
      return "'" + text + "'";
    case Kind::kBytes:
      break;
  }
  if (c.real == 246) {
    if (!IsDigits(text, true, true)) return bad();
    return text;
  }
  if (text.size() % 2 != 0 ||
      text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return bad();
  const std::string hex = "X'" + text + "'";
  const std::string& coll = p.collations[i];
  if (coll.empty() || c.charset == nullptr) return hex;  // binary
  const std::string cs(c.charset->name());
  if (!IsName(cs) || !IsName(coll))
    return Status::Usage("column " + c.name + " has charset " + cs +
                         " and collation " + coll +
                         ", which a key literal cannot name");
  // The column's own collation: the order ORDER BY reads it in.
  return "_" + cs + " " + hex + " COLLATE " + coll;
}

class MariaChunkSource : public ChunkSource {
 public:
  MariaChunkSource(mariadb::Dsn dsn, std::string log_id,
                   std::function<bool(const std::string&)> selected,
                   MariaStreamContext stream)
      : dsn_(std::move(dsn)),
        log_id_(std::move(log_id)),
        selected_(std::move(selected)),
        stream_(stream) {}

  Result<uint64_t> Validate(const log::IncrementalSnapshot& req) override {
    if (req.schema != dsn_.database)
      return Status::NotFound("table " + req.QualifiedName() +
                              " is not in database " + dsn_.database +
                              ", the one capture reads");
    if (req.table == kMariaSignalTable)
      return Status::Usage(req.QualifiedName() +
                           " is capture's own signal table");
    if (!selected_(req.table))
      return Status::NotFound("table " + req.QualifiedName() +
                              " is not one capture reads (--table)");
    CDC_RETURN_IF_ERROR(Connect());
    CDC_ASSIGN_OR_RETURN(auto plan, Plan(req));
    if (!plan->transactional())
      LogWarning(
          "table " + req.QualifiedName() + " is " +
          (plan->engine.empty() ? std::string("not InnoDB") : plan->engine) +
          ", not transactional: a chunk is its rows when read");
    CDC_RETURN_IF_ERROR(conn_->Exec(
        "CREATE TABLE IF NOT EXISTS " + SignalName() +
        " (capture VARCHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY, "
        "watermark TEXT CHARACTER SET utf8mb4 NOT NULL, writes BIGINT "
        "UNSIGNED NOT NULL) ENGINE=InnoDB COMMENT='cdc-capture incremental "
        "snapshot watermarks'"));
    return plan->estimate;
  }

  Status Watermark(const std::string& content) override {
    CDC_RETURN_IF_ERROR(Connect());
    return conn_->Exec("INSERT INTO " + SignalName() +
                       " (capture, watermark, writes) VALUES (" +
                       conn_->Quote(log_id_) + ", " + conn_->Quote(content) +
                       ", 1) ON DUPLICATE KEY UPDATE watermark = "
                       "VALUES(watermark), writes = writes + 1");
  }

  Status Begin() override {
    CDC_RETURN_IF_ERROR(Connect());
    return conn_->Exec("START TRANSACTION");
  }

  Result<std::unique_ptr<Chunk>> Read(
      const log::IncrementalSnapshot& req) override {
    const std::string name =
        QuoteName(dsn_.database) + "." + QuoteName(req.table);
    // The metadata lock this takes holds off DDL until the high watermark
    // commits: the rows read have the shape described next at that point
    // of the stream.
    CDC_RETURN_IF_ERROR(conn_->Exec("SELECT 1 FROM " + name + " LIMIT 0"));
    CDC_ASSIGN_OR_RETURN(auto plan, Plan(req));
    std::string sql =
        "SELECT " + plan->columns + " FROM " + name + " FORCE INDEX (PRIMARY)";
    if (req.last_key) {
      if (req.last_key->size() != key_.size())
        return Status::Usage("the primary key of " + req.QualifiedName() +
                             " changed during its snapshot");
      // (k1 > v1) OR (k1 = v1 AND k2 > v2) OR ...: a range the optimizer
      // reads from the index.
      std::vector<std::string> lit;
      for (size_t k = 0; k < key_.size(); ++k) {
        CDC_ASSIGN_OR_RETURN(std::string l,
                             KeyLiteral(*plan, key_[k], (*req.last_key)[k]));
        lit.push_back(std::move(l));
      }
      sql += " WHERE ";
      for (size_t k = 0; k < key_.size(); ++k) {
        if (k > 0) sql += " OR ";
        sql += "(";
        for (size_t e = 0; e < k; ++e)
          sql += QuoteName(plan->table.columns[key_[e]].name) + " = " + lit[e] +
                 " AND ";
        sql +=
            QuoteName(plan->table.columns[key_[k]].name) + " > " + lit[k] + ")";
      }
    }
    sql += " ORDER BY ";
    for (size_t k = 0; k < key_.size(); ++k) {
      if (k > 0) sql += ", ";
      sql += QuoteName(plan->table.columns[key_[k]].name);
    }
    sql += " LIMIT " + std::to_string(req.chunk_rows);
    auto c = std::make_unique<MariaChunk>();
    std::vector<std::string> last(key_.size());
    CDC_ASSIGN_OR_RETURN(auto rows, conn_->Stream(sql, plan->kinds));
    for (;;) {
      CDC_ASSIGN_OR_RETURN(bool more, rows->Next());
      if (!more) break;
      CDC_RETURN_IF_ERROR(maria::RowValues(*plan, *rows, &values_));
      std::string& body = c->bodies.emplace_back();
      maria::AppendRowBody(plan->table, values_, &body);
      for (size_t k = 0; k < key_.size(); ++k)
        last[k] = KeyText(*plan, *rows, key_[k]);
    }
    c->rows = c->bodies.size();
    if (c->rows > 0) c->last_key = std::move(last);
    c->table.names_json = plan->table.names_json;
    c->table.shape = plan->table.shape;
    return std::unique_ptr<Chunk>(std::move(c));
  }

  Status Commit() override { return conn_->Exec("COMMIT"); }

  void Drop() override {
    if (conn_) (void)conn_->Exec("ROLLBACK");
    conn_.reset();
  }

  Status RenderSchema(Chunk* chunk, event::EventLines* events) override {
    auto* c = static_cast<MariaChunk*>(chunk);
    auto& known = *stream_.known_shapes;
    auto it = known.find(c->table.names_json);
    if (it != known.end() && it->second == c->table.shape) return Status::OK();
    std::string& line = *events->Add();
    events->MarkSchema();
    line = *stream_.head;
    line += "s\"";
    line += c->table.names_json;
    line += c->table.shape;
    known[c->table.names_json] = c->table.shape;
    return Status::OK();
  }

  Status RenderRow(Chunk* chunk, size_t i, event::EventLines* events) override {
    auto* c = static_cast<MariaChunk*>(chunk);
    std::string& line = *events->Add();
    line = *stream_.head;
    line += "r\"";
    line += c->bodies[i];
    line += *stream_.tail;
    return Status::OK();
  }

 private:
  Status Connect() {
    if (conn_) return Status::OK();
    CDC_ASSIGN_OR_RETURN(conn_, mariadb::Connection::Connect(dsn_));
    // As the initial snapshot reads (UTC, text as stored), with DDL and
    // row locks waited on briefly: a chunk that cannot go ahead is
    // retried, not left holding up others.
    CDC_RETURN_IF_ERROR(conn_->Exec(
        "SET SESSION time_zone = '+00:00', character_set_results = NULL, "
        "max_statement_time = 0, lock_wait_timeout = 10, "
        "innodb_lock_wait_timeout = 10"));
    return conn_->Exec(
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
  }

  std::string SignalName() const {
    return QuoteName(dsn_.database) + "." + QuoteName(kMariaSignalTable);
  }

  // The table as information_schema describes it now, and its primary
  // key's columns in key order (key_).
  Result<std::unique_ptr<ReadPlan>> Plan(const log::IncrementalSnapshot& req) {
    CDC_ASSIGN_OR_RETURN(
        auto plans,
        maria::PlanTables(
            *conn_, dsn_.database, [](const std::string&) { return true; },
            &req.table, &charsets_));
    if (plans.empty())
      return Status::NotFound("table " + req.QualifiedName() +
                              " does not exist (or is not a base table)");
    std::unique_ptr<ReadPlan> p = std::move(plans[0]);
    CDC_ASSIGN_OR_RETURN(
        std::vector<mariadb::Row> names,
        conn_->Query("SELECT COLUMN_NAME FROM information_schema.STATISTICS "
                     "WHERE TABLE_SCHEMA = " +
                     conn_->Quote(dsn_.database) +
                     " AND TABLE_NAME = " + conn_->Quote(req.table) +
                     " AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX"));
    key_.clear();
    for (const mariadb::Row& r : names) {
      if (r.empty() || !r[0]) continue;
      for (size_t i = 0; i < p->table.columns.size(); ++i)
        if (p->table.columns[i].name == *r[0]) key_.push_back(i);
    }
    if (key_.empty() || key_.size() != names.size())
      return Status::Usage(
          "table " + req.QualifiedName() +
          " has no primary key: an incremental snapshot reads a table in "
          "key order (add one, or take a new log's initial snapshot)");
    for (size_t i : key_) {
      const std::string t = UnorderedKeyType(p->sql_types[i]);
      if (!t.empty())
        return Status::Usage(
            "the primary key of " + req.QualifiedName() + " has column " +
            p->table.columns[i].name + " of type " + t +
            ", whose order is not its value's: an incremental snapshot "
            "cannot read it in key order");
    }
    return p;
  }

  const mariadb::Dsn dsn_;
  const std::string log_id_;
  const std::function<bool(const std::string&)> selected_;
  const MariaStreamContext stream_;  // capture thread
  // Worker thread:
  std::unique_ptr<mariadb::Connection> conn_;
  maria::Charsets charsets_;
  std::vector<size_t> key_;
  std::vector<std::string> values_;
};

}  // namespace

std::unique_ptr<ChunkSource> MakeMariaChunkSource(
    const mariadb::Dsn& dsn, std::string log_id,
    std::function<bool(const std::string& table)> selected,
    MariaStreamContext stream) {
  return std::make_unique<MariaChunkSource>(dsn, std::move(log_id),
                                            std::move(selected), stream);
}

std::string SignalContent(const std::vector<mariadb::Column>& columns,
                          const std::vector<std::string>& values,
                          const std::string& log_id) {
  std::string mine;
  (void)event::AppendJsonString(log_id, &mine);
  const std::string* capture = nullptr;
  const std::string* watermark = nullptr;
  for (size_t i = 0; i < columns.size() && i < values.size(); ++i) {
    if (columns[i].name == "capture") capture = &values[i];
    if (columns[i].name == "watermark") watermark = &values[i];
  }
  if (capture == nullptr || watermark == nullptr || *capture != mine) return "";
  try {
    return nlohmann::json::parse(*watermark).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return "";
  }
}

}  // namespace cdc::capture
