#include "cdc/capture/mariadb_snapshot.h"

#include <memory>
#include <vector>

#include "cdc/base/logging.h"
#include "cdc/base/lsn.h"
#include "cdc/base/time.h"
#include "cdc/capture/mariadb_table.h"
#include "cdc/capture/snapshot.h"
#include "cdc/event/json_text.h"
#include "cdc/mariadb/binlog.h"

namespace cdc::capture {

namespace maria {

std::string QuoteName(std::string_view n) {
  std::string q = "`";
  for (char c : n) {
    if (c == '`') q.push_back('`');
    q.push_back(c);
  }
  q.push_back('`');
  return q;
}

Result<const mariadb::Charset*> Charsets::Get(const std::string& name) {
  auto it = sets_.find(name);
  if (it != sets_.end()) return &it->second;
  CDC_ASSIGN_OR_RETURN(mariadb::Charset c, mariadb::Charset::ForName(name));
  return &sets_.emplace(name, std::move(c)).first->second;
}

}  // namespace maria

namespace {

using Kind = mariadb::RowStream::Kind;
using maria::Charsets;
using maria::QuoteName;
using maria::Table;
using mariadb::Column;
using Plan = maria::ReadPlan;

// The labels of an ENUM or SET from information_schema's COLUMN_TYPE:
// enum('a','it''s') (a quote doubled; a backslash shown doubled too).
Result<std::vector<std::string>> ParseLabels(std::string_view type) {
  std::vector<std::string> labels;
  size_t i = type.find('(');
  if (i == std::string_view::npos)
    return Status::BadInput("no labels in " + std::string(type));
  ++i;
  while (i < type.size() && type[i] == '\'') {
    std::string label;
    ++i;
    for (;; ++i) {
      if (i >= type.size())
        return Status::BadInput("an unterminated label in " +
                                std::string(type));
      const char c = type[i];
      if (c == '\'') {
        if (i + 1 < type.size() && type[i + 1] == '\'') {
          label.push_back('\'');
          ++i;
          continue;
        }
        ++i;
        break;
      }
      if (c == '\\' && i + 1 < type.size()) {
        label.push_back(type[++i]);
        continue;
      }
      label.push_back(c);
    }
    labels.push_back(std::move(label));
    if (i < type.size() && type[i] == ',') ++i;
  }
  return labels;
}

// One column as information_schema.COLUMNS describes it.
enum {
  kTableName,
  kColumnName,
  kDataType,
  kColumnType,
  kCharsetName,
  kPrecision,
  kScale,
  kFsp,
  kColumnKey,
  kCollation,
  kColumnFields
};

// The Column a table map would give for this column, how the prepared
// statement fetches it, and the expression that selects it.
Status MapColumn(const mariadb::Row& r, size_t index, Plan* p,
                 Charsets* charsets) {
  const std::string type = r[kDataType].value_or("");
  const std::string full = r[kColumnType].value_or("");
  Column& c = p->table.columns[index];
  c.name = r[kColumnName].value_or("");
  c.key = r[kColumnKey].value_or("") == "PRI";
  c.is_unsigned = full.find(" unsigned") != std::string::npos;
  const auto num = [&](int f) -> uint16_t {
    return static_cast<uint16_t>(
        std::strtoul(r[f].value_or("0").c_str(), nullptr, 10));
  };
  std::string expr = QuoteName(c.name);
  Kind kind = Kind::kBytes;
  std::string charset = r[kCharsetName].value_or("");
  const auto integer = [&](uint8_t t) {
    c.real = t;
    kind = c.is_unsigned ? Kind::kUnsigned : Kind::kSigned;
  };
  if (type == "tinyint") {
    integer(1);
  } else if (type == "smallint") {
    integer(2);
  } else if (type == "mediumint") {
    integer(9);
  } else if (type == "int") {
    integer(3);
  } else if (type == "bigint") {
    integer(8);
  } else if (type == "year") {
    c.real = 13;
    kind = Kind::kUnsigned;
  } else if (type == "float") {
    c.real = 4;
    kind = Kind::kFloat;
  } else if (type == "double") {
    c.real = 5;
    kind = Kind::kDouble;
  } else if (type == "decimal") {
    c.real = 246;
    c.meta = static_cast<uint16_t>(num(kPrecision) | (num(kScale) << 8));
  } else if (type == "date") {
    c.real = 10;
    kind = Kind::kTime;
  } else if (type == "time" || type == "datetime" || type == "timestamp") {
    c.real = type == "time" ? 19 : type == "datetime" ? 18 : 17;
    c.meta = num(kFsp);
    kind = Kind::kTime;
  } else if (type == "bit") {
    const uint16_t bits = num(kPrecision);
    c.real = 16;
    c.meta = static_cast<uint16_t>(((bits / 8) << 8) | (bits % 8));
  } else if (type == "char" || type == "binary") {
    c.real = 254;
  } else if (type == "varchar" || type == "varbinary") {
    c.real = 15;
  } else if (type.ends_with("text") || type.ends_with("blob")) {
    c.real = 252;
    c.meta = type.starts_with("tiny")     ? 1
             : type.starts_with("medium") ? 3
             : type.starts_with("long")   ? 4
                                          : 2;
  } else if (type == "enum" || type == "set") {
    c.real = type == "enum" ? 247 : 248;
    CDC_ASSIGN_OR_RETURN(p->table.labels[index], ParseLabels(full));
    c.labels = &p->table.labels[index];
  } else if (type == "geometry" || type == "point" || type == "linestring" ||
             type == "polygon" || type == "multipoint" ||
             type == "multilinestring" || type == "multipolygon" ||
             type == "geometrycollection") {
    c.real = 255;  // no charset, as in a table map
    c.meta = 4;
  } else if (type == "uuid" || type == "inet6" || type == "inet4") {
    // Logged as the BINARY they are stored as.
    const int n = type == "inet4" ? 4 : 16;
    c.real = 254;
    c.meta = static_cast<uint16_t>(n);
    expr = "CAST(" + expr + " AS BINARY(" + std::to_string(n) + "))";
    charset = "binary";
  } else {
    return Status::Config("column \"" + c.name + "\" of " + p->table.db + "." +
                          p->table.name + " has type " + full +
                          ", which the MariaDB snapshot does not read "
                          "(leave the table out with --table, or use "
                          "--snapshot never)");
  }
  c.type = c.real;
  p->sql_types[index] = type;
  p->collations[index] = r[kCollation].value_or("");
  if (charset == "binary") p->collations[index].clear();
  if (charset.empty() &&
      (c.real == 254 || c.real == 15 || c.real == 252))  // BINARY, BLOB, ...
    charset = "binary";
  if (!charset.empty()) {
    CDC_ASSIGN_OR_RETURN(c.charset, charsets->Get(charset));
  }
  p->kinds[index] = kind;
  if (index > 0) p->columns.append(", ");
  p->columns.append(expr);
  return Status::OK();
}

}  // namespace

namespace maria {

Result<std::vector<std::unique_ptr<ReadPlan>>> PlanTables(
    mariadb::Connection& conn, const std::string& database,
    const std::function<bool(const std::string& table)>& want,
    const std::string* only, Charsets* charsets) {
  const std::string db = conn.Quote(database);
  const std::string one = only == nullptr
                              ? std::string()
                              : " AND TABLE_NAME = " + conn.Quote(*only);
  CDC_ASSIGN_OR_RETURN(
      std::vector<mariadb::Row> trows,
      conn.Query("SELECT TABLE_NAME, ENGINE, TABLE_ROWS FROM "
                 "information_schema.TABLES WHERE TABLE_SCHEMA = " +
                 db + one +
                 " AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME"));
  CDC_ASSIGN_OR_RETURN(
      std::vector<mariadb::Row> crows,
      conn.Query("SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
                 "CHARACTER_SET_NAME, NUMERIC_PRECISION, NUMERIC_SCALE, "
                 "DATETIME_PRECISION, COLUMN_KEY, COLLATION_NAME FROM "
                 "information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
                 db + one + " ORDER BY TABLE_NAME, ORDINAL_POSITION"));
  std::vector<std::unique_ptr<Plan>> plans;
  std::map<std::string, Plan*> by_name;
  for (const mariadb::Row& r : trows) {
    if (r.size() < 3 || !r[0]) continue;
    if (!want(*r[0])) continue;
    auto p = std::make_unique<Plan>();
    p->table.db = database;
    p->table.name = *r[0];
    p->table.selected = true;
    p->engine = r[1].value_or("");
    p->estimate = std::strtoull(r[2].value_or("0").c_str(), nullptr, 10);
    by_name[p->table.name] = p.get();
    plans.push_back(std::move(p));
  }
  for (const mariadb::Row& r : crows) {
    if (r.size() < kColumnFields || !r[kTableName]) continue;
    auto it = by_name.find(*r[kTableName]);
    if (it == by_name.end()) continue;
    Plan* p = it->second;
    p->table.columns.emplace_back();
    p->table.labels.emplace_back();
  }
  // Labels are pointed to: every vector has its final size from here.
  for (auto& p : plans) {
    const size_t n = p->table.columns.size();
    p->kinds.resize(n);
    p->sql_types.resize(n);
    p->collations.resize(n);
  }
  std::map<std::string, size_t> next_column;
  for (const mariadb::Row& r : crows) {
    if (r.size() < kColumnFields || !r[kTableName]) continue;
    auto it = by_name.find(*r[kTableName]);
    if (it == by_name.end()) continue;
    CDC_RETURN_IF_ERROR(
        MapColumn(r, next_column[*r[kTableName]]++, it->second, charsets));
  }
  for (auto& p : plans)
    CDC_RETURN_IF_ERROR(maria::Describe(&p->table, /*labels_utf8=*/true));
  return plans;
}

Status RowValues(const ReadPlan& p, const mariadb::RowStream& rows,
                 std::vector<std::string>* values) {
  const Table& t = p.table;
  const size_t ncols = t.columns.size();
  values->resize(ncols);
  for (size_t i = 0; i < ncols; ++i) {
    std::string& v = (*values)[i];
    v.clear();
    if (rows.null(i)) {
      v = "null";
      continue;
    }
    switch (p.kinds[i]) {
      case Kind::kSigned:
        mariadb::AppendWireInt(rows.i64(i), &v);
        break;
      case Kind::kUnsigned:
        mariadb::AppendWireUint(rows.u64(i), &v);
        break;
      case Kind::kFloat:
        mariadb::AppendWireFloat(rows.f32(i), &v);
        break;
      case Kind::kDouble:
        mariadb::AppendWireDouble(rows.f64(i), &v);
        break;
      case Kind::kTime:
        CDC_RETURN_IF_ERROR(
            mariadb::AppendWireTime(t.columns[i], rows.time(i), &v));
        break;
      case Kind::kBytes: {
        Status s = mariadb::AppendWireBytes(t.columns[i], rows.bytes(i), &v);
        if (!s.ok()) return s.Annotate(t.db + "." + t.name);
        break;
      }
    }
  }
  return Status::OK();
}

void AppendRowBody(const Table& t, const std::vector<std::string>& values,
                   std::string* row) {
  row->append(t.names_json);
  row->append(",\"key\":");
  if (t.has_key)
    AppendObject(t.columns, values, true, row);
  else
    row->append("null");
  row->append(",\"before\":null,\"after\":");
  AppendObject(t.columns, values, false, row);
}

}  // namespace maria

Result<MariaSnapshotResult> TakeMariaDbSnapshot(const Options& o,
                                                const MariaSnapshotInput& in,
                                                log::LogWriter& w, Metrics* m) {
  CDC_ASSIGN_OR_RETURN(auto conn, mariadb::Connection::Connect(in.dsn));
  // UTC for TIMESTAMPs, text as stored (converted by the column's charset,
  // as the binlog's), and no server limit cutting a long copy.
  CDC_RETURN_IF_ERROR(
      conn->Exec("SET SESSION time_zone = '+00:00', character_set_results = "
                 "NULL, net_write_timeout = 3600, max_statement_time = 0"));
  CDC_RETURN_IF_ERROR(
      conn->Exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"));
  CDC_RETURN_IF_ERROR(
      conn->Exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"));
  CDC_ASSIGN_OR_RETURN(
      std::vector<mariadb::Row> st,
      conn->Query("SHOW SESSION STATUS LIKE 'binlog_snapshot_%'"));
  std::string file, pos;
  for (const mariadb::Row& r : st) {
    if (r.size() < 2 || !r[0] || !r[1]) continue;
    if (*r[0] == "Binlog_snapshot_file") file = *r[1];
    if (*r[0] == "Binlog_snapshot_position") pos = *r[1];
  }
  if (file.empty() || pos.empty() ||
      pos.find_first_not_of("0123456789") != std::string::npos)
    return Status::Config(
        "the server gives no binlog position for a consistent snapshot "
        "(Binlog_snapshot_file/position): is log_bin on?");
  MariaSnapshotResult res;
  CDC_ASSIGN_OR_RETURN(std::string gtids,
                       conn->Value("SELECT BINLOG_GTID_POS(" +
                                   conn->Quote(file) + ", " + pos + ")"));
  for (size_t at = 0; at < gtids.size();) {
    size_t comma = gtids.find(',', at);
    if (comma == std::string::npos) comma = gtids.size();
    CDC_ASSIGN_OR_RETURN(mariadb::Gtid g,
                         mariadb::ParseGtidText(gtids.substr(at, comma - at)));
    if (g.domain == in.domain) {
      res.seqno = g.seqno;
      res.server_id = g.server_id;
    }
    at = comma + 1;
  }
  if (res.seqno == 0) {
    CDC_ASSIGN_OR_RETURN(std::string id, conn->Value("SELECT @@server_id"));
    res.server_id =
        static_cast<uint32_t>(std::strtoul(id.c_str(), nullptr, 10));
    if (res.server_id == 0) res.server_id = 1;
  }

  // The tables and their columns, as the snapshot sees them.
  Charsets charsets;
  CDC_ASSIGN_OR_RETURN(
      std::vector<std::unique_ptr<Plan>> plans,
      maria::PlanTables(
          *conn, in.dsn.database,
          [&](const std::string& t) { return in.selected(in.dsn.database, t); },
          nullptr, &charsets));
  uint64_t estimate = 0;
  bool all_known = true;
  for (auto& p : plans) {
    estimate += p->estimate;
    all_known = all_known && p->estimate > 0;
    if (!p->transactional())
      LogWarning("table " + p->table.db + "." + p->table.name + " is " +
                 (p->engine.empty() ? std::string("not InnoDB") : p->engine) +
                 ", not transactional: its snapshot is its rows when read, "
                 "not at the snapshot's binlog position (a change in "
                 "between may show in both)");
  }

  m->snapshot_running = true;
  m->snapshot_tables = plans.size();
  m->snapshot_tables_done = 0;
  m->snapshot_rows = 0;
  m->snapshot_rows_estimate = estimate;
  SnapshotProgress progress(o.quiet, plans.size(), estimate, all_known);
  const std::string gtid_text = res.seqno == 0
                                    ? std::string("(none)")
                                    : std::to_string(in.domain) + "-" +
                                          std::to_string(res.server_id) + "-" +
                                          std::to_string(res.seqno);
  if (!o.quiet)
    LogInfo("initial snapshot of " + std::to_string(plans.size()) +
            " tables (" + progress.TotalText() + ") at GTID " + gtid_text +
            " (" + file + ":" + pos + ")");

  const int64_t ts = NowMicros();
  const std::string head = "{\"lsn\":\"" + FormatLsn(res.seqno) +
                           "\",\"xid\":" + std::to_string(res.server_id) +
                           ",\"ts\":\"" + FormatTimestamp(ts) + "\",\"op\":\"";
  std::string tail = ",\"file\":";
  (void)event::AppendJsonString(file, &tail);
  tail += ",\"pos\":" + pos + "}";
  HeldSnapshotRow held(LogSnapshotSink(w, m, &res.events));
  std::string row;
  std::vector<std::string> values;
  for (size_t ti = 0; ti < plans.size(); ++ti) {
    const Plan& p = *plans[ti];
    const maria::Table& t = p.table;
    capture::Table shown;  // for progress lines
    shown.schema = t.db;
    shown.name = t.name;
    shown.estimate = p.estimate;
    CDC_ASSIGN_OR_RETURN(
        auto rows, conn->Stream("SELECT " + p.columns + " FROM " +
                                    QuoteName(t.db) + "." + QuoteName(t.name),
                                p.kinds));
    uint64_t table_rows = 0;
    for (;;) {
      auto more = rows->Next();
      if (!more.ok())
        return more.status().Annotate("snapshot of " + t.db + "." + t.name);
      if (!*more) break;
      CDC_RETURN_IF_ERROR(maria::RowValues(p, *rows, &values));
      row = head;
      row.append("r\"");
      maria::AppendRowBody(t, values, &row);
      row.append(tail);
      if (table_rows == 0) {
        // The table's schema event comes with its first row.
        std::string schema = head + "s\"" + t.names_json + t.shape;
        m->bytes += schema.size();
        ++res.events;
        CDC_RETURN_IF_ERROR(w.AppendSchema(schema));
        res.shapes[t.names_json] = t.shape;
      }
      CDC_RETURN_IF_ERROR(held.Hold(&row, table_rows == 0));
      ++table_rows;
      ++m->snapshot_rows;
      if ((table_rows & 1023) == 0) {
        if (o.hooks.stop_requested()) {
          progress.Done();
          m->snapshot_running = false;
          conn->Shutdown();  // closing the statement must not read the rest
          rows.reset();
          CDC_RETURN_IF_ERROR(w.Abort());
          res.stopped = true;
          return res;
        }
        progress.Update(shown, ti, table_rows, m->snapshot_rows, false);
        if (in.tick) in.tick();
      }
    }
    CDC_RETURN_IF_ERROR(held.Flush(true));
    res.rows += table_rows;
    ++m->snapshot_tables_done;
    progress.Update(shown, ti, table_rows, m->snapshot_rows, true);
    if (in.tick) in.tick();
  }
  progress.Done();
  CDC_RETURN_IF_ERROR(conn->Exec("COMMIT"));
  // Inclusive, as a MariaDB transaction's: the consistent GTID is in the
  // snapshot, and streaming starts after it.
  CDC_RETURN_IF_ERROR(w.Commit(res.seqno, ts, res.server_id));
  m->events += res.events;
  ++m->transactions;
  m->last_commit_time_us = ts;
  m->snapshot_running = false;
  if (!o.quiet)
    LogInfo("initial snapshot copied " + std::to_string(res.rows) +
            " rows of " + std::to_string(plans.size()) + " tables");
  return res;
}

}  // namespace cdc::capture
