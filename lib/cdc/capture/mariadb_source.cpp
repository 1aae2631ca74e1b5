#include "cdc/capture/mariadb_source.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "cdc/base/lsn.h"
#include "cdc/base/prometheus.h"
#include "cdc/base/time.h"
#include "cdc/capture/incremental.h"
#include "cdc/capture/mariadb_incremental.h"
#include "cdc/capture/mariadb_snapshot.h"
#include "cdc/capture/mariadb_table.h"
#include "cdc/event/json_text.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/schemas.h"
#include "cdc/mariadb/binlog.h"
#include "cdc/mariadb/conn.h"
#include "cdc/mariadb/values.h"

namespace cdc::capture {

namespace {

using mariadb::Charset;
using mariadb::Column;
using mariadb::Connection;
using mariadb::Dsn;
using mariadb::Gtid;

constexpr int64_t kPositionFrameEveryUs = 1000000;
constexpr double kHeartbeatS = 1.0;
constexpr unsigned kDumpTimeoutS = 9;  // silence taken for a dead server
// Events read ahead of the engine, at most (one larger event always fits).
constexpr size_t kQueueBytes = 64u << 20;

// "mariadb-bin.000012" sorts by its number; then the offset within it.
struct BinlogPos {
  std::string file;
  uint64_t pos = 0;
  static uint64_t Number(const std::string& f) {
    const size_t dot = f.rfind('.');
    return dot == std::string::npos
               ? 0
               : std::strtoull(f.c_str() + dot + 1, nullptr, 10);
  }
  bool AtOrAfter(const BinlogPos& o) const {
    const uint64_t a = Number(file), b = Number(o.file);
    return a != b ? a > b : pos >= o.pos;
  }
};

// What the reader thread hands over: an event, or how the stream ended.
struct Item {
  std::string event;
  Status status;
};

using maria::Table;

class MariaDbSource : public Source {
 public:
  explicit MariaDbSource(Engine* e)
      : e_(*e), o_(e->options()), w_(&e->writer()), m_(e->metrics()) {}
  ~MariaDbSource() override { StopReader(); }

  Status Load() override;
  Status Start(bool* stopped) override;
  Result<bool> Next() override;
  Result<bool> Wait(int64_t wait_us, bool paused) override;
  Status Timers(int64_t now, bool pausing) override;
  bool IdleDone() const override { return idle_done_; }
  void Tick(int64_t now, bool pausing) override {
    inc_->Tick(now, pausing);
    // --exit-when-idle waits for incremental snapshots to finish.
    if (idle_done_ && inc_->busy()) idle_done_ = false;
  }
  void Abandon() override {
    in_txn_ = false;
    txn_events_ = false;
    inc_->Reset();
  }
  std::string StatusLine() const override {
    return inc_ ? inc_->StatusLine() : "";
  }
  void End() override {
    if (inc_) inc_->Flush();  // the chunks now durable are recorded
    StopReader();
    // The server notices a closed dump connection only when a heartbeat
    // fails to send; until then its dump thread lingers, and a new one
    // with our server id waits for it. Ending it now is free while the
    // server answers (it sent something in the last seconds); a server
    // gone quiet is not waited on.
    if (query_ && dump_ && ServerAnswers())
      (void)query_->Exec("KILL " + std::to_string(dump_->thread_id()));
    query_.reset();
    dump_.reset();
  }
  std::string Describe(Lsn lsn) const override {
    return "GTID " + std::to_string(domain_) + "-" +
           std::to_string(w_->position().xid) + "-" + std::to_string(lsn);
  }
  std::string Target() const override { return dsn_.Redacted(); }
  std::string MetricLabels() const override {
    return ",database=\"" + PrometheusLabelValue(dsn_.database) + "\"";
  }

 private:
  Status CheckServer();
  Status BindLog();
  Result<std::string> StartGtid();
  Status Snapshot(bool* stopped);
  void StartReader();
  void StopReader();
  void ReaderLoop(Connection* c);
  Status Handle(std::string_view event);
  Status OnGtid(const mariadb::EventHeader& h, std::string_view body);
  Status CheckStart(std::string_view body);
  Status OnTableMap(std::string_view body);
  Status OnRows(uint8_t type, std::string_view body);
  Status OnSignal(const Table& t, const mariadb::RowsEvent& r);
  Status OnQuery(std::string_view body);
  Status EndTxn();
  Status Truncate(const std::string& db, const std::string& table);
  void AppendHead(char op, const Table& t, std::string* line) const;
  Status AppendRow(const Table& t, const std::vector<bool>& present,
                   std::string_view* rows, std::vector<std::string>* values);
  Result<const Charset*> CharsetOf(uint32_t collation);
  bool Selected(const std::string& db, const std::string& table) const;
  Status RecordPosition();
  void PollLag(int64_t now);
  // The server sent something in the last 3 s (a heartbeat comes every
  // second while it has nothing else to send).
  bool ServerAnswers() const {
    return MonoMicros() - last_read_us_.load(std::memory_order_relaxed) <
           3000000;
  }

