#include "cdc/pgsink/target.h"

#include <algorithm>

#include "cdc/base/logging.h"
#include "cdc/event/json_scan.h"

namespace cdc::pgsink {

namespace {

using event::Field;
using event::JsonKind;

// Most parameters one statement may carry (the protocol's limit is 65535).
constexpr size_t kMaxParams = 60000;

std::string Str(const Field* f) {
  return f == nullptr ? std::string() : std::string(f->str);
}

// JSON pointer escaping of a member name (RFC 6901): ~ as ~0, / as ~1.
void AppendPointerName(std::string_view name, std::string* out) {
  for (char c : name) {
    if (c == '~')
      out->append("~0");
    else if (c == '/')
      out->append("~1");
    else
      out->push_back(c);
  }
}

// What a server error means for the sink, by SQLSTATE: worth retrying
// (the connection, a deadlock, a shutdown), the disk, permissions, values
// or constraints the target refuses, or its shape (the rest).
Status Classify(const std::string& code, std::string msg) {
  auto cls = [&](const char* p) { return code.rfind(p, 0) == 0; };
  if (cls("08") || cls("57P") || code == "40001" || code == "40P01" ||
      code == "55P03" || code == "53300" || code == "57014")
    return Status::Unavailable(std::move(msg));
  if (code == "53100" || cls("58")) return Status::IOError(std::move(msg));
  if (code == "42501") return Status::Permission(std::move(msg));
  if (cls("22") || cls("23")) return Status::BadInput(std::move(msg));
  return Status::Config(std::move(msg));
}

std::string SeqRange(uint64_t a, uint64_t b) {
  return a == b ? "seq " + std::to_string(a)
                : "seqs " + std::to_string(a) + "-" + std::to_string(b);
}

}  // namespace

Target::Target(Options o) : o_(std::move(o)) {}
Target::~Target() = default;

size_t Target::in_flight() const {
  size_t n = 0;
  for (const Flight& f : flights_) n += f.events;
  return n;
}

void Target::Drop() {
  conn_.reset();
  prepared_.clear();
  flights_.clear();
  tables_.clear();
}

Status Target::Query(const std::string& sql,
                     const std::vector<std::string>& params,
                     pg::PgResult* out) {
  auto r = conn_->ExecParams(sql, params);
  if (!r.ok()) {
    if (IsRetryable(r.status())) Drop();
    return Status(r.status().code(), "PostgreSQL: " + r.status().message());
  }
  if (out != nullptr) *out = std::move(*r);
  return Status::OK();
}

Result<std::optional<uint64_t>> Target::Open() {
  Drop();
  // The role's own search_path: the target's triggers and defaults may
  // name objects without a schema. Every name this sink writes is
  // qualified.
  CDC_ASSIGN_OR_RETURN(
      conn_, pg::Connection::Connect(o_.dsn, /*replication=*/false,
                                     /*pin_search_path=*/false, "cdc-pg"));
  state_ = conn_->QuoteIdent(o_.state_schema) + "." +
           conn_->QuoteIdent(o_.state_table);
  const std::string what =
      "the state table " + o_.state_schema + "." + o_.state_table + ": ";
  auto prefix = [&what](Status s) {
    return IsRetryable(s) ? s : Status(s.code(), what + s.message());
  };
  pg::PgResult r;
  Status s = Query("SELECT to_regclass($1) IS NOT NULL", {state_}, &r);
  if (!s.ok()) return prefix(s);
  if (r.get(0, 0) != "t") {
    s = Query(
        "CREATE SCHEMA IF NOT EXISTS " + conn_->QuoteIdent(o_.state_schema), {},
        nullptr);
    if (s.ok())
      s = Query("CREATE TABLE IF NOT EXISTS " + state_ +
                    " (consumer text PRIMARY KEY, seq bigint, log_id text, "
                    "applied_at timestamptz)",
                {}, nullptr);
    if (!s.ok()) return prefix(s);
  }
  s = Query("INSERT INTO " + state_ +
                " (consumer) VALUES ($1) ON CONFLICT DO NOTHING",
            {o_.consumer}, nullptr);
  if (s.ok())
    s = Query("SELECT seq, log_id FROM " + state_ + " WHERE consumer = $1",
              {o_.consumer}, &r);
  if (!s.ok()) return prefix(s);
  if (r.rows() != 1) return Status::Internal(what + "no row for the consumer");
  std::optional<uint64_t> applied;
  if (!r.is_null(0, 0)) {
    const std::string v = r.get(0, 0);
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || v[0] == '-')
      return Status::BadInput(what + "the applied seq is \"" + v + "\"");
    applied = n;
  }
  const std::string log_id = r.is_null(0, 1) ? "" : r.get(0, 1);
  if (applied && !log_id.empty() && !o_.log_id.empty() && log_id != o_.log_id)
    return Status::Config("consumer " + o_.consumer + " in " + o_.state_schema +
                          "." + o_.state_table + " applied log " + log_id +
                          ", not this log (" + o_.log_id +
                          "); use another consumer name");
  CDC_RETURN_IF_ERROR(conn_->EnterPipeline());
  expected_ = applied;
  queued_ = applied.value_or(0);
  confirmed_ = std::max(confirmed_, applied.value_or(0));
  if (opened_) ++m_.reconnects;
  opened_ = true;
  return applied;
}

