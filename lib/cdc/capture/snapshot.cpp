#include "cdc/capture/snapshot.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "cdc/base/fs.h"
#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/capture/tables.h"
#include "cdc/event/json_text.h"
#include "cdc/pg/conn.h"
#include "cdc/pg/copy_text.h"
#include "cdc/pg/event_builder.h"

namespace cdc::capture {

namespace {

constexpr char kMarkerFile[] = "snapshot.pending";
}  // namespace

std::string SnapshotMarkerPath(const std::string& log_dir) {
  return JoinPath(log_dir, kMarkerFile);
}

Status WriteSnapshotMarker(const std::string& log_dir,
                           const std::string& slot) {
  CDC_RETURN_IF_ERROR(
      WriteFileAtomic(SnapshotMarkerPath(log_dir), "slot=" + slot + "\n"));
  return SyncDir(log_dir);
}

Result<std::string> ReadSnapshotMarker(const std::string& log_dir) {
  const std::string path = SnapshotMarkerPath(log_dir);
  if (!PathExists(path)) return Status::NotFound("no snapshot marker");
  CDC_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, 4096));
  if (text.rfind("slot=", 0) != 0 || text.empty() || text.back() != '\n')
    return Status::Corruption("unreadable " + path);
  return text.substr(5, text.size() - 6);
}

Status HeldSnapshotRow::Hold(std::string* row, bool first) {
  if (!held_.empty()) {
    CDC_RETURN_IF_ERROR(w_.EventFollows());
    CDC_RETURN_IF_ERROR(Flush(false));
  }
  held_.swap(*row);
  first_ = first;
  return Status::OK();
}

Status HeldSnapshotRow::Flush(bool last) {
  if (held_.empty()) return Status::OK();
  const char* tag =
      first_ ? (last ? "only" : "first") : (last ? "last" : nullptr);
  if (tag != nullptr) {
    held_.pop_back();  // the event's closing brace
    held_.append(",\"snapshot\":\"");
    held_.append(tag);
    held_.append("\"}");
  }
  m_->bytes += held_.size();
  ++*events_;
  Status s = w_.AppendTaking(&held_);
  held_.clear();
  return s;
}

Status RemoveSnapshotMarker(const std::string& log_dir) {
  const std::string path = SnapshotMarkerPath(log_dir);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return ErrnoStatus("cannot remove", path, errno);
  return SyncDir(log_dir);
}