  Engine& e_;
  const Options& o_;
  log::LogWriter* w_;
  Metrics& m_;
  Dsn dsn_;
  uint32_t server_id_ = 0;  // ours, as a replica
  uint32_t domain_ = 0;
  bool checksum_ = false;  // the server's binlog_checksum is CRC32
  std::unique_ptr<Connection> query_;
  std::unique_ptr<Connection> dump_;

  // The reader thread and its queue.
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable ready_cv_, room_cv_;
  std::vector<Item> queue_;
  size_t queued_bytes_ = 0;
  // Each side wakes the other only when it sleeps: a hot stream passes
  // events without a system call per event.
  bool consumer_waits_ = false;
  bool reader_waits_ = false;
  // Taken from queue_ at once, engine side, and read from batch_at_ on.
  std::vector<Item> batch_;
  size_t batch_at_ = 0;
  // Event buffers handled (spent_, engine side) go back to the reader
  // (spare_, under mu_) with their capacity: no allocation per event.
  std::vector<std::string> spent_, spare_;
  bool stop_reader_ = false;
  std::atomic<int64_t> last_read_us_{0};  // when the reader last got one
  Item current_;

  // Decoding state.
  mariadb::Format format_;
  BinlogPos at_;       // where the stream is
  BinlogPos idle_at_;  // --exit-when-idle: the server's end when we came
  bool idle_done_ = false;
  bool start_checked_ = false;
  std::unordered_map<uint64_t, Table> tables_;
  std::map<std::string, std::string> known_shapes_;  // names_json -> shape
  std::unordered_map<uint32_t, Charset> charsets_;
  std::unordered_map<uint32_t, std::string> collation_names_;
  event::EventLines events_;
  std::unique_ptr<Incremental> inc_;  // incremental snapshots