// Waits until nothing is in flight, so a plain query may run.
Status Target::Drain() {
  while (!flights_.empty()) CDC_RETURN_IF_ERROR(Poll(1000));
  return Status::OK();
}

std::pair<std::string, std::string> Target::MapName(
    std::string_view schema, std::string_view table) const {
  std::string source = std::string(schema) + "." + std::string(table);
  auto it = o_.table_map.find(source);
  if (it != o_.table_map.end()) return it->second;
  return {o_.target_schema.empty() ? std::string(schema) : o_.target_schema,
          std::string(table)};
}

Result<Target::Table*> Target::Resolve(std::string_view schema,
                                       std::string_view table) {
  std::string source = std::string(schema) + "." + std::string(table);
  auto it = tables_.find(source);
  if (it != tables_.end()) return it->second.get();
  CDC_RETURN_IF_ERROR(Drain());  // a query needs the pipeline idle
  if (conn_ == nullptr) return Status::Unavailable("PostgreSQL: not connected");
  CDC_RETURN_IF_ERROR(conn_->ExitPipeline());
  auto t = std::make_unique<Table>();
  Status s = LoadTable(source, t.get());
  Status back = conn_ != nullptr ? conn_->EnterPipeline() : Status::OK();
  if (!s.ok()) return s;
  CDC_RETURN_IF_ERROR(back);
  Table* raw = t.get();
  tables_[source] = std::move(t);
  return raw;
}

Status Target::LoadTable(const std::string& source, Table* t) {
  t->source = source;
  auto [schema, name] = MapName(source.substr(0, source.find('.')),
                                source.substr(source.find('.') + 1));
  t->name = schema + "." + name;
  t->qualified = conn_->QuoteIdent(schema) + "." + conn_->QuoteIdent(name);
  pg::PgResult r;
  for (int attempt = 0;; ++attempt) {
    CDC_RETURN_IF_ERROR(Query(
        "SELECT c.attname, c.base, CASE WHEN b.typcategory = 'A' THEN "
        "(SELECT CASE WHEN e.typtype = 'd' THEN e.typbasetype ELSE e.oid END "
        "FROM pg_type e WHERE e.oid = b.typelem) ELSE 0 END, "
        "format_type(c.atttypid, NULL), c.attgenerated <> '' "
        "FROM (SELECT a.attnum, a.attname, a.atttypid, a.attgenerated, "
        "CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END AS base "
        "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 "
        "AND NOT a.attisdropped) c JOIN pg_type b ON b.oid = c.base "
        "ORDER BY c.attnum",
        {t->qualified}, &r));
    if (r.rows() > 0) break;
    if (!o_.create_tables || attempt > 0)
      return Status::Config("the target has no table " + t->name + " (for " +
                            source +
                            "); create it, map it with --table-map, or "
                            "pass --create-tables");
    CDC_RETURN_IF_ERROR(CreateTable(source, schema, name));
  }
  for (int i = 0; i < r.rows(); ++i) {
    Column c;
    c.name = r.get(i, 0);
    c.quoted = conn_->QuoteIdent(c.name);
    c.type = ClassifyType(static_cast<uint32_t>(std::stoul(r.get(i, 1))),
                          static_cast<uint32_t>(std::stoul(r.get(i, 2))));
    c.cast = r.get(i, 3);
    // json has no equality: whole rows compare it as jsonb.
    if (c.cast == "json") c.cast = "jsonb";
    if (c.cast == "json[]") c.cast = "jsonb[]";
    c.generated = r.get(i, 4) == "t";
    t->by_name[c.name] = t->columns.size();
    t->columns.push_back(std::move(c));
  }
  CDC_RETURN_IF_ERROR(
      Query("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON "
            "a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
            "WHERE i.indexrelid = (SELECT indexrelid FROM pg_index WHERE "
            "indrelid = to_regclass($1) AND (indisprimary OR indisreplident) "
            "ORDER BY indisprimary DESC LIMIT 1) "
            "ORDER BY array_position(i.indkey::int2[], a.attnum)",
            {t->qualified}, &r));
  for (int i = 0; i < r.rows(); ++i) {
    auto it = t->by_name.find(r.get(i, 0));
    if (it != t->by_name.end()) t->key.push_back(it->second);
  }
  if (o_.evolve) CDC_RETURN_IF_ERROR(Evolve(source, t));
  return Status::OK();
}

