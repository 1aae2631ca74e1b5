#include "cdc/capture/incremental.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/capture/tables.h"  // EstimateText
#include "cdc/event/stored.h"
#include "cdc/log/reader.h"
#include "cdc/log/snapshots.h"

namespace cdc::capture {

namespace {

constexpr int64_t kPickupEveryUs = 1000000;
// Under a stream that never pauses, a chunk starts at least this often.
constexpr int64_t kChunkGapUs = 20000;
constexpr int64_t kRetryUs = 2000000;
constexpr int64_t kLogProgressEveryUs = 60000000;

using Json = nlohmann::json;

// What the worker found: a table validated, a chunk read, or a failure.
struct Posted {
  enum class Kind { kTable, kRows, kAborted, kError } kind = Kind::kError;
  uint64_t attempt = 0;
  Status error;
  uint64_t estimate = 0;
  std::unique_ptr<ChunkSource::Chunk> chunk;
  bool done = false;
};

struct Job {
  bool validate = false;
  uint64_t attempt = 0;
  log::IncrementalSnapshot req;
  uint64_t chunk = 0;  // its number, from 1
};

std::string WatermarkJson(const log::IncrementalSnapshot& req, uint64_t attempt,
                          const char* w) {
  Json j;
  j["id"] = req.id;
  j["attempt"] = attempt;
  j["w"] = w;
  return j.dump();
}

}  // namespace

struct Incremental::Worker {
  explicit Worker(ChunkSource* source) : src_(*source) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Worker() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // False while a job runs (or waits to).
  bool idle() {
    std::lock_guard<std::mutex> l(mu_);
    return !job_ && !busy_;
  }
  void Post(Job j) {
    {
      std::lock_guard<std::mutex> l(mu_);
      job_ = std::move(j);
    }
    cv_.notify_all();
  }
  std::deque<Posted> Take() {
    std::lock_guard<std::mutex> l(mu_);
    std::deque<Posted> out;
    out.swap(inbox_);
    return out;
  }