  bool in_txn_ = false;
  bool skip_txn_ = false;
  bool txn_events_ = false;
  Gtid gtid_;
  int64_t txn_time_ = 0;
  uint64_t txn_pos_ = 0;
  std::string head_;  // "lsn","xid","ts" of the open transaction
  std::string tail_;  // "gtid","file","pos"
  // Position to record without events (0: none), and when one last was.
  Gtid pending_;
  int64_t last_position_frame_ = 0;
  uint64_t last_seqno_ = 0;  // of the last transaction seen
  // Lag in binlog bytes, for the metrics file: where each transaction not
  // yet durable ends, the end of the last durable one, and when the
  // server's binlog end was last asked.
  std::deque<std::pair<uint64_t, BinlogPos>> unsynced_;
  BinlogPos durable_at_;
  int64_t last_lag_poll_ = 0;
};

Status MariaDbSource::Load() {
  CDC_ASSIGN_OR_RETURN(dsn_, mariadb::ParseDsn(o_.dsn));
  dsn_.password = o_.password;
  server_id_ = o_.server_id;
  if (server_id_ == 0) {
    // Stable for the log, and far from the small ids people give servers.
    uint32_t h = 2166136261u;
    for (char c : e_.identity().log_id)
      h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
    server_id_ = 0x40000000u | (h & 0x3FFFFFFFu);
  }
  // The schema events the log holds: a table seen again in this shape
  // needs no new one.
  CDC_ASSIGN_OR_RETURN(std::vector<log::SchemaEntry> schemas,
                       log::ReadSchemas(o_.log));
  for (const log::SchemaEntry& s : schemas) {
    std::string_view names, shape;
    if (log::SplitSchemaEvent(s.stored, &names, &shape))
      known_shapes_[std::string(names)] = std::string(shape);
  }
  MariaStreamContext stream;
  stream.head = &head_;
  stream.tail = &tail_;
  stream.known_shapes = &known_shapes_;
  inc_ = std::make_unique<Incremental>(
      o_, w_,
      MakeMariaChunkSource(
          dsn_, e_.identity().log_id,
          [this](const std::string& t) { return Selected(dsn_.database, t); },
          stream),
      &m_);
  return inc_->Load();
}

Status MariaDbSource::CheckServer() {
  CDC_ASSIGN_OR_RETURN(
      std::vector<mariadb::Row> rows,
      query_->Query("SELECT @@log_bin, @@binlog_format, @@binlog_row_image, "
                    "@@binlog_row_metadata, @@server_id, @@gtid_domain_id, "
                    "@@log_bin_compress, @@binlog_checksum"));
  if (rows.empty() || rows[0].size() < 8)
    return Status::Internal("no answer about the server's settings");
  const auto v = [&](int i) { return rows[0][i].value_or(""); };
  if (v(0) != "1")
    return Status::Config(
        "the server does not write a binary log (log_bin is off); start it "
        "with log_bin, binlog_format=ROW and binlog_row_metadata=FULL");
  if (v(1) != "ROW")
    return Status::Config("binlog_format is " + v(1) +
                          "; capture needs ROW (SET GLOBAL binlog_format=ROW "
                          "and in the server's configuration)");
  if (v(2) != "FULL")
    return Status::Config("binlog_row_image is " + v(2) +
                          "; capture needs FULL (whole rows before and after)");
  if (v(3) != "FULL")
    return Status::Config(
        "binlog_row_metadata is " + v(3) +
        "; capture needs FULL (column names, keys and charsets in the "
        "binlog; MariaDB 10.5 or later)");
  checksum_ = v(7) == "CRC32";
  if (v(6) == "1")
    return Status::Config(
        "log_bin_compress is on: compressed binlog events are not read; "
        "turn it off");
  if (std::to_string(server_id_) == v(4))
    return Status::Config("--server-id " + std::to_string(server_id_) +
                          " is the server's own server_id; give capture one "
                          "of its own");
  // A replica with our id would make the server drop one of us.
  auto hosts = query_->Query("SHOW SLAVE HOSTS");
  if (hosts.ok())
    for (const mariadb::Row& r : *hosts)
      if (!r.empty() && r[0] == std::to_string(server_id_))
        return Status::Config(
            "server id " + std::to_string(server_id_) +
            " is already used by a replica of this server (SHOW SLAVE "
            "HOSTS); give capture another with --server-id");
  // Collations to character sets, for text columns.
  CDC_ASSIGN_OR_RETURN(std::vector<mariadb::Row> colls,
                       query_->Query("SELECT ID, CHARACTER_SET_NAME FROM "
                                     "information_schema.COLLATIONS"));
  for (const mariadb::Row& r : colls)
    if (r.size() == 2 && r[0] && r[1])
      collation_names_[static_cast<uint32_t>(std::stoul(*r[0]))] = *r[1];
  return Status::OK();
}

Status MariaDbSource::BindLog() {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(o_.log));
  if (id.source && id.source->is_mariadb()) {
    if (id.source->database != dsn_.database)
      return Status::Config("log " + o_.log + " belongs to MariaDB database " +
                            id.source->database + ", not " + dsn_.database +
                            " (use another --log for this source)");
    domain_ = id.source->gtid_domain;
    return Status::OK();
  }
  if (id.source || w_->next_seq() > 1 || w_->has_commit())
    return Status::Config("log " + o_.log +
                          (id.source ? " belongs to a PostgreSQL source"
                                     : " holds imported events") +
                          "; a MariaDB capture needs an empty log or its own");
  // The domain positions count in: the one the server's binlog holds, or
  // the one it writes new transactions in.
  CDC_ASSIGN_OR_RETURN(std::string pos,
                       query_->Value("SELECT @@gtid_binlog_pos"));
  if (pos.find(',') != std::string::npos)
    return Status::Config(
        "the server's binlog holds more than one GTID domain (" + pos +
        "); cdc-capture reads binlogs of one domain");
  if (pos.empty()) {
    CDC_ASSIGN_OR_RETURN(std::string d,
                         query_->Value("SELECT @@gtid_domain_id"));
    domain_ = static_cast<uint32_t>(std::stoul(d));
  } else {
    CDC_ASSIGN_OR_RETURN(Gtid g, mariadb::ParseGtidText(pos));
    domain_ = g.domain;
  }
  log::SourceIdentity src;
  src.kind = "mariadb";
  src.database = dsn_.database;
  src.gtid_domain = domain_;
  return log::SetSource(o_.log, &id, src);
}

Result<std::string> MariaDbSource::StartGtid() {
  const log::SourcePosition& p = w_->position();
  if (p.valid) {
    // An initial snapshot taken before the binlog held a GTID: stream
    // from the start.
    if (p.lsn == 0) return std::string();
    if (p.xid == 0 || p.xid > UINT32_MAX)
      return Status::Corruption(
          "the log's last transaction frame names no GTID server id (xid " +
          std::to_string(p.xid) + "): not a MariaDB log's frame");
    return std::to_string(domain_) + "-" + std::to_string(p.xid) + "-" +
           std::to_string(p.lsn);
  }
  // A new log starts where the server is now, and records it before
  // anything else so a restart starts there too.
  CDC_ASSIGN_OR_RETURN(std::string pos,
                       query_->Value("SELECT @@gtid_binlog_pos"));
  if (pos.empty()) return std::string();  // no GTID yet: from the start
  CDC_ASSIGN_OR_RETURN(Gtid g, mariadb::ParseGtidText(pos));
  if (g.domain != domain_)
    return Status::Config("the server's binlog is in GTID domain " +
                          std::to_string(g.domain) + ", the log's in " +
                          std::to_string(domain_));
  CDC_RETURN_IF_ERROR(e_.CommitPosition(g.seqno, g.server_id));
  CDC_RETURN_IF_ERROR(w_->Sync());
  return pos;
}

Status MariaDbSource::Snapshot(bool* stopped) {
  e_.Ready();
  MariaSnapshotInput in;
  in.dsn = dsn_;
  in.domain = domain_;
  in.selected = [this](const std::string& db, const std::string& table) {
    return Selected(db, table);
  };
  in.tick = [this] { e_.Tick(); };
  CDC_ASSIGN_OR_RETURN(MariaSnapshotResult r,
                       TakeMariaDbSnapshot(o_, in, *w_, &m_));
  if (r.stopped) {
    *stopped = true;
    return Status::OK();
  }
  // Durable before streaming: from here a restart streams on.
  CDC_RETURN_IF_ERROR(w_->Sync());
  for (auto& [names, shape] : r.shapes) known_shapes_[names] = shape;
  return Status::OK();
}

Status MariaDbSource::Start(bool* stopped) {
  End();
  CDC_ASSIGN_OR_RETURN(query_, Connection::Connect(dsn_));
  CDC_RETURN_IF_ERROR(CheckServer());
  CDC_RETURN_IF_ERROR(BindLog());
  if (!w_->position().valid && o_.snapshot == "initial") {
    CDC_RETURN_IF_ERROR(Snapshot(stopped));
    if (*stopped) return Status::OK();
  }
  CDC_ASSIGN_OR_RETURN(std::string gtid, StartGtid());
  if (o_.exit_when_idle) {
    CDC_ASSIGN_OR_RETURN(std::vector<mariadb::Row> st,
                         query_->Query("SHOW MASTER STATUS"));
    if (st.empty() || st[0].size() < 2 || !st[0][0] || !st[0][1])
      return Status::Config("SHOW MASTER STATUS returned nothing");
    idle_at_ = BinlogPos{*st[0][0], std::stoull(*st[0][1])};
  }
  idle_done_ = false;
  // A dead server is noticed within a few heartbeats: the read timeout.
  CDC_ASSIGN_OR_RETURN(dump_, Connection::Connect(dsn_, kDumpTimeoutS));
  CDC_RETURN_IF_ERROR(dump_->StartDump(server_id_, gtid, kHeartbeatS));
  // Events before the format description (the rotate a dump starts with)
  // are checksummed as the server's setting says.
  format_ = mariadb::Format{};
  format_.checksum = checksum_;
  start_checked_ = false;
  tables_.clear();
  in_txn_ = skip_txn_ = txn_events_ = false;
  last_seqno_ = w_->position().valid ? w_->position().lsn : 0;
  pending_ = Gtid{};
  StartReader();
  e_.Say("streaming the binlog of " + dsn_.Redacted() + " as replica " +
         std::to_string(server_id_) + " from GTID " +
         (gtid.empty() ? std::string("(the start)") : gtid));
  return Status::OK();
}

void MariaDbSource::StartReader() {
  stop_reader_ = false;
  queue_.clear();
  queued_bytes_ = 0;
  reader_ = std::thread([this, c = dump_.get()] { ReaderLoop(c); });
}

void MariaDbSource::StopReader() {
  if (!reader_.joinable()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_reader_ = true;
  }
  room_cv_.notify_all();
  if (dump_) dump_->Shutdown();
  reader_.join();
  queue_.clear();
  batch_.clear();
  batch_at_ = 0;
  queued_bytes_ = 0;
}

void MariaDbSource::ReaderLoop(Connection* c) {
  std::vector<std::string> mine;  // spare buffers taken from spare_
  for (;;) {
    Item item;
    if (!mine.empty()) {
      item.event = std::move(mine.back());
      mine.pop_back();
    }
    auto ev = c->ReadEvent();
    if (ev.ok()) {
      item.event.assign(*ev);
      last_read_us_.store(MonoMicros(), std::memory_order_relaxed);
    } else {
      // Also when StopReader shut the socket: the time of the last event
      // still says whether the server was answering.
      item.status = ev.status();
    }
    std::unique_lock<std::mutex> l(mu_);
    reader_waits_ = true;
    room_cv_.wait(l, [&] {
      return stop_reader_ || queue_.empty() || queued_bytes_ < kQueueBytes;
    });
    reader_waits_ = false;
    if (stop_reader_) return;
    const bool end = !item.status.ok();
    queued_bytes_ += item.event.size();
    queue_.push_back(std::move(item));
    if (mine.empty()) mine.swap(spare_);
    const bool wake = consumer_waits_;
    l.unlock();
    if (wake) ready_cv_.notify_one();
    if (end) return;
  }
}

Result<bool> MariaDbSource::Next() {
  // The last event's buffer is kept for the reader to fill again: one of
  // a usual size, not a huge one, and not the empty (inline) string a
  // buffer leaves behind when moved, which every idle call would add.
  constexpr size_t kMinSpare = 64, kSpareCapacity = 4096, kMaxSpares = 16384;
  if (current_.event.capacity() >= kMinSpare &&
      current_.event.capacity() <= kSpareCapacity && spent_.size() < kMaxSpares)
    spent_.push_back(std::move(current_.event));
  if (batch_at_ == batch_.size()) {
    batch_.clear();
    batch_at_ = 0;
    bool wake;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (queue_.empty()) return false;
      batch_.swap(queue_);
      queued_bytes_ = 0;
      wake = reader_waits_;
      if (spare_.empty()) spare_.swap(spent_);
    }
    if (wake) room_cv_.notify_one();
  }
  current_ = std::move(batch_[batch_at_++]);
  if (!current_.status.ok()) return current_.status;
  CDC_RETURN_IF_ERROR(Handle(current_.event));
  return true;
}