void Target::LearnSchema(std::string_view stored) {
  event::Fields f;
  if (!f.Parse(stored).ok()) return;
  const Field* schema = f.find("schema");
  const Field* table = f.find("table");
  const Field* cols = f.find("columns");
  if (schema == nullptr || table == nullptr || cols == nullptr ||
      cols->kind != JsonKind::kArray)
    return;
  std::vector<std::string_view> elems;
  SplitJsonArray(cols->value, &elems);
  std::vector<SourceColumn> out;
  for (std::string_view e : elems) {
    event::Fields c;
    if (!c.Parse(e).ok()) return;
    SourceColumn sc;
    sc.name = Str(c.find("name"));
    if (const Field* oid = c.find("type_oid"))
      sc.type_oid = static_cast<uint32_t>(
          std::strtoul(std::string(oid->value).c_str(), nullptr, 10));
    if (const Field* mod = c.find("type_mod"))
      sc.type_mod = static_cast<int32_t>(
          std::strtol(std::string(mod->value).c_str(), nullptr, 10));
    const Field* key = c.find("key");
    sc.key = key != nullptr && key->value == "true";
    out.push_back(std::move(sc));
  }
  schemas_[Str(schema) + "." + Str(table)] = std::move(out);
}

// The target's name of a built-in type with a modifier (-1: none).
Result<std::string> Target::TypeName(uint32_t oid, int32_t mod) {
  pg::PgResult r;
  if (mod < 0)
    CDC_RETURN_IF_ERROR(
        Query("SELECT format_type($1::oid, NULL)", {std::to_string(oid)}, &r));
  else
    CDC_RETURN_IF_ERROR(Query("SELECT format_type($1::oid, $2::int)",
                              {std::to_string(oid), std::to_string(mod)}, &r));
  return r.get(0, 0);
}

Status Target::CreateTable(const std::string& source, const std::string& schema,
                           const std::string& name) {
  auto it = schemas_.find(source);
  if (it == schemas_.end())
    return Status::Config("the target has no table " + schema + "." + name +
                          " and the log holds no schema event of " + source +
                          " to create it from");
  const std::vector<SourceColumn>& cols = it->second;
  std::string sql = "CREATE TABLE IF NOT EXISTS " + conn_->QuoteIdent(schema) +
                    "." + conn_->QuoteIdent(name) + " (";
  std::string key;
  size_t keys = 0;
  for (size_t i = 0; i < cols.size(); ++i) {
    const SourceColumn& c = cols[i];
    // Built-in types keep their OIDs across versions and servers; others
    // (enums, domains, extensions' types) are the source's own.
    if (c.type_oid >= 16384 || c.type_oid == 0)
      return Status::Config("cannot create " + schema + "." + name +
                            ": column " + c.name + " has type OID " +
                            std::to_string(c.type_oid) +
                            ", not a built-in type; create the table first");
    CDC_ASSIGN_OR_RETURN(std::string type, TypeName(c.type_oid, c.type_mod));
    if (i > 0) sql += ", ";
    sql += conn_->QuoteIdent(c.name) + " " + type;
    if (c.key) {
      if (keys++ > 0) key += ", ";
      key += conn_->QuoteIdent(c.name);
    }
  }
  // Every column a key: REPLICA IDENTITY FULL, not a primary key.
  if (keys > 0 && keys < cols.size()) sql += ", PRIMARY KEY (" + key + ")";
  sql += ")";
  CDC_RETURN_IF_ERROR(Query(
      "CREATE SCHEMA IF NOT EXISTS " + conn_->QuoteIdent(schema), {}, nullptr));
  CDC_RETURN_IF_ERROR(Query(sql, {}, nullptr));
  ++m_.created;
  LogInfo("created table " + schema + "." + name + " for " + source);
  return Status::OK();
}

Status Target::Evolve(const std::string& source, Table* t) {
  auto it = schemas_.find(source);
  if (it == schemas_.end()) return Status::OK();
  for (const SourceColumn& c : it->second) {
    if (t->by_name.count(c.name) > 0) continue;
    if (c.type_oid >= 16384 || c.type_oid == 0)
      return Status::Config("cannot add column " + c.name + " to " + t->name +
                            ": type OID " + std::to_string(c.type_oid) +
                            " is not a built-in type; add it first");
    CDC_ASSIGN_OR_RETURN(std::string type, TypeName(c.type_oid, c.type_mod));
    CDC_RETURN_IF_ERROR(Query("ALTER TABLE " + t->qualified +
                                  " ADD COLUMN IF NOT EXISTS " +
                                  conn_->QuoteIdent(c.name) + " " + type,
                              {}, nullptr));
    ++m_.evolved;
    LogInfo("added column " + c.name + " to " + t->name);
    pg::PgResult r;
    Column col;
    col.name = c.name;
    col.quoted = conn_->QuoteIdent(c.name);
    CDC_RETURN_IF_ERROR(Query(
        "SELECT CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END, "
        "CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE 0 END, "
        "format_type(t.oid, NULL) FROM pg_type t WHERE t.oid = $1::oid",
        {std::to_string(c.type_oid)}, &r));
    col.type = ClassifyType(static_cast<uint32_t>(std::stoul(r.get(0, 0))),
                            static_cast<uint32_t>(std::stoul(r.get(0, 1))));
    col.cast = r.get(0, 2);
    t->by_name[col.name] = t->columns.size();
    t->columns.push_back(std::move(col));
  }
  return Status::OK();
}