 private:
  void Put(Posted p) {
    std::lock_guard<std::mutex> l(mu_);
    inbox_.push_back(std::move(p));
  }
  void Run() {
    for (;;) {
      Job j;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || job_.has_value(); });
        if (stop_) return;
        j = std::move(*job_);
        job_.reset();
        busy_ = true;
      }
      Status s = j.validate ? Validate(j) : Chunk(j);
      if (!s.ok()) {
        Posted p;
        p.attempt = j.attempt;
        p.error = s;
        Put(std::move(p));
        src_.Drop();  // a fresh connection for the next job
      }
      std::lock_guard<std::mutex> l(mu_);
      busy_ = false;
    }
  }
  Status Validate(const Job& j) {
    Posted p;
    p.kind = Posted::Kind::kTable;
    p.attempt = j.attempt;
    CDC_ASSIGN_OR_RETURN(p.estimate, src_.Validate(j.req));
    Put(std::move(p));
    return Status::OK();
  }
  Status Chunk(const Job& j) {
    CDC_RETURN_IF_ERROR(src_.Watermark(WatermarkJson(j.req, j.attempt, "low")));
    CDC_RETURN_IF_ERROR(src_.Begin());
    Posted p;
    p.kind = Posted::Kind::kRows;
    p.attempt = j.attempt;
    auto read = src_.Read(j.req);
    Status s = read.status();
    if (s.ok()) {
      p.chunk = std::move(*read);
      p.done = p.chunk->rows < j.req.chunk_rows;
      if (!p.chunk->last_key) p.chunk->last_key = j.req.last_key;
      Json high = Json::parse(WatermarkJson(j.req, j.attempt, "high"));
      high["table"] = j.req.QualifiedName();
      high["chunk"] = j.chunk;
      high["rows"] = p.chunk->rows;
      high["last_key"] =
          p.chunk->last_key ? Json(*p.chunk->last_key) : Json(nullptr);
      high["done"] = p.done;
      s = src_.Watermark(
          high.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    if (!s.ok()) return s;  // Run drops the transaction and connection
    // Handed over before the commit: the capture thread needs the rows as
    // soon as the high watermark reaches it.
    Put(std::move(p));
    Status committed = src_.Commit();
    if (!committed.ok()) {
      Posted a;
      a.kind = Posted::Kind::kAborted;
      a.attempt = j.attempt;
      a.error = committed;
      Put(std::move(a));
      src_.Drop();
    }
    return Status::OK();
  }

  ChunkSource& src_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool busy_ = false;
  std::optional<Job> job_;
  std::deque<Posted> inbox_;
};

struct Incremental::Active {
  log::IncrementalSnapshot req;
  bool validated = false;
  bool validating = false;
  uint64_t attempt = 0;
  bool in_flight = false;         // a chunk was asked for
  std::optional<Posted> chunk;    // its rows, once read
  std::set<std::string> keys;     // keys changed in its window
  bool drop_all = false;          // the table was truncated in it
  uint64_t chunks = 0, rows = 0;  // written, durable or not
  std::optional<std::vector<std::string>> last_key;
  bool done = false;
  struct Pending {
    Lsn lsn;
    uint64_t seq, chunks, rows;
    std::optional<std::vector<std::string>> last_key;
    bool done;
  };
  std::deque<Pending> pending;  // written, not yet known durable
  int64_t started_us = 0, logged_us = 0;
  uint64_t rows_at_start = 0;
};

Incremental::Incremental(const Options& o, log::LogWriter* writer,
                         std::unique_ptr<ChunkSource> source, Metrics* metrics)
    : o_(o), w_(writer), source_(std::move(source)), m_(metrics) {}

Incremental::~Incremental() {
  worker_.reset();  // joined before the source it uses goes
}

namespace {

// The watermarks of `req` in the log after what its file records: the
// chunks written but not yet recorded when capture stopped.
Status ReadProgress(const std::string& dir, log::IncrementalSnapshot* req) {
  CDC_ASSIGN_OR_RETURN(auto r, log::LogReader::Open(dir));
  Status placed;
  if (req->seq > 0) {
    placed = r->SeekSeq(req->seq + 1);
  } else {
    auto t = ParseTimestamp(req->requested);
    placed = t.ok() ? r->SeekTime(*t) : r->SeekEarliest();
  }
  if (placed.code() == Code::kExpired) placed = r->SeekEarliest();
  CDC_RETURN_IF_ERROR(placed);
  log::Batch b;
  Status bad;
  // The rows a chunk wrote are the incremental rows of the watermark's
  // own transaction, which it ends.
  Lsn txn_lsn = 0;
  uint64_t txn_rows = 0;
  for (;;) {
    CDC_ASSIGN_OR_RETURN(bool got, r->Next(&b));
    if (!got) break;
    b.ForEach([&](uint64_t seq, std::string_view line, bool) {
      if (!bad.ok()) return;
      const bool row =
          line.find("\"snapshot\":\"incremental\"") != std::string_view::npos;
      if (!row &&
          line.find("\"prefix\":\"cdc.snapshot\"") == std::string_view::npos)
        return;
      event::StoredFields f;
      if (!event::ScanStored(line, &f).ok()) return;
      if (f.lsn_value != txn_lsn) {
        txn_lsn = f.lsn_value;
        txn_rows = 0;
      }
      if (row && f.op_code == 'r') ++txn_rows;
      if (f.op_code != 'm') return;
      try {
        Json w = Json::parse(Json::parse(f.content).get<std::string>());
        if (w.value("id", "") != req->id || w.value("w", "") != "high") return;
        req->chunks = w.at("chunk").get<uint64_t>();
        req->rows += txn_rows;
        if (!w.at("last_key").is_null())
          req->last_key = w["last_key"].get<std::vector<std::string>>();
        if (w.at("done").get<bool>()) req->state = "done";
        req->seq = seq;
      } catch (const Json::exception& e) {
        bad = Status::Corruption("watermark at seq " + std::to_string(seq) +
                                 " of incremental snapshot " + req->id +
                                 " is unreadable: " + e.what());
      }
    });
    CDC_RETURN_IF_ERROR(bad);
  }
  return Status::OK();
}

}  // namespace

Status Incremental::Load() {
  CDC_ASSIGN_OR_RETURN(std::vector<log::IncrementalSnapshot> all,
                       log::ListIncrementalSnapshots(o_.log));
  for (log::IncrementalSnapshot& s : all) {
    if (s.finished() || s.state != "running") continue;
    const uint64_t before = s.seq;
    // The request's rows are counted again from its file's figure on.
    CDC_RETURN_IF_ERROR(ReadProgress(o_.log, &s));
    if (s.seq != before) {
      s.updated = FormatTimestamp(NowMicros());
      CDC_RETURN_IF_ERROR(log::WriteIncrementalSnapshot(o_.log, s));
    }
  }
  return Status::OK();
}

void Incremental::Reset() {
  window_open_ = false;
  if (!a_) return;
  a_->in_flight = false;
  a_->chunk.reset();
  a_->keys.clear();
}

bool Incremental::busy() const {
  if (a_) return true;
  auto all = log::ListIncrementalSnapshots(o_.log);
  if (!all.ok()) return false;
  for (const auto& s : *all)
    if (!s.finished()) return true;
  return false;
}

std::string Incremental::StatusLine() const {
  if (!a_ || !a_->validated) return "";
  return "incremental snapshot of " + a_->req.QualifiedName() + ": " +
         std::to_string(a_->rows) + " rows";
}

void Incremental::Pickup(int64_t now_us) {
  next_pickup_us_ = now_us + kPickupEveryUs;
  auto all = log::ListIncrementalSnapshots(o_.log);
  if (!all.ok()) {
    LogWarning("incremental snapshots: " + all.status().message());
    return;
  }
  for (log::IncrementalSnapshot& s : *all) {
    if (s.finished()) continue;
    a_ = std::make_unique<Active>();
    a_->req = std::move(s);
    a_->chunks = a_->req.chunks;
    a_->rows = a_->req.rows;
    a_->last_key = a_->req.last_key;
    a_->started_us = a_->logged_us = now_us;
    a_->rows_at_start = a_->rows;
    return;
  }
}

void Incremental::Persist() {
  a_->req.updated = FormatTimestamp(NowMicros());
  Status s = log::WriteIncrementalSnapshot(o_.log, a_->req);
  if (!s.ok()) LogWarning("incremental snapshot: " + s.message());
}

void Incremental::Fail(const std::string& why) {
  LogWarning("incremental snapshot of " + a_->req.QualifiedName() +
             " failed: " + why);
  a_->req.state = "failed";
  a_->req.error = why;
  Persist();
  a_.reset();
  window_open_ = false;
  m_->incremental_running = false;
}

void Incremental::RecordDurable(bool force) {
  bool moved = false;
  while (!a_->pending.empty() &&
         (force || a_->pending.front().lsn <= w_->durable_lsn())) {
    const Active::Pending& p = a_->pending.front();
    a_->req.chunks = p.chunks;
    a_->req.rows = p.rows;
    a_->req.last_key = p.last_key;
    a_->req.seq = p.seq;
    if (p.done) a_->req.state = "done";
    a_->pending.pop_front();
    moved = true;
  }
  if (!moved) return;
  Persist();
  if (a_->req.state == "done") {
    if (!o_.quiet)
      LogInfo("incremental snapshot of " + a_->req.QualifiedName() +
              " done: " + std::to_string(a_->req.rows) + " rows in " +
              std::to_string(a_->req.chunks) + " chunks");
    a_.reset();
    m_->incremental_running = false;
  }
}

void Incremental::Progress(int64_t now_us, bool force) {
  if (o_.quiet || !a_ || !a_->validated) return;
  if (!force && now_us - a_->logged_us < kLogProgressEveryUs) return;
  a_->logged_us = now_us;
  const double secs = static_cast<double>(now_us - a_->started_us) / 1e6;
  const double rate =
      secs > 0 ? static_cast<double>(a_->rows - a_->rows_at_start) / secs : 0;
  const uint64_t est = a_->req.estimate;
  char left[64] = "";
  if (rate > 0 && est > a_->rows)
    snprintf(left, sizeof left, ", ~%.0f s left",
             static_cast<double>(est - a_->rows) / rate);
  char buf[512];
  snprintf(buf, sizeof buf,
           "incremental snapshot of %s: %llu %s, %.0f rows/s%s",
           a_->req.QualifiedName().c_str(),
           static_cast<unsigned long long>(a_->rows),
           est > 0 ? ("of " + EstimateText(est) + " rows").c_str() : "rows",
           rate, left);
  LogInfo(buf);
}

bool Incremental::TakePosted(int64_t now_us) {
  if (!a_ || !worker_) return a_ != nullptr;
  for (Posted& p : worker_->Take()) {
    if (!a_ || p.attempt != a_->attempt) continue;  // stale
    switch (p.kind) {
      case Posted::Kind::kTable:
        a_->validating = false;
        a_->validated = true;
        a_->req.estimate = p.estimate;
        if (a_->req.state == "pending") {
          a_->req.state = "running";
          if (!o_.quiet)
            LogInfo("incremental snapshot of " + a_->req.QualifiedName() +
                    " (" + EstimateText(a_->req.estimate) +
                    (a_->req.estimate > 0 ? " rows" : "") + ") in " +
                    std::to_string(a_->req.chunk_rows) + "-row chunks");
        }
        Persist();
        m_->incremental_running = true;
        m_->incremental_estimate = a_->req.estimate;
        break;
      case Posted::Kind::kRows:
        if (a_->in_flight) a_->chunk = std::move(p);
        break;
      case Posted::Kind::kAborted:
      case Posted::Kind::kError: {
        const bool validation = a_->validating;
        a_->validating = false;
        a_->in_flight = false;
        a_->chunk.reset();
        window_open_ = false;
        const Code c = p.error.code();
        // What another try cannot change: a table that is not there or
        // not readable, a key that no longer is one.
        if (c == Code::kNotFound || c == Code::kUsage ||
            (validation && (c == Code::kConfig || c == Code::kPermission))) {
          Fail(p.error.message());
          return false;
        }
        LogWarning("incremental snapshot of " + a_->req.QualifiedName() + ": " +
                   p.error.message() + "; retrying");
        retry_at_us_ = now_us + kRetryUs;
        break;
      }
    }
    if (!a_) return false;
  }
  return true;
}

void Incremental::Tick(int64_t now_us, bool dry) {
  if (!a_ && now_us >= next_pickup_us_) Pickup(now_us);
  if (!a_) return;
  if (!worker_) worker_ = std::make_unique<Worker>(source_.get());
  if (!TakePosted(now_us)) return;
  RecordDurable(false);
  if (!a_) return;
  m_->incremental_table_rows = a_->rows;
  if (now_us < retry_at_us_ || !worker_->idle() || a_->in_flight || a_->done ||
      a_->validating)
    return;
  Job j;
  j.attempt = ++a_->attempt;
  j.req = a_->req;
  j.req.last_key = a_->last_key;
  if (!a_->validated) {
    a_->validating = true;
    j.validate = true;
    worker_->Post(std::move(j));
    return;
  }
  // Streaming first: a chunk starts when the stream pauses, or now and
  // then under a stream that never does.
  if (!dry && now_us - last_chunk_us_ < kChunkGapUs) return;
  j.chunk = a_->chunks + 1;
  a_->in_flight = true;
  a_->chunk.reset();
  a_->keys.clear();
  a_->drop_all = false;
  window_open_ = false;
  worker_->Post(std::move(j));
  Progress(now_us, false);
}

void Incremental::Note(const event::EventLines& events) {
  const log::IncrementalSnapshot& t = a_->req;
  event::StoredFields f;
  for (const std::string& line : events) {
    if (!event::ScanStored(line, &f).ok()) continue;
    std::string_view schema, table;
    if (!event::PlainStringContent(f.schema, &schema) ||
        !event::PlainStringContent(f.table, &table)) {
      // A name with escapes: compare decoded.
      try {
        if (Json::parse(f.schema).get<std::string>() != t.schema ||
            Json::parse(f.table).get<std::string>() != t.table)
          continue;
      } catch (const Json::exception&) {
        continue;
      }
    } else if (schema != t.schema || table != t.table) {
      continue;
    }
    if (f.op_code == 't') a_->drop_all = true;
    if (f.op_code == 'c' || f.op_code == 'u' || f.op_code == 'd')
      a_->keys.insert(std::string(f.key));
  }
}

Status Incremental::OnWatermark(std::string_view content, Lsn commit_lsn,
                                event::EventLines* events) {
  std::string id, w;
  uint64_t attempt = 0;
  try {
    Json j = Json::parse(content);
    id = j.value("id", "");
    w = j.value("w", "");
    attempt = j.value("attempt", uint64_t{0});
  } catch (const Json::exception&) {
  }
  // The worker hands a chunk's rows over before it commits the high
  // watermark, so they are there by the time the stream brings it; take
  // them now, not at the next Tick (which a busy stream may not reach
  // before the watermark: every chunk would then be read again).
  if (w == "high" && !TakePosted(MonoMicros())) {
    events->clear();
    return Status::OK();
  }
  if (!a_ || !a_->in_flight || id != a_->req.id || attempt != a_->attempt) {
    events->clear();  // not a chunk of ours (now): nothing for the log
    return Status::OK();
  }
  if (w == "low") {
    window_open_ = true;
    a_->keys.clear();
    a_->drop_all = false;
    events->clear();
    return Status::OK();
  }
  // A high watermark whose low one this process did not see (a source
  // that failed to log it) has no window of changes to judge rows by.
  const bool opened = window_open_;
  window_open_ = false;
  a_->in_flight = false;
  last_chunk_us_ = MonoMicros();
  if (w != "high" || !opened || !a_->chunk || events->empty()) {
    events->clear();  // the worker gave up on it: read the chunk again
    return Status::OK();
  }
  const std::string high = (*events)[events->size() - 1];
  events->clear();
  Posted p = std::move(*a_->chunk);
  a_->chunk.reset();
  ChunkSource::Chunk* c = p.chunk.get();
  CDC_RETURN_IF_ERROR(source_->RenderSchema(c, events));
  uint64_t kept = 0;
  event::StoredFields f;
  for (size_t i = 0; i < c->rows; ++i) {
    if (a_->drop_all) {
      ++m_->incremental_dropped;
      continue;
    }
    Status s = source_->RenderRow(c, i, events);
    if (!s.ok()) {
      // A value that does not render fails the snapshot, not capture.
      events->clear();
      Fail(s.message());
      return Status::OK();
    }
    std::string* line = events->mutable_line(events->size() - 1);
    if (event::ScanStored(*line, &f).ok() &&
        a_->keys.count(std::string(f.key)) > 0) {
      events->Truncate(events->size() - 1);  // the stream has newer news
      ++m_->incremental_dropped;
      continue;
    }
    line->pop_back();
    line->append(",\"snapshot\":\"incremental\"}");
    ++kept;
  }
  *events->Add() = high;
  ++a_->chunks;
  a_->rows += kept;
  if (c->last_key) a_->last_key = c->last_key;
  a_->done = p.done;
  a_->pending.push_back(
      Active::Pending{commit_lsn, w_->next_seq() + events->size() - 1,
                      a_->chunks, a_->rows, a_->last_key, p.done});
  ++m_->incremental_chunks;
  m_->incremental_rows += kept;
  return Status::OK();
}

}  // namespace cdc::capture