Result<bool> MariaDbSource::Wait(int64_t wait_us, bool paused) {
  std::unique_lock<std::mutex> l(mu_);
  if (paused) {
    l.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
    return false;
  }
  if (batch_at_ < batch_.size()) return true;
  consumer_waits_ = true;
  const bool got = ready_cv_.wait_for(l, std::chrono::microseconds(wait_us),
                                      [&] { return !queue_.empty(); });
  consumer_waits_ = false;
  return got;
}

Status MariaDbSource::RecordPosition() {
  if (pending_.seqno == 0 || in_txn_ || w_->in_txn()) return Status::OK();
  const log::SourcePosition& p = w_->position();
  if (!p.valid || pending_.seqno > p.lsn) {
    last_position_frame_ = MonoMicros();
    CDC_RETURN_IF_ERROR(e_.CommitPosition(pending_.seqno, pending_.server_id));
  }
  pending_ = Gtid{};
  return Status::OK();
}

Status MariaDbSource::Timers(int64_t now, bool pausing) {
  m_.received_lsn = last_seqno_;
  if (pending_.seqno != 0 &&
      (now - last_position_frame_ >= kPositionFrameEveryUs ||
       (o_.exit_when_idle && pausing)))
    CDC_RETURN_IF_ERROR(RecordPosition());
  if (o_.exit_when_idle && !in_txn_ && pending_.seqno == 0 &&
      !idle_at_.file.empty() && at_.AtOrAfter(idle_at_))
    idle_done_ = true;
  if (!o_.metrics_file.empty() && now - last_lag_poll_ >= 1000000) PollLag(now);
  return Status::OK();
}