// ---- building a batch ----

void Target::Param(const std::string* value) {
  if (value == nullptr) {
    params_.push_back({0, -1});
    return;
  }
  // Text parameters end at their NUL (libpq ignores lengths for them).
  params_.push_back({pbuf_.size(), static_cast<int>(value->size())});
  pbuf_.append(*value);
  pbuf_.push_back('\0');
}

bool Target::JsonNull(const char* where, const std::string& column,
                      int element) {
  if (json_nulls_.empty()) return false;
  std::string p = "/";
  p += where;
  p += '/';
  AppendPointerName(column, &p);
  if (element >= 0) p += "/" + std::to_string(element);
  return std::find(json_nulls_.begin(), json_nulls_.end(), p) !=
         json_nulls_.end();
}

// The value `f` (absent: NULL) of column `c` in its text input form, in
// scratch_; false for SQL NULL.
Result<bool> Target::Convert(const Table& t, const Column& c, const Field* f,
                             const char* where) {
  scratch_.clear();
  if (f == nullptr) return false;
  auto r = AppendValue(
      c.type, JsonValue{f->kind, f->value, f->str},
      [&](int element) { return JsonNull(where, c.name, element); }, &scratch_);
  if (!r.ok())
    return Status::BadInput(t.name + "." + c.name + ": " +
                            r.status().message());
  return *r;
}

Status Target::ValueParam(const Table& t, const Column& c, const Field* f,
                          const char* where) {
  CDC_ASSIGN_OR_RETURN(bool present, Convert(t, c, f, where));
  Param(present ? &scratch_ : nullptr);
  return Status::OK();
}

Status Target::Send(std::string sql, std::string what, bool prepare) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  values.reserve(params_.size());
  lengths.reserve(params_.size());
  for (const auto& [off, len] : params_) {
    values.push_back(len < 0 ? nullptr : pbuf_.data() + off);
    lengths.push_back(len < 0 ? 0 : len);
  }
  Status s;
  if (prepare) {
    // Statements whose text depends only on the table and columns are
    // parsed and planned once per connection.
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      std::string name = "cdc" + std::to_string(prepared_.size() + 1);
      s = conn_->SendPrepare(name, sql, static_cast<int>(values.size()));
      if (!s.ok()) return s;
      building_->what.push_back("the statement for " + what);
      it = prepared_.emplace(std::move(sql), std::move(name)).first;
    }
    s = conn_->SendPrepared(it->second, values, lengths);
  } else {
    s = conn_->SendParams(sql, values, lengths);
  }
  params_.clear();
  pbuf_.clear();
  if (!s.ok()) return s;
  building_->what.push_back(std::move(what));
  ++m_.statements;
  return Status::OK();
}

void Target::StartGroup(Group g, Table* t, std::vector<size_t> cols,
                        uint64_t seq) {
  group_ = g;
  group_table_ = t;
  group_first_ = seq;
  group_unnest_ = true;
  for (size_t c : cols)
    if (t->columns[c].type.array) group_unnest_ = false;
  if (group_unnest_) colbuf_.assign(cols.size(), "{");
  group_cols_ = std::move(cols);
}

Status Target::GroupValue(const Table& t, const Column& c, const Field* f,
                          const char* where, size_t i) {
  if (!group_unnest_) return ValueParam(t, c, f, where);
  std::string& buf = colbuf_[i];
  if (group_rows_ > 0) buf.push_back(',');
  CDC_ASSIGN_OR_RETURN(bool present, Convert(t, c, f, where));
  if (!present) {
    buf.append("NULL");
    return Status::OK();
  }
  AppendArrayElement(scratch_, &buf);
  return Status::OK();
}

// Whether the group can take no more rows of `cols` columns: a VALUES
// list holds max_rows rows and the protocol's parameters, arrays ten
// times as many rows.
bool Target::GroupFull(size_t cols) const {
  if (group_unnest_) return group_rows_ >= 10 * o_.max_rows;
  return group_rows_ >= o_.max_rows || (group_rows_ + 1) * cols > kMaxParams;
}

// ON CONFLICT on the table's key, setting the group's other columns.
std::string Target::Conflict(const Table& t) const {
  std::string sql = " ON CONFLICT (";
  for (size_t i = 0; i < t.key.size(); ++i)
    sql += (i ? ", " : "") + t.columns[t.key[i]].quoted;
  sql += ") DO ";
  std::string set;
  for (size_t c : group_cols_) {
    if (std::find(t.key.begin(), t.key.end(), c) != t.key.end()) continue;
    if (!set.empty()) set += ", ";
    set += t.columns[c].quoted + " = EXCLUDED." + t.columns[c].quoted;
  }
  return sql + (set.empty() ? "NOTHING" : "UPDATE SET " + set);
}