Result<SnapshotResult> TakeInitialSnapshot(const Options& o,
                                           const SnapshotInput& in,
                                           log::LogWriter& w, Metrics* m) {
  CDC_ASSIGN_OR_RETURN(auto conn, pg::Connection::Connect(o.dsn, false));
  // A long copy must not be cut by the server's limits for ordinary
  // sessions.
  CDC_RETURN_IF_ERROR(conn->Exec("SET statement_timeout = 0").status());
  CDC_RETURN_IF_ERROR(
      conn->Exec("SET idle_in_transaction_session_timeout = 0").status());
  CDC_RETURN_IF_ERROR(
      conn->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
  auto set = conn->Exec("SET TRANSACTION SNAPSHOT " +
                        conn->QuoteLiteral(in.snapshot_name));
  if (!set.ok())
    return set.status().Annotate("cannot use the slot's exported snapshot");
  CDC_ASSIGN_OR_RETURN(std::vector<Table> tables,
                       ListTables(*conn, o.publication));
  uint64_t estimate = 0;
  bool all_known = true;
  for (const Table& t : tables) {
    estimate += t.estimate;
    all_known = all_known && t.estimate > 0;
  }
  m->snapshot_running = true;
  m->snapshot_tables = tables.size();
  m->snapshot_tables_done = 0;
  m->snapshot_rows = 0;
  m->snapshot_rows_estimate = estimate;
  SnapshotProgress progress(o.quiet, tables.size(), estimate, all_known);
  if (!o.quiet)
    LogInfo("initial snapshot of " + std::to_string(tables.size()) +
            " tables (" + progress.TotalText() + ") at " +
            FormatLsn(in.consistent_point));

  pg::EventBuilder builder(in.catalog);
  builder.SetServerText(in.server_text);
  const int64_t ts = NowMicros();
  builder.BeginTransaction(in.consistent_point, 0, ts);
  pg::EventLines events;
  SnapshotResult res;
  const bool generated_published = conn->ServerVersion() >= 180000;
  auto append = [&]() -> Status {
    for (size_t i = 0; i < events.size(); ++i) {
      m->bytes += events[i].size();
      CDC_RETURN_IF_ERROR(events.is_schema(i)
                              ? w.AppendSchema(events[i])
                              : w.AppendTaking(events.mutable_line(i)));
    }
    res.events += events.size();
    events.clear();
    return Status::OK();
  };
  HeldSnapshotRow held(w, m, &res.events);
  std::vector<bool> generated;
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    const Table& t = tables[ti];
    CDC_ASSIGN_OR_RETURN(
        pg::Relation rel,
        DescribeTable(*conn, t, generated_published, &generated));
    CDC_ASSIGN_OR_RETURN(std::vector<std::string> gen_names,
                         GeneratedNames(*conn, t.oid));
    builder.SetGeneratedColumns(t.oid, std::move(gen_names));
    // No event yet: the table's schema event comes with its first row.
    CDC_RETURN_IF_ERROR(builder.Apply(rel, &events));
    pg::Insert row;
    row.relation_oid = t.oid;
    const size_t ncols = rel.columns.size();
    uint64_t table_rows = 0;
    bool stop = false;
    Status copied = conn->CopyOut(
        CopySql(*conn, t, rel, generated), [&](std::string_view line) {
          Status s = pg::ParseCopyTextRow(line, ncols, &row.new_tuple);
          if (!s.ok()) return s.Annotate(t.schema + "." + t.name);
          events.clear();
          CDC_RETURN_IF_ERROR(builder.ApplySnapshotRead(row, &events));
          // The table's first row comes after its schema event.
          const size_t row_line = events.size() - 1;
          if (row_line > 0) {
            std::string row_text;
            row_text.swap(*events.mutable_line(row_line));
            events.Truncate(row_line);
            CDC_RETURN_IF_ERROR(held.Flush(false));
            CDC_RETURN_IF_ERROR(append());
            CDC_RETURN_IF_ERROR(held.Hold(&row_text, table_rows == 0));
          } else {
            CDC_RETURN_IF_ERROR(
                held.Hold(events.mutable_line(0), table_rows == 0));
          }
          events.clear();
          ++table_rows;
          ++m->snapshot_rows;
          if ((table_rows & 1023) == 0) {
            if (o.hooks.stop_requested()) {
              stop = true;
              return Status::Busy("stop requested");
            }
            progress.Update(t, ti, table_rows, m->snapshot_rows, false);
            if (in.tick) in.tick();
          }
          return Status::OK();
        });
    if (stop) {
      progress.Done();
      m->snapshot_running = false;
      CDC_RETURN_IF_ERROR(w.Abort());
      res.stopped = true;
      return res;
    }
    if (!copied.ok())
      return copied.Annotate("snapshot of " + t.schema + "." + t.name);
    CDC_RETURN_IF_ERROR(held.Flush(true));
    res.rows += table_rows;
    ++m->snapshot_tables_done;
    progress.Update(t, ti, table_rows, m->snapshot_rows, true);
    if (in.tick) in.tick();
  }
  progress.Done();
  CDC_ASSIGN_OR_RETURN(pg::PgResult now,
                       conn->Exec("SELECT pg_current_wal_flush_lsn()"));
  CDC_ASSIGN_OR_RETURN(
      res.server_lsn,
      pg::ParseReplyLsn(now.get(0, 0), "pg_current_wal_flush_lsn()"));
  CDC_RETURN_IF_ERROR(conn->Exec("COMMIT").status());
  builder.EndTransaction();
  // With events (unless every table is empty) the commit is an
  // exclusive position at the consistent point, as a lone message's: a
  // transaction whose commit record starts exactly there is not in the
  // snapshot and is streamed next. A position-only frame is inclusive, so
  // it is recorded one below.
  if (res.events > 0) {
    CDC_RETURN_IF_ERROR(w.Commit(in.consistent_point, ts, 0));
  } else {
    CDC_RETURN_IF_ERROR(w.Commit(in.consistent_point - 1, ts, 0));
  }
  m->events += res.events;
  ++m->transactions;
  m->last_commit_time_us = ts;
  m->snapshot_running = false;
  if (!o.quiet)
    LogInfo("initial snapshot copied " + std::to_string(res.rows) +
            " rows of " + std::to_string(tables.size()) + " tables");
  return res;
}

}  // namespace cdc::capture