void MariaDbSource::PollLag(int64_t now) {
  last_lag_poll_ = now;
  const Lsn durable = w_->durable_lsn();
  while (!unsynced_.empty() && unsynced_.front().first <= durable) {
    durable_at_ = std::move(unsynced_.front().second);
    unsynced_.pop_front();
  }
  // Everything received is durable: the stream's own position counts
  // (events after the last commit, such as a rotation's, are no lag).
  if (unsynced_.empty() && !in_txn_ && pending_.seqno == 0 && !w_->in_txn())
    durable_at_ = at_;
  if (durable_at_.file.empty() || !query_) return;
  // A server gone quiet is not asked (the statement would wait out its
  // timeout on a dead peer, holding up the loop): the stream's liveness
  // check notices it instead.
  if (!ServerAnswers()) return;
  // SHOW BINARY LOGS: every file and its size; the last one's is its end.
  auto logs = query_->Query("SHOW BINARY LOGS");
  if (!logs.ok()) return;  // the stream's own errors say what is wrong
  const uint64_t from = BinlogPos::Number(durable_at_.file);
  int64_t lag = 0;
  for (const mariadb::Row& r : *logs) {
    if (r.size() < 2 || !r[0] || !r[1]) continue;
    const uint64_t n = BinlogPos::Number(*r[0]);
    const int64_t size = std::strtoll(r[1]->c_str(), nullptr, 10);
    if (n > from)
      lag += size;
    else if (n == from)
      lag += std::max<int64_t>(0, size - static_cast<int64_t>(durable_at_.pos));
  }
  m_.lag_bytes = lag;
}

Result<const Charset*> MariaDbSource::CharsetOf(uint32_t collation) {
  if (collation == 0) return nullptr;
  auto it = charsets_.find(collation);
  if (it != charsets_.end()) return &it->second;
  auto name = collation_names_.find(collation);
  if (name == collation_names_.end())
    return Status::Config("collation " + std::to_string(collation) +
                          " is not one the server lists");
  CDC_ASSIGN_OR_RETURN(Charset c, Charset::ForName(name->second));
  return &charsets_.emplace(collation, std::move(c)).first->second;
}

bool MariaDbSource::Selected(const std::string& db,
                             const std::string& table) const {
  if (db != dsn_.database || table == kMariaSignalTable) return false;
  if (o_.tables.empty()) return true;
  const std::string full = db + "." + table;
  for (const std::string& g : o_.tables)
    if (fnmatch(g.c_str(), full.c_str(), 0) == 0 ||
        fnmatch(g.c_str(), table.c_str(), 0) == 0)
      return true;
  return false;
}