Status Target::FlushGroup() {
  if (group_ == Group::kNone) return Status::OK();
  const Table& t = *group_table_;
  std::string what = SeqRange(group_first_, group_last_) + " into " + t.name;
  // The group's columns, and its rows: one array per column (unnest), or
  // a list of parameters per row; deletes cast them to the key's types.
  std::string cols, rows;
  for (size_t i = 0; i < group_cols_.size(); ++i)
    cols += (i ? ", " : "") + t.columns[group_cols_[i]].quoted;
  if (group_unnest_) {
    rows = "SELECT * FROM unnest(";
    for (size_t i = 0; i < group_cols_.size(); ++i) {
      rows += (i ? ", $" : "$") + std::to_string(i + 1) +
              "::" + t.columns[group_cols_[i]].cast + "[]";
      colbuf_[i].push_back('}');
      Param(&colbuf_[i]);
    }
    rows += ")";
  } else {
    const bool cast = group_ == Group::kDelete;
    rows = cast ? "" : "VALUES ";
    size_t n = 1;
    for (size_t r = 0; r < group_rows_; ++r) {
      rows += r ? ", (" : "(";
      for (size_t i = 0; i < group_cols_.size(); ++i) {
        rows += (i ? ", $" : "$") + std::to_string(n++);
        if (cast) rows += "::" + t.columns[group_cols_[i]].cast;
      }
      rows += ")";
    }
  }
  std::string sql;
  if (group_ == Group::kDelete) {
    sql = "DELETE FROM " + t.qualified + " WHERE (" + cols + ") IN (" + rows +
          ")";
  } else {
    sql = "INSERT INTO " + t.qualified + " (" + cols + ") " + rows;
    if (group_ == Group::kUpsert) sql += Conflict(t);
  }
  const bool plain = group_ == Group::kInsert && !t.key.empty();
  const bool prepare = group_unnest_;
  group_ = Group::kNone;
  group_rows_ = 0;
  group_keys_.clear();
  CDC_RETURN_IF_ERROR(Send(std::move(sql), std::move(what), prepare));
  if (plain) building_->inserts[building_->what.size() - 1] = t.source;
  return Status::OK();
}

Status Target::Submit(const consume::SinkBatch& b) {
  if (conn_ == nullptr) return Status::Unavailable("PostgreSQL: not connected");
  size_t n = 0;
  for (const consume::Event& ev : b.events)
    if (ev.seq > queued_) ++n;
  if (n == 0) return Status::OK();
  CDC_RETURN_IF_ERROR(ResolveAll(b));
  flights_.emplace_back();
  Flight& f = flights_.back();
  f.last = b.events.back().seq;
  f.events = n;
  f.prev = expected_;
  building_ = &f;
  Status s = [&]() -> Status {
    // BEGIN and the guard go first: the guard's row lock also keeps a
    // second sink of the same consumer waiting, then failing.
    CDC_RETURN_IF_ERROR(Send("BEGIN", "BEGIN"));
    std::string prev = expected_ ? std::to_string(*expected_) : "";
    std::string last = std::to_string(f.last);
    Param(&o_.consumer);
    Param(expected_ ? &prev : nullptr);
    Param(&last);
    Param(&o_.log_id);
    CDC_RETURN_IF_ERROR(
        Send("WITH u AS (UPDATE " + state_ +
                 " SET seq = $3::bigint, log_id = NULLIF($4, ''), "
                 "applied_at = now() WHERE consumer = $1 AND seq IS NOT "
                 "DISTINCT FROM $2::bigint RETURNING 1) "
                 "SELECT 1 / count(*)::int FROM u",
             "the applied seq"));
    for (const consume::Event& ev : b.events) {
      if (ev.seq <= queued_) continue;
      CDC_RETURN_IF_ERROR(AddEvent(ev));
    }
    CDC_RETURN_IF_ERROR(FlushGroup());
    CDC_RETURN_IF_ERROR(Send("COMMIT", "COMMIT"));
    return conn_->SendSync();
  }();
  building_ = nullptr;
  group_ = Group::kNone;
  group_rows_ = 0;
  group_keys_.clear();
  params_.clear();
  pbuf_.clear();
  if (!s.ok()) {
    // Nothing of this batch may commit: drop the connection (a sync never
    // sent leaves the transaction open; the server rolls it back).
    Drop();
    return s;
  }
  expected_ = f.last;
  queued_ = f.last;
  ++m_.batches;
  return Status::OK();
}

// Every table the batch's rows touch, looked up (and created or evolved)
// before the batch is sent: a lookup needs the pipeline idle.
Status Target::ResolveAll(const consume::SinkBatch& b) {
  for (const consume::Event& ev : b.events) {
    if (ev.seq <= queued_) continue;
    CDC_RETURN_IF_ERROR(ev_.Parse(ev.stored));
    const Field* op = ev_.find("op");
    const Field* schema = ev_.find("schema");
    const Field* table = ev_.find("table");
    if (op == nullptr || schema == nullptr || table == nullptr ||
        op->kind != JsonKind::kString || schema->kind != JsonKind::kString ||
        table->kind != JsonKind::kString || op->str.size() != 1)
      continue;
    const char o = op->str[0];
    if (o == 's') {
      LearnSchema(ev.stored);
      // Looked up again when next used: --evolve adds what it added.
      if (o_.evolve) tables_.erase(Str(schema) + "." + Str(table));
      continue;
    }
    if (o != 'c' && o != 'r' && o != 'u' && o != 'd' && o != 't') continue;
    CDC_ASSIGN_OR_RETURN(Table * t, Resolve(schema->str, table->str));
    (void)t;
  }
  return Status::OK();
}

