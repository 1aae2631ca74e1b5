#include "cdc/capture/snapshot.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cdc/base/fs.h"
#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/capture/tables.h"
#include "cdc/event/json_text.h"
#include "cdc/pg/conn.h"
#include "cdc/pg/copy_binary.h"
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

SnapshotSink LogSnapshotSink(log::LogWriter& w, Metrics* m, uint64_t* events) {
  return [&w, m, events](std::string* event, bool schema) -> Status {
    if (w.in_txn()) CDC_RETURN_IF_ERROR(w.EventFollows());
    m->bytes += event->size();
    ++*events;
    return schema ? w.AppendSchema(*event) : w.AppendTaking(event);
  };
}

Status HeldSnapshotRow::Hold(std::string* row, bool first) {
  CDC_RETURN_IF_ERROR(Flush(false));
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
  Status s = sink_(&held_, false);
  held_.clear();
  return s;
}

Status RemoveSnapshotMarker(const std::string& log_dir) {
  const std::string path = SnapshotMarkerPath(log_dir);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return ErrnoStatus("cannot remove", path, errno);
  return SyncDir(log_dir);
}

namespace {

// Opens `conn`'s transaction in the snapshot the slot exported.
Status ImportSnapshot(pg::Connection& conn, const std::string& name) {
  // A long copy must not be cut by the server's limits for ordinary
  // sessions. One round trip (a multi-statement query) where the receive
  // buffer needs no widening.
  std::string sql =
      "SET statement_timeout = 0; SET idle_in_transaction_session_timeout = "
      "0; ";
  if (!conn.ReadsCopyItself()) {
    CDC_RETURN_IF_ERROR(conn.Exec(sql).status());
    sql.clear();
    // Rows then arrive 256 KiB per read rather than 16 KiB: about a tenth
    // of the syscalls, and 0.2 of capture's 2.9 CPU-seconds for 4M rows
    // (bench/snapshot).
    CDC_RETURN_IF_ERROR(conn.WidenReceiveBuffer(256u << 10));
  }
  auto set = conn.Exec(sql +
                       "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET "
                       "TRANSACTION SNAPSHOT " +
                       conn.QuoteLiteral(name));
  if (!set.ok())
    return set.status().Annotate("cannot use the slot's exported snapshot");
  return Status::OK();
}

// Job `job`'s connection (from 1), with its transaction in the slot's
// exported snapshot. With --snapshot-jobs, an error names the job.
Result<std::unique_ptr<pg::Connection>> ConnectInSnapshot(
    const Options& o, const SnapshotInput& in, size_t job) {
  auto conn = pg::Connection::Connect(o.dsn, false);
  Status s =
      conn.ok() ? ImportSnapshot(**conn, in.snapshot_name) : conn.status();
  if (s.ok()) return conn;
  if (o.snapshot_jobs <= 1) return s;
  return s.Annotate("snapshot connection " + std::to_string(job) +
                    " (--snapshot-jobs " + std::to_string(o.snapshot_jobs) +
                    ")");
}

// With --snapshot-jobs, the connections of jobs 2 to `jobs`, opened side by
// side, each in a thread of its own, before any copy starts. Opened by
// each worker as it started, they began copying 70-190 ms after the first
// worker on two cores (each new backend competing with the copy under
// way), and the tables finished as unevenly.
Result<std::vector<std::unique_ptr<pg::Connection>>> ConnectOthers(
    const Options& o, const SnapshotInput& in, size_t jobs) {
  const size_t n = jobs - 1;
  std::vector<std::unique_ptr<pg::Connection>> conns(n);
  std::vector<Status> errors(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      auto c = ConnectInSnapshot(o, in, i + 2);
      if (c.ok()) {
        conns[i] = std::move(c).value();
      } else {
        errors[i] = c.status();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const Status& e : errors) CDC_RETURN_IF_ERROR(e);
  return conns;
}

// Where a copier's rows go: batches of whole lines (each ending in a
// newline; the callee takes them and leaves the batch empty), and schema
// events, each before the rows it describes.
struct CopyOutput {
  std::function<Status(std::string* rows, uint32_t n)> rows;
  std::function<Status(std::string* event)> schema;
};

// A batch's worth of rendered rows: a frame's worth of rows of one table.
constexpr size_t kBatchBytes = 256 << 10;

// Appends `n` rows, the lines of `*rows`, to the open transaction (each
// batch after its first announced, as LogSnapshotSink does), counting the
// events and their bytes.
Status AppendRowBatch(log::LogWriter& w, Metrics* m, uint64_t* events,
                      std::string* rows, uint32_t n) {
  if (n == 0) return Status::OK();
  if (w.in_txn()) CDC_RETURN_IF_ERROR(w.EventFollows());
  m->bytes += rows->size() - n;  // the events, not their newlines
  *events += n;
  return w.AppendEvents(rows, n);
}

// Copies tables over one connection inside the snapshot: a table's schema
// event with its first row, then one op r event per row, its first and
// last tagged (as HeldSnapshotRow tags them). Each row is rendered
// straight into a batch, where it stays: the batch goes out before the
// next row once it holds kBatchBytes, so a table's last row is still in
// it when the copy ends and learns it was the last.
class TableCopier {
 public:
  TableCopier(pg::Connection& conn, const SnapshotInput& in,
              pg::ServerText* text, int64_t ts)
      : conn_(conn),
        builder_(in.catalog),
        generated_published_(conn.ServerVersion() >= 180000) {
    builder_.SetServerText(text);
    builder_.BeginTransaction(in.consistent_point, 0, ts);
  }

  // Copies `t` into `out`, every row of it out by the time it returns OK.
  // `every` is called every 1,024 rows with the rows so far; its error
  // ends the copy and is returned as it is. Other errors name the table.
  // Sets *rows to the rows copied.
  Status Copy(const Table& t, const CopyOutput& out,
              const std::function<Status(uint64_t)>& every, uint64_t* rows) {
    const std::string name = t.schema + "." + t.name;
    *rows = 0;
    batch_.clear();  // whatever a failed copy left
    batch_rows_ = 0;
    CDC_ASSIGN_OR_RETURN(
        pg::Relation rel,
        DescribeTable(conn_, t, generated_published_, &generated_));
    CDC_ASSIGN_OR_RETURN(std::vector<std::string> gen_names,
                         GeneratedNames(conn_, t.oid));
    builder_.SetGeneratedColumns(t.oid, std::move(gen_names));
    // No event yet: the table's schema event comes with its first row.
    CDC_RETURN_IF_ERROR(builder_.Apply(rel, &events_));
    pg::Insert row;
    row.relation_oid = t.oid;
    const size_t ncols = rel.columns.size();
    // Binary COPY when every column's type has an exact decoding: less work
    // per row for the server and for us.
    std::vector<pg::Oid> types;
    for (const pg::RelationColumn& c : rel.columns) types.push_back(c.type_oid);
    const bool binary =
        ncols > 0 && std::all_of(types.begin(), types.end(), [](pg::Oid o) {
          return pg::BinaryCopyDecodes(o);
        });
    pg::CopyBinaryReader reader(std::move(types));
    uint64_t n = 0;
    Status from_every;
    Status copied = conn_.CopyOut(
        CopySql(conn_, t, rel, generated_, binary), [&](std::string_view line) {
          if (binary) {
            bool got = false;
            Status s = reader.Next(line, &row.new_tuple, &got);
            if (!s.ok()) return s.Annotate(name);
            if (!got) return Status::OK();
          } else {
            Status s = pg::ParseCopyTextRow(line, ncols, &row.new_tuple);
            if (!s.ok()) return s.Annotate(name);
          }
          if (batch_.size() >= kBatchBytes) CDC_RETURN_IF_ERROR(Flush(out));
          const size_t at = batch_.size();
          events_.clear();
          CDC_RETURN_IF_ERROR(
              builder_.AppendSnapshotRead(row, &events_, &batch_));
          if (!events_.empty()) CDC_RETURN_IF_ERROR(SchemaBefore(at, out));
          if (n == 0) {
            batch_.pop_back();  // the event's closing brace
            batch_.append(",\"snapshot\":\"first\"}");
          }
          batch_.push_back('\n');
          ++batch_rows_;
          ++n;
          *rows = n;
          if ((n & 1023) == 0) {
            from_every = every(n);
            if (!from_every.ok()) return from_every;
          }
          return Status::OK();
        });
    if (!from_every.ok()) return from_every;
    if (!copied.ok()) return copied.Annotate("snapshot of " + name);
    if (binary) {
      Status s = reader.Finish();
      if (!s.ok()) return s.Annotate(name);
    }
    if (n == 1) {  // "first" becomes "only"
      batch_.resize(batch_.size() - std::strlen("first\"}\n"));
      batch_.append("only\"}\n");
    } else if (n > 1) {
      batch_.resize(batch_.size() - 2);  // the last row's "}\n"
      batch_.append(",\"snapshot\":\"last\"}\n");
    }
    return Flush(out);
  }

  pg::Connection& conn() { return conn_; }

 private:
  Status Flush(const CopyOutput& out) {
    const uint32_t n = batch_rows_;
    batch_rows_ = 0;
    Status s = n > 0 ? out.rows(&batch_, n) : Status::OK();
    batch_.clear();
    if (batch_.capacity() < kBatchBytes) batch_.reserve(kBatchBytes + 4096);
    return s;
  }

  // Sends the schema events in events_ out before the row that begins at
  // batch_[at] (and after the rows before it). A table's first row, which
  // brings its schema event, finds the batch empty (at 0): the row, of any
  // size, stays where it is.
  Status SchemaBefore(size_t at, const CopyOutput& out) {
    std::string fresh;
    if (at > 0) {
      fresh = batch_.substr(at);
      batch_.resize(at);
      CDC_RETURN_IF_ERROR(Flush(out));
    }
    for (size_t i = 0; i < events_.size(); ++i)
      CDC_RETURN_IF_ERROR(out.schema(events_.mutable_line(i)));
    batch_.append(fresh);
    return Status::OK();
  }

  pg::Connection& conn_;
  pg::EventBuilder builder_;
  const bool generated_published_;
  std::vector<bool> generated_;
  pg::EventLines events_;
  std::string batch_;  // whole lines of one table
  uint32_t batch_rows_ = 0;
};

// With --snapshot-jobs: what the workers share. Each renders rows into a
// batch of its own, one buffer of whole lines, and hands the batch to the
// log under `mu`: the batch's buffer becomes a frame as it is, so a row is
// copied once, by the thread (and the cache) that rendered it, outside the
// lock.
struct SharedCopy {
  std::mutex mu;  // guards everything below, and the writer
  std::condition_variable changed;
  log::LogWriter* w = nullptr;
  SnapshotSink to_log;  // schema events
  Metrics* m = nullptr;
  uint64_t* events = nullptr;  // events written
  std::vector<uint64_t> table_rows;
  size_t last_table = 0;         // the table written last (progress)
  std::vector<size_t> finished;  // the tables done, in order (progress)
  uint64_t rows_done = 0;        // rows of the tables done
  size_t workers_left = 0;
  bool cancelled = false;
  Status error;

  void Fail(Status s) {  // under mu
    if (error.ok()) error = std::move(s);
    cancelled = true;
  }

  // What a worker's step returns once the copy is cancelled (the error
  // that cancelled it is kept in `error`).
  static Status Cancelled() { return Status::Busy("snapshot cancelled"); }

  // Runs `step` under mu unless the copy is cancelled. A failed step
  // cancels the copy and wakes the thread waiting on `changed`.
  template <typename Step>
  Status Locked(Step&& step) {
    std::lock_guard<std::mutex> l(mu);
    if (cancelled) return Cancelled();
    Status s = step();
    if (s.ok()) return s;
    Fail(std::move(s));
    changed.notify_all();
    return Cancelled();
  }

  // Appends `n` rows, each a line of `*rows` (under mu).
  Status AppendRows(std::string* rows, uint32_t n) {
    m->snapshot_rows += n;
    return AppendRowBatch(*w, m, events, rows, n);
  }
};

// A copy worker runs at a lower priority (nice +5) than the log's
// compressor, the stage after it. Otherwise, with more threads than cores,
// the scheduler gives the compressor a share too small to keep up, its
// queue fills, the worker writing to the log waits for room while holding
// the shared lock, the other workers wait for the lock, the server waits
// for them to read, and cores sit idle: 0.45 s of such waits in a 3.5 s
// copy of 4 tables on 2 cores, against 0.01 s at nice +5
// (bench/snapshot). Yielding to the rest of the machine suits a bulk copy
// anyway. Best effort: a failure leaves the priority as it was.
void LowerPriority() {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  if (errno == 0) (void)setpriority(PRIO_PROCESS, tid, std::min(now + 5, 19));
}

// One of --snapshot-jobs: a connection in the snapshot, copying the tables
// `order` hands out (shared `next`).
class CopyWorker {
 public:
  CopyWorker(std::unique_ptr<pg::Connection> conn, const SnapshotInput& in,
             int64_t ts)
      : conn_(std::move(conn)) {
    // An iconv descriptor is not for two threads.
    if (in.server_text != nullptr)
      (void)text_.SetEncoding(in.server_text->encoding());
    copier_ = std::make_unique<TableCopier>(
        *conn_, in, in.server_text != nullptr ? &text_ : nullptr, ts);
  }

  void Run(const std::vector<Table>& tables, const std::vector<size_t>& order,
           std::atomic<size_t>* next, SharedCopy* sh) {
    LowerPriority();
    Status s;
    size_t ti = 0;
    const CopyOutput out{
        [&](std::string* rows, uint32_t n) -> Status {
          return sh->Locked([&]() -> Status {
            sh->table_rows[ti] += n;
            sh->last_table = ti;
            return sh->AppendRows(rows, n);
          });
        },
        [&](std::string* event) -> Status {
          return sh->Locked([&] { return sh->to_log(event, true); });
        }};
    const auto every = [&](uint64_t) -> Status {
      return sh->Locked([] { return Status::OK(); });
    };
    for (size_t k; s.ok() && (k = next->fetch_add(1)) < order.size();) {
      ti = order[k];
      uint64_t rows = 0;
      s = copier_->Copy(tables[ti], out, every, &rows);
      if (!s.ok()) break;
      s = sh->Locked([&]() -> Status {  // the table is done
        sh->finished.push_back(ti);
        ++sh->m->snapshot_tables_done;
        sh->rows_done += sh->table_rows[ti];
        sh->changed.notify_all();
        return Status::OK();
      });
    }
    std::lock_guard<std::mutex> l(sh->mu);
    if (!s.ok() && !sh->cancelled) sh->Fail(std::move(s));
    --sh->workers_left;
    sh->changed.notify_all();
  }

  pg::Connection& conn() { return *conn_; }
  std::unique_ptr<pg::Connection> TakeConn() { return std::move(conn_); }

 private:
  std::unique_ptr<pg::Connection> conn_;
  pg::ServerText text_;
  std::unique_ptr<TableCopier> copier_;
};

}  // namespace

Result<SnapshotResult> TakeInitialSnapshot(const Options& o,
                                           const SnapshotInput& in,
                                           log::LogWriter& w, Metrics* m) {
  CDC_ASSIGN_OR_RETURN(auto conn, ConnectInSnapshot(o, in, 1));
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
  const size_t jobs = std::min<size_t>(std::max(o.snapshot_jobs, 1),
                                       std::max<size_t>(tables.size(), 1));
  if (!o.quiet)
    LogInfo("initial snapshot of " + std::to_string(tables.size()) +
            " tables (" + progress.TotalText() + ") at " +
            FormatLsn(in.consistent_point) +
            (jobs > 1 ? ", " + std::to_string(jobs) + " at a time" : ""));

  const int64_t ts = NowMicros();
  SnapshotResult res;
  const SnapshotSink to_log = LogSnapshotSink(w, m, &res.events);
  bool stopped = false;
  pg::Connection* finisher = conn.get();  // reads the end and commits
  std::vector<std::unique_ptr<CopyWorker>> workers;
  if (jobs == 1) {
    TableCopier copier(*conn, in, in.server_text, ts);
    const CopyOutput out{
        [&](std::string* rows, uint32_t n) {
          return AppendRowBatch(w, m, &res.events, rows, n);
        },
        [&](std::string* event) { return to_log(event, true); }};
    const Status stop = Status::Busy("stop requested");
    for (size_t ti = 0; ti < tables.size() && !stopped; ++ti) {
      const Table& t = tables[ti];
      uint64_t table_rows = 0;
      Status s = copier.Copy(
          t, out,
          [&](uint64_t n) {
            m->snapshot_rows = res.rows + n;
            if (o.hooks.stop_requested()) return stop;
            progress.Update(t, ti, n, m->snapshot_rows, false);
            if (in.tick) in.tick();
            return Status::OK();
          },
          &table_rows);
      if (s.code() == stop.code() && o.hooks.stop_requested()) {
        stopped = true;
        break;
      }
      CDC_RETURN_IF_ERROR(s);
      res.rows += table_rows;
      m->snapshot_rows = res.rows;
      ++m->snapshot_tables_done;
      progress.Update(t, ti, table_rows, m->snapshot_rows, true);
      if (in.tick) in.tick();
    }
  } else {
    // The first worker takes the connection that listed the tables.
    CDC_ASSIGN_OR_RETURN(auto others, ConnectOthers(o, in, jobs));
    workers.push_back(std::make_unique<CopyWorker>(std::move(conn), in, ts));
    for (auto& c : others)
      workers.push_back(std::make_unique<CopyWorker>(std::move(c), in, ts));
    finisher = &workers[0]->conn();
    // The largest tables first, so that the last to finish is small.
    std::vector<size_t> order(tables.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return tables[a].estimate > tables[b].estimate;
    });
    SharedCopy sh;
    sh.w = &w;
    sh.to_log = to_log;
    sh.m = m;
    sh.events = &res.events;
    sh.table_rows.resize(tables.size());
    sh.workers_left = workers.size();
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads;
    for (auto& wk : workers)
      threads.emplace_back(
          [&, wk = wk.get()] { wk->Run(tables, order, &next, &sh); });
    {
      std::unique_lock<std::mutex> l(sh.mu);
      size_t shown_done = 0;
      while (sh.workers_left > 0) {
        sh.changed.wait_for(l, std::chrono::milliseconds(200));
        if (in.tick) in.tick();
        if (!stopped && o.hooks.stop_requested()) {
          stopped = sh.cancelled = true;
        }
        // Each table done gets its line, named and counted right however
        // many finished since the last wake-up; else the table written
        // last shows how far the copy is.
        if (shown_done == sh.finished.size()) {
          const size_t t = sh.last_table;
          progress.Update(tables[t], sh.finished.size(), sh.table_rows[t],
                          m->snapshot_rows, false);
        }
        for (; shown_done < sh.finished.size(); ++shown_done) {
          const size_t t = sh.finished[shown_done];
          progress.Update(tables[t], shown_done, sh.table_rows[t],
                          m->snapshot_rows, true);
        }
      }
      res.rows = sh.rows_done;
    }
    for (std::thread& th : threads) th.join();
    CDC_RETURN_IF_ERROR(sh.error);
    if (!stopped) {
      for (size_t i = 1; i < workers.size(); ++i)
        CDC_RETURN_IF_ERROR(workers[i]->conn().Exec("COMMIT").status());
    }
  }
  progress.Done();
  if (stopped) {
    m->snapshot_running = false;
    CDC_RETURN_IF_ERROR(w.Abort());
    res.stopped = true;
    return res;
  }
  CDC_ASSIGN_OR_RETURN(pg::PgResult now,
                       finisher->Exec("SELECT pg_current_wal_flush_lsn()"));
  CDC_ASSIGN_OR_RETURN(
      res.server_lsn,
      pg::ParseReplyLsn(now.get(0, 0), "pg_current_wal_flush_lsn()"));
  CDC_RETURN_IF_ERROR(finisher->Exec("COMMIT").status());
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
  // The stream's lookups take this connection rather than open one (a
  // backend's start, 10-20 ms, as the stream begins). Best effort.
  if (finisher->Exec("RESET ALL").ok())
    res.conn = workers.empty() ? std::move(conn) : workers[0]->TakeConn();
  if (!o.quiet)
    LogInfo("initial snapshot copied " + std::to_string(res.rows) +
            " rows of " + std::to_string(tables.size()) + " tables");
  return res;
}

}  // namespace cdc::capture