Status MariaDbSource::Handle(std::string_view ev) {
  CDC_ASSIGN_OR_RETURN(mariadb::EventHeader h, mariadb::ParseHeader(ev));
  if (h.type == mariadb::kFormatDescriptionEvent) {
    CDC_ASSIGN_OR_RETURN(std::string_view body,
                         mariadb::EventBody(ev, h, format_));
    CDC_ASSIGN_OR_RETURN(format_, mariadb::ParseFormatDescription(body));
    return Status::OK();
  }
  CDC_ASSIGN_OR_RETURN(std::string_view body,
                       mariadb::EventBody(ev, h, format_));
  // Artificial events (the rotate and format description a dump starts
  // with) and heartbeats carry the position but are not in the file.
  if (h.next_pos != 0 && h.type != mariadb::kRotateEvent) at_.pos = h.next_pos;
  switch (h.type) {
    case mariadb::kRotateEvent: {
      CDC_ASSIGN_OR_RETURN(mariadb::Rotate r, mariadb::ParseRotate(body));
      at_ = BinlogPos{r.file, r.position};
      return Status::OK();
    }
    case mariadb::kGtidListEvent:
      // The first one, artificial, is the state where the server starts
      // sending: past the log's position, the binlog between was purged.
      if ((h.flags & mariadb::kLogEventArtificialFlag) && !start_checked_) {
        start_checked_ = true;
        return CheckStart(body);
      }
      return Status::OK();
    case mariadb::kHeartbeatEvent:
      at_.file.assign(body);
      return Status::OK();
    case mariadb::kGtidEvent:
      return OnGtid(h, body);
    case mariadb::kTableMapEvent:
      return OnTableMap(body);
    case mariadb::kWriteRowsV1:
    case mariadb::kUpdateRowsV1:
    case mariadb::kDeleteRowsV1:
    case mariadb::kWriteRowsV2:
    case mariadb::kUpdateRowsV2:
    case mariadb::kDeleteRowsV2:
    case mariadb::kWriteRowsCompressedV1:
    case mariadb::kUpdateRowsCompressedV1:
    case mariadb::kDeleteRowsCompressedV1:
      return OnRows(h.type, body);
    case mariadb::kXidEvent:
      if (!in_txn_) return Status::OK();
      return EndTxn();
    case mariadb::kQueryEvent:
      return OnQuery(body);
    case mariadb::kQueryCompressedEvent:
      return Status::Config(
          "the server compresses binlog events (log_bin_compress=ON), which "
          "cdc-capture does not read; turn it off");
    case mariadb::kMysqlGtidEvent:
      return Status::Config(
          "the binlog holds MySQL GTID events: cdc-capture reads MariaDB's "
          "binlog (MySQL 8 is not supported)");
    default:
      return Status::OK();  // annotations, checkpoints, GTID lists, ...
  }
}

Status MariaDbSource::CheckStart(std::string_view body) {
  const log::SourcePosition& p = w_->position();
  if (!p.valid) return Status::OK();
  CDC_ASSIGN_OR_RETURN(std::vector<Gtid> list, mariadb::ParseGtidList(body));
  for (const Gtid& g : list) {
    if (g.domain != domain_ || g.seqno <= p.lsn) continue;
    return Status::Gap(
        "the server's binlog starts after GTID " + g.ToString() +
        ", but the log holds transactions only up to " +
        std::to_string(domain_) + "-" + std::to_string(p.xid) + "-" +
        std::to_string(p.lsn) +
        ": the binlogs between were purged before "
        "capture read them (start a new --log, or restore the binlogs and "
        "restart)");
  }
  return Status::OK();
}

Status MariaDbSource::OnGtid(const mariadb::EventHeader& h,
                             std::string_view body) {
  CDC_ASSIGN_OR_RETURN(Gtid g, mariadb::ParseGtid(body, h.server_id));
  if (in_txn_)
    return Status::BadInput("GTID " + g.ToString() + " begins inside " +
                            gtid_.ToString());
  if (g.domain != domain_)
    return Status::Config("the binlog holds GTID " + g.ToString() +
                          " of domain " + std::to_string(g.domain) +
                          "; this log counts in domain " +
                          std::to_string(domain_) +
                          " and cdc-capture reads binlogs of one domain");
  if (g.server_id == 0)
    return Status::Config("GTID " + g.ToString() + " has server id 0");
  const log::SourcePosition& p = w_->position();
  skip_txn_ = p.valid && g.seqno <= p.lsn;
  if (!skip_txn_ && g.seqno <= last_seqno_)
    return Status::Config("GTID " + g.ToString() +
                          " does not follow the one before it (sequence " +
                          std::to_string(last_seqno_) +
                          "); set gtid_strict_mode=ON on the server");
  in_txn_ = true;
  txn_events_ = false;
  gtid_ = g;
  txn_time_ = static_cast<int64_t>(h.timestamp) * 1000000;
  txn_pos_ = h.next_pos - h.length;
  head_ = "{\"lsn\":\"" + FormatLsn(g.seqno) +
          "\",\"xid\":" + std::to_string(g.server_id) + ",\"ts\":\"" +
          FormatTimestamp(txn_time_) + "\",\"op\":\"";
  tail_ = ",\"gtid\":\"" + g.ToString() + "\",\"file\":";
  (void)event::AppendJsonString(at_.file, &tail_);
  tail_ += ",\"pos\":" + std::to_string(txn_pos_) + "}";
  e_.StartTxn();
  return Status::OK();
}

Status MariaDbSource::EndTxn() {
  in_txn_ = false;
  last_seqno_ = std::max(last_seqno_, gtid_.seqno);
  if (!o_.metrics_file.empty()) unsynced_.emplace_back(gtid_.seqno, at_);
  if (skip_txn_) {
    ++m_.skipped_transactions;
    return Status::OK();
  }
  if (!txn_events_) {
    pending_ = gtid_;  // nothing of ours: a position to record
    return Status::OK();
  }
  pending_ = Gtid{};
  return e_.Commit(gtid_.seqno, txn_time_, gtid_.server_id);
}