Status Target::AddEvent(const consume::Event& ev) {
  ++m_.events;
  CDC_RETURN_IF_ERROR(ev_.Parse(ev.stored));
  const Field* op = ev_.find("op");
  if (op == nullptr || op->kind != JsonKind::kString || op->str.size() != 1)
    return Status::BadInput("seq " + std::to_string(ev.seq) + ": no op");
  const char o = op->str[0];
  if (o != 'c' && o != 'r' && o != 'u' && o != 'd' && o != 't') {
    ++m_.ignored;
    return Status::OK();
  }
  const Field* schema = ev_.find("schema");
  const Field* table = ev_.find("table");
  if (schema == nullptr || table == nullptr)
    return Status::BadInput("seq " + std::to_string(ev.seq) +
                            ": no schema or table");
  auto it = tables_.find(Str(schema) + "." + Str(table));
  if (it == tables_.end())
    return Status::Internal("table " + Str(schema) + "." + Str(table) +
                            " not looked up before its batch");
  Table* t = it->second.get();
  if (o == 't') {
    CDC_RETURN_IF_ERROR(FlushGroup());
    const Field* opts = ev_.find("options");
    bool restart =
        opts != nullptr &&
        opts->value.find("\"restart_identity\":true") != std::string_view::npos;
    return Send(
        "TRUNCATE " + t->qualified + (restart ? " RESTART IDENTITY" : ""),
        SeqRange(ev.seq, ev.seq) + " (truncate " + t->name + ")");
  }
  json_nulls_.clear();
  if (const Field* jn = ev_.find("json_null");
      jn != nullptr && jn->kind == JsonKind::kArray) {
    std::vector<std::string_view> elems;
    SplitJsonArray(jn->value, &elems);
    for (std::string_view e : elems) {
      std::string p;
      event::AppendDecodedJsonString(e, &p);
      json_nulls_.push_back(std::move(p));
    }
  }
  ++m_.rows;
  if (t->key.empty()) return AddWholeRow(ev, t, o);
  return AddRow(ev, t, o);
}