void MariaDbSource::AppendHead(char op, const Table& t,
                               std::string* line) const {
  line->append(head_);
  line->push_back(op);
  line->push_back('"');
  line->append(t.names_json);
}

Status MariaDbSource::OnTableMap(std::string_view body) {
  CDC_ASSIGN_OR_RETURN(mariadb::TableMap tm,
                       mariadb::ParseTableMap(body, format_));
  Table& t = tables_[tm.table_id];
  t = Table{};
  t.db = tm.db;
  t.name = tm.table;
  t.selected = Selected(tm.db, tm.table);
  t.signal = tm.db == dsn_.database && tm.table == kMariaSignalTable;
  if ((!t.selected && !t.signal) || skip_txn_) return Status::OK();
  if (!tm.has_metadata)
    return Status::Config("the table map of " + tm.db + "." + tm.table +
                          " has no column names: binlog_row_metadata must be "
                          "FULL when the change is written");
  t.labels.resize(tm.types.size());
  t.columns.resize(tm.types.size());
  for (size_t i = 0; i < tm.types.size(); ++i) {
    Column& c = t.columns[i];
    c.name = tm.names[i];
    c.type = tm.types[i];
    c.meta = tm.meta[i];
    c.real = mariadb::RealType(c.type, c.meta);
    c.is_unsigned = tm.is_unsigned[i];
    CDC_ASSIGN_OR_RETURN(c.charset, CharsetOf(tm.collations[i]));
    if (c.real == 247 || c.real == 248) {
      t.labels[i] =
          std::move(c.real == 247 ? tm.enum_values[i] : tm.set_values[i]);
      c.labels = &t.labels[i];
    }
  }
  for (uint32_t k : tm.primary_key) t.columns[k].key = true;
  return maria::Describe(&t, /*labels_utf8=*/false);
}

Status MariaDbSource::AppendRow(const Table& t,
                                const std::vector<bool>& present,
                                std::string_view* rows,
                                std::vector<std::string>* values) {
  Status s = mariadb::DecodeRowImage(t.columns, present, rows, values);
  if (!s.ok())
    return s.Annotate("GTID " + gtid_.ToString() + ", " + t.db + "." + t.name);
  return Status::OK();
}

namespace {

using maria::AppendObject;

}  // namespace

Status MariaDbSource::OnRows(uint8_t type, std::string_view body) {
  CDC_ASSIGN_OR_RETURN(mariadb::RowsEvent r,
                       mariadb::ParseRows(type, body, format_));
  if (!in_txn_)
    return Status::BadInput("a rows event outside a transaction (at " +
                            at_.file + ":" + std::to_string(at_.pos) + ")");
  auto it = tables_.find(r.table_id);
  if (it == tables_.end())
    return Status::BadInput("a rows event of table id " +
                            std::to_string(r.table_id) +
                            " that no table map named");
  Table& t = it->second;
  if ((!t.selected && !t.signal) || skip_txn_) return Status::OK();
  if (r.columns != t.columns.size())
    return Status::BadInput("a rows event of " + t.db + "." + t.name + " has " +
                            std::to_string(r.columns) +
                            " columns, its table map " +
                            std::to_string(t.columns.size()));
  if (t.signal) return OnSignal(t, r);
  events_.clear();
  // A table seen in a new shape is announced first.
  auto known = known_shapes_.find(t.names_json);
  if (known == known_shapes_.end() || known->second != t.shape) {
    std::string& line = *events_.Add();
    events_.MarkSchema();
    AppendHead('s', t, &line);
    line.append(t.shape);
    known_shapes_[t.names_json] = t.shape;
  }
  std::string_view rows = r.rows;
  std::vector<std::string> before, after;
  while (!rows.empty()) {
    std::string& line = *events_.Add();
    AppendHead(r.kind, t, &line);
    line.append(",\"key\":");
    if (r.kind == 'c') {
      CDC_RETURN_IF_ERROR(AppendRow(t, r.present, &rows, &after));
      if (t.has_key)
        AppendObject(t.columns, after, true, &line);
      else
        line.append("null");
      line.append(",\"before\":null,\"after\":");
      AppendObject(t.columns, after, false, &line);
    } else {
      CDC_RETURN_IF_ERROR(AppendRow(t, r.present, &rows, &before));
      if (r.kind == 'u')
        CDC_RETURN_IF_ERROR(AppendRow(t, r.present_after, &rows, &after));
      if (t.has_key)
        AppendObject(t.columns, before, true, &line);
      else
        line.append("null");
      line.append(",\"before\":");
      AppendObject(t.columns, before, false, &line);
      line.append(",\"after\":");
      if (r.kind == 'u')
        AppendObject(t.columns, after, false, &line);
      else
        line.append("null");
    }
    line.append(tail_);  // it closes the object
  }
  txn_events_ = true;
  inc_->Observe(events_);
  return e_.Append(events_);
}

Status MariaDbSource::OnSignal(const Table& t, const mariadb::RowsEvent& r) {
  if (r.kind == 'd') return Status::OK();
  std::string_view rows = r.rows;
  std::vector<std::string> before, after;
  while (!rows.empty()) {
    if (r.kind == 'u')
      CDC_RETURN_IF_ERROR(AppendRow(t, r.present, &rows, &before));
    CDC_RETURN_IF_ERROR(AppendRow(
        t, r.kind == 'u' ? r.present_after : r.present, &rows, &after));
    const std::string content =
        SignalContent(t.columns, after, e_.identity().log_id);
    if (content.empty()) continue;  // another log's
    // The watermark as PostgreSQL's would be: an op m event with the
    // snapshot prefix, which the snapshot keeps (a high one) or drops.
    events_.clear();
    std::string& line = *events_.Add();
    line = head_;
    line += "m\",\"prefix\":\"";
    line += log::kWatermarkPrefix;
    line += "\",\"content\":";
    (void)event::AppendJsonString(content, &line);
    line += ",\"transactional\":true";
    line += tail_;
    CDC_RETURN_IF_ERROR(inc_->OnWatermark(content, gtid_.seqno, &events_));
    if (events_.empty()) continue;
    txn_events_ = true;
    CDC_RETURN_IF_ERROR(e_.Append(events_));
  }
  return Status::OK();
}

namespace {

// The next SQL word or identifier of `q` (backquoted names unquoted),
// after spaces and comments.
std::string NextToken(std::string_view* q) {
  for (;;) {
    while (!q->empty() && std::isspace(static_cast<unsigned char>((*q)[0])))
      q->remove_prefix(1);
    if (q->starts_with("/*")) {
      const size_t end = q->find("*/", 2);
      q->remove_prefix(end == std::string_view::npos ? q->size() : end + 2);
    } else if (q->starts_with("-- ") || q->starts_with("#")) {
      const size_t end = q->find('\n');
      q->remove_prefix(end == std::string_view::npos ? q->size() : end + 1);
    } else {
      break;
    }
  }
  if (q->empty()) return "";
  std::string tok;
  if ((*q)[0] == '`') {
    size_t i = 1;
    for (; i < q->size(); ++i) {
      if ((*q)[i] == '`') {
        if (i + 1 < q->size() && (*q)[i + 1] == '`') {
          tok.push_back('`');
          ++i;
          continue;
        }
        break;
      }
      tok.push_back((*q)[i]);
    }
    q->remove_prefix(std::min(q->size(), i + 1));
    return tok;
  }
  if ((*q)[0] == '.' || (*q)[0] == ';' || (*q)[0] == ',') {
    tok.push_back((*q)[0]);
    q->remove_prefix(1);
    return tok;
  }
  size_t i = 0;
  while (i < q->size() &&
         (std::isalnum(static_cast<unsigned char>((*q)[i])) || (*q)[i] == '_' ||
          (*q)[i] == '$' || static_cast<unsigned char>((*q)[i]) >= 0x80))
    ++i;
  if (i == 0) i = 1;
  tok.assign(q->substr(0, i));
  q->remove_prefix(i);
  return tok;
}

std::string Upper(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Status MariaDbSource::Truncate(const std::string& db,
                               const std::string& table) {
  if (!Selected(db, table)) return Status::OK();
  Table t;
  t.db = db;
  t.name = table;
  t.names_json = ",\"schema\":";
  (void)event::AppendJsonString(db, &t.names_json);
  t.names_json += ",\"table\":";
  (void)event::AppendJsonString(table, &t.names_json);
  events_.clear();
  std::string& line = *events_.Add();
  AppendHead('t', t, &line);
  line.append(
      ",\"key\":null,\"before\":null,\"after\":null,\"options\":{\"cascade\":"
      "false,\"restart_identity\":true}");
  line.append(tail_);
  txn_events_ = true;
  inc_->Observe(events_);
  return e_.Append(events_);
}

Status MariaDbSource::OnQuery(std::string_view body) {
  CDC_ASSIGN_OR_RETURN(mariadb::Query q, mariadb::ParseQuery(body, format_));
  std::string_view text = q.query;
  const std::string first = Upper(NextToken(&text));
  if (first == "BEGIN" || first == "XA") return Status::OK();
  if (first == "COMMIT" || first == "ROLLBACK") {
    if (!in_txn_) return Status::OK();
    return EndTxn();
  }
  if (!in_txn_ || skip_txn_) {
    if (in_txn_ && gtid_.standalone) return EndTxn();
    return Status::OK();
  }
  // DDL arrives as text. TRUNCATE becomes an event; the others show in the
  // next table map, whose new shape is announced with the next row.
  if (first == "TRUNCATE") {
    std::string_view rest = text;
    std::string tok = NextToken(&rest);
    if (Upper(tok) == "TABLE") tok = NextToken(&rest);
    std::string db(q.db), table = tok;
    std::string_view after = rest;
    if (NextToken(&after) == ".") {
      db = tok;
      table = NextToken(&after);
    }
    CDC_RETURN_IF_ERROR(Truncate(db, table));
  }
  if (gtid_.standalone) return EndTxn();
  return Status::OK();
}

}  // namespace

std::unique_ptr<Source> MakeMariaDbSource(Engine* engine) {
  return std::make_unique<MariaDbSource>(engine);
}

}  // namespace cdc::capture