Status Target::AddRow(const consume::Event& ev, Table* t, char op) {
  const Field* key = ev_.find("key");
  const Field* after = ev_.find("after");
  const bool del = op == 'd';
  if (key != nullptr && key->kind == JsonKind::kObject)
    CDC_RETURN_IF_ERROR(key_.Parse(key->value));
  else
    CDC_RETURN_IF_ERROR(key_.Parse("{}"));
  if (!del) {
    if (after == nullptr || after->kind != JsonKind::kObject)
      return Status::BadInput("seq " + std::to_string(ev.seq) +
                              ": no after image");
    CDC_RETURN_IF_ERROR(after_.Parse(after->value));
  }
  // The row's key as it was (deletes, updates) or is (inserts).
  std::string keytext;
  std::vector<const Field*> old_key;
  for (size_t k : t->key) {
    const Column& c = t->columns[k];
    const Field* f = key_.find(c.name);
    if (f == nullptr && !del && op != 'u') f = after_.find(c.name);
    if (f == nullptr)
      return Status::Config("seq " + std::to_string(ev.seq) + ": " + t->name +
                            ": the event's key has no column " + c.name +
                            " of the target's key");
    old_key.push_back(f);
    keytext.append(f->value);
    keytext.push_back('\0');
  }
  if (op == 'u') {
    bool moved = false;
    for (size_t i = 0; i < t->key.size(); ++i) {
      const Field* now = after_.find(t->columns[t->key[i]].name);
      if (now != nullptr && now->value != old_key[i]->value) moved = true;
    }
    if (moved) {  // a key change: UPDATE .. WHERE old key
      CDC_RETURN_IF_ERROR(FlushGroup());
      std::string sql = "UPDATE " + t->qualified + " SET ";
      size_t n = 1;
      bool first = true;
      for (const Field& f : after_.members()) {
        auto it = t->by_name.find(std::string(f.key));
        if (it == t->by_name.end())
          return Status::Config(t->name + " has no column " +
                                std::string(f.key) + " (seq " +
                                std::to_string(ev.seq) + ")");
        const Column& c = t->columns[it->second];
        if (c.generated) continue;
        sql += (first ? "" : ", ") + c.quoted + " = $" + std::to_string(n++);
        first = false;
        CDC_RETURN_IF_ERROR(ValueParam(*t, c, &f, "after"));
      }
      sql += " WHERE (";
      for (size_t i = 0; i < t->key.size(); ++i)
        sql += (i ? ", " : "") + t->columns[t->key[i]].quoted;
      sql += ") = (";
      for (size_t i = 0; i < t->key.size(); ++i) {
        const Column& c = t->columns[t->key[i]];
        sql += (i ? ", $" : "$") + std::to_string(n++) + "::" + c.cast;
        CDC_RETURN_IF_ERROR(ValueParam(*t, c, old_key[i], "key"));
      }
      sql += ")";
      return Send(std::move(sql), SeqRange(ev.seq, ev.seq) +
                                      " (key change in " + t->name + ")");
    }
  }
  if (del) {
    if (group_ != Group::kDelete || group_table_ != t ||
        GroupFull(t->key.size()) || group_keys_.count(keytext) > 0)
      CDC_RETURN_IF_ERROR(FlushGroup());
    if (group_ == Group::kNone) StartGroup(Group::kDelete, t, t->key, ev.seq);
    for (size_t i = 0; i < t->key.size(); ++i)
      CDC_RETURN_IF_ERROR(
          GroupValue(*t, t->columns[t->key[i]], old_key[i], "key", i));
    group_keys_.insert(std::move(keytext));
    ++group_rows_;
    group_last_ = ev.seq;
    return Status::OK();
  }
  // Updates: an upsert of the columns the event carries (unchanged TOAST
  // columns are not among them, so they keep their value). Inserts: plain
  // INSERTs (a third cheaper for the server than ON CONFLICT), since the
  // target, like the source, cannot hold the row yet; where it does (a
  // target filled before, a snapshot over rows), the batch fails on the
  // key, and it and every later insert into the table are applied again
  // as upserts.
  const Group kind =
      (op == 'c' || op == 'r') && upsert_tables_.count(t->source) == 0
          ? Group::kInsert
          : Group::kUpsert;
  std::vector<size_t> cols;
  cols.reserve(after_.members().size());
  for (const Field& f : after_.members()) {
    auto it = t->by_name.find(std::string(f.key));
    if (it == t->by_name.end())
      return Status::Config(t->name + " has no column " + std::string(f.key) +
                            " (seq " + std::to_string(ev.seq) +
                            "); add it, or pass --evolve");
    if (t->columns[it->second].generated) continue;
    cols.push_back(it->second);
  }
  if (group_ != kind || group_table_ != t || group_cols_ != cols ||
      GroupFull(cols.size()) || group_keys_.count(keytext) > 0)
    CDC_RETURN_IF_ERROR(FlushGroup());
  if (group_ == Group::kNone) StartGroup(kind, t, cols, ev.seq);
  for (size_t i = 0; i < cols.size(); ++i) {
    const Column& col = t->columns[cols[i]];
    CDC_RETURN_IF_ERROR(GroupValue(*t, col, after_.find(col.name), "after", i));
  }
  group_keys_.insert(std::move(keytext));
  ++group_rows_;
  group_last_ = ev.seq;
  return Status::OK();
}

// A table without a key on the target: rows are matched on their whole old
// image, which only REPLICA IDENTITY FULL events carry (in "key").
Status Target::AddWholeRow(const consume::Event& ev, Table* t, char op) {
  const Field* key = ev_.find("key");
  const Field* after = ev_.find("after");
  if (op != 'd') {
    if (after == nullptr || after->kind != JsonKind::kObject)
      return Status::BadInput("seq " + std::to_string(ev.seq) +
                              ": no after image");
    CDC_RETURN_IF_ERROR(after_.Parse(after->value));
  }
  if (op == 'c' || op == 'r') {
    std::vector<size_t> cols;
    for (const Field& f : after_.members()) {
      auto it = t->by_name.find(std::string(f.key));
      if (it == t->by_name.end())
        return Status::Config(t->name + " has no column " + std::string(f.key) +
                              " (seq " + std::to_string(ev.seq) + ")");
      if (!t->columns[it->second].generated) cols.push_back(it->second);
    }
    if (group_ != Group::kInsert || group_table_ != t || group_cols_ != cols ||
        GroupFull(cols.size()))
      CDC_RETURN_IF_ERROR(FlushGroup());
    if (group_ == Group::kNone) StartGroup(Group::kInsert, t, cols, ev.seq);
    for (size_t i = 0; i < cols.size(); ++i) {
      const Column& col = t->columns[cols[i]];
      CDC_RETURN_IF_ERROR(
          GroupValue(*t, col, after_.find(col.name), "after", i));
    }
    ++group_rows_;
    group_last_ = ev.seq;
    return Status::OK();
  }
  CDC_RETURN_IF_ERROR(FlushGroup());
  if (key == nullptr || key->kind != JsonKind::kObject)
    return Status::Config(
        t->name +
        " has no primary key or replica identity index on the target, and "
        "its events carry no whole old row (set REPLICA IDENTITY FULL on the "
        "source, or add a key to the target table)");
  CDC_RETURN_IF_ERROR(key_.Parse(key->value));
  size_t n = 1;
  std::string sql;
  if (op == 'u') {
    sql = "UPDATE " + t->qualified + " SET ";
    bool first = true;
    for (const Field& f : after_.members()) {
      auto it = t->by_name.find(std::string(f.key));
      if (it == t->by_name.end())
        return Status::Config(t->name + " has no column " + std::string(f.key));
      const Column& c = t->columns[it->second];
      if (c.generated) continue;
      sql += (first ? "" : ", ") + c.quoted + " = $" + std::to_string(n++);
      first = false;
      CDC_RETURN_IF_ERROR(ValueParam(*t, c, &f, "after"));
    }
  } else {
    sql = "DELETE FROM " + t->qualified;
  }
  sql += " WHERE (tableoid, ctid) = (SELECT tableoid, ctid FROM " +
         t->qualified + " WHERE ";
  size_t matched = 0;
  for (const Column& c : t->columns) {
    if (c.generated) continue;
    const Field* f = key_.find(c.name);
    if (f == nullptr)
      return Status::Config(
          t->name +
          " has no primary key or replica identity index on the target, and "
          "the event at seq " +
          std::to_string(ev.seq) + " does not carry the whole old row (no " +
          c.name +
          "; REPLICA IDENTITY FULL on the source does): add a key "
          "to the target table");
    const bool json = c.cast == "jsonb" || c.cast == "jsonb[]";
    sql += (matched++ ? " AND " : "") + c.quoted + (json ? "::" + c.cast : "") +
           " IS NOT DISTINCT FROM $" + std::to_string(n++) + "::" + c.cast;
    CDC_RETURN_IF_ERROR(ValueParam(*t, c, f, "key"));
  }
  sql += " LIMIT 1)";
  return Send(std::move(sql), SeqRange(ev.seq, ev.seq) + " (" +
                                  (op == 'u' ? "update" : "delete") + " in " +
                                  t->name + ")");
}

// ---- answers ----

Status Target::Poll(int wait_ms) {
  while (!flights_.empty()) {
    if (conn_ == nullptr)
      return Status::Unavailable("PostgreSQL: not connected");
    auto a = conn_->NextAnswer(wait_ms);
    if (!a.ok()) {
      Drop();
      return a.status();
    }
    if (!a->has_value()) return Status::OK();
    wait_ms = 0;
    ++answers_;
    Flight& f = flights_.front();
    const pg::Connection::Answer& ans = **a;
    if (ans.kind == pg::Connection::Answer::kSync) {
      Status err = f.error;
      if (!err.ok()) {
        Drop();
        return err;
      }
      confirmed_ = std::max(confirmed_, f.last);
      flights_.pop_front();
      continue;
    }
    const size_t i = f.answered++;
    if (ans.kind != pg::Connection::Answer::kError || !f.error.ok()) continue;
    const std::string what = i < f.what.size() ? f.what[i] : "a statement";
    auto plain = f.inserts.find(i);
    if (ans.sqlstate == "23505" && plain != f.inserts.end()) {
      upsert_tables_.insert(plain->second);
      f.error = Status::Unavailable(
          "PostgreSQL: " + what + " meets a row the target holds already (" +
          ans.message + "); applying the batch again, with the inserts into " +
          plain->second + " as upserts from now on");
    } else if (i == 1 && ans.sqlstate == "22012") {
      // A killed sink's last transaction may commit after this one read
      // the applied seq (the server had it buffered), or another cdc-pg
      // applies the same consumer: read it again and go on from there.
      f.error = Status::Unavailable(
          "the applied seq of consumer " + o_.consumer + " in " +
          o_.state_schema + "." + o_.state_table + " is no longer " +
          (f.prev ? std::to_string(*f.prev) : "unset") +
          " (a killed sink's last transaction, or another cdc-pg applying "
          "the same consumer); reading it again");
    } else {
      f.error = Classify(ans.sqlstate, "PostgreSQL refused " + what + ": " +
                                           ans.message + " (SQLSTATE " +
                                           ans.sqlstate + ")");
    }
  }
  return Status::OK();
}

void Target::Metrics(Exposition* e) const {
  e->Metric("cdc_pg_events_total", "counter", "Events handed to the target.",
            m_.events);
  e->Metric("cdc_pg_rows_total", "counter", "Row changes sent.", m_.rows);
  e->Metric("cdc_pg_statements_total", "counter", "Statements sent.",
            m_.statements);
  e->Metric("cdc_pg_batches_total", "counter",
            "Target transactions sent (each moves the applied seq).",
            m_.batches);
  e->Metric("cdc_pg_events_ignored_total", "counter",
            "Events with nothing to apply (messages, schema changes).",
            m_.ignored);
  e->Metric("cdc_pg_reconnects_total", "counter",
            "Connections to the target rebuilt.", m_.reconnects);
  e->Metric("cdc_pg_tables_created_total", "counter",
            "Tables --create-tables created.", m_.created);
  e->Metric("cdc_pg_columns_added_total", "counter", "Columns --evolve added.",
            m_.evolved);
  e->Metric("cdc_pg_applied_seq", "gauge",
            "The applied seq the target holds (as last confirmed).",
            confirmed_);
}

}  // namespace cdc::pgsink
