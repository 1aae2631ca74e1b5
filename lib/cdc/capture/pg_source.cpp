#include "cdc/capture/pg_source.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <unordered_set>

#include "cdc/base/coding.h"
#include "cdc/base/logging.h"
#include "cdc/base/prometheus.h"
#include "cdc/base/time.h"
#include "cdc/capture/engine.h"
#include "cdc/capture/incremental.h"
#include "cdc/capture/metrics.h"
#include "cdc/capture/pg_incremental.h"
#include "cdc/capture/snapshot.h"
#include "cdc/capture/source.h"
#include "cdc/capture/status.h"
#include "cdc/log/retention.h"
#include "cdc/log/schemas.h"
#include "cdc/log/snapshots.h"
#include "cdc/log/writer.h"
#include "cdc/pg/conn.h"
#include "cdc/pg/event_builder.h"
#include "cdc/pg/pgoutput.h"
#include "cdc/pg/replication.h"

namespace cdc::capture {

namespace {

constexpr int64_t kPositionFrameEveryUs = 1000000;  // keepalive positions
// Over TCP, while messages flow, a wait for more lasts until kGatherBytes
// have come (SO_RCVLOWAT) or kGatherUs have passed, whichever is first,
// so that one read takes many messages (see PgSource::Wait).
constexpr int kGatherBytes = 16 << 10;
constexpr int64_t kGatherUs = 500;
// Messages read since the last wait that show a stream in full flow (a
// trickle, such as one small transaction, is not held back).
constexpr uint64_t kGatherAfterMessages = 16;
constexpr int64_t kPingAfterUs = 10000000;  // silence before a ping
constexpr int64_t kDeadAfterUs = 10000000;  // an unanswered ping: dead
// A new durable position is acknowledged within this (the status interval
// bounds the rest). Each acknowledgement costs the walsender a slot update,
// and a slot that advances once a second releases WAL soon enough.
constexpr int64_t kAckEveryUs = 1000000;

class PgSource : public Source {
 public:
  PgSource(Engine* e)
      : e_(*e),
        o_(e->options()),
        w_(&e->writer()),
        m_(e->metrics()),
        builder_(&catalog_),
        types_(o_.dsn) {
    builder_.SetServerText(&server_text_);
  }

  Status Load() override {
    inc_ = std::make_unique<Incremental>(o_, w_,
                                         MakePgChunkSource(o_, &builder_), &m_);
    return inc_->Load();
  }
  Status Start(bool* stopped) override;
  Result<bool> Next() override;
  Result<bool> Wait(int64_t wait_us, bool paused) override;
  void Tick(int64_t now, bool pausing) override;
  Status Timers(int64_t now, bool pausing) override;
  bool SoonDue() const override {
    return FlushPosition() != w_->position().FlushLsn() ||
           FlushPosition() > acked_;
  }
  bool IdleDone() const override { return idle_done_; }
  void Abandon() override;
  void End() override;
  std::string StatusLine() const override {
    return inc_ ? inc_->StatusLine() : "";
  }
  std::string Describe(Lsn lsn) const override { return FormatLsn(lsn); }
  std::string Target() const override { return pg::RedactDsn(o_.dsn); }
  std::string MetricLabels() const override {
    return ",slot=\"" + PrometheusLabelValue(o_.slot) + "\"";
  }

 private:
  void Say(const std::string& msg) const { e_.Say(msg); }
  static void Warn(const std::string& msg) { Engine::Warn(msg); }
  Result<SlotState> Prepare(pg::Connection& conn);
  // Sets *stopped when a stop was requested before it completed.
  Status Snapshot(SlotState& slot, bool* stopped);
  Status Stream(pg::Connection& conn, const SlotState& slot);
  Status Handle(pg::Connection& conn, std::string_view msg);
  Status HandleXLogData(pg::Connection& conn, std::string_view msg);
  void NoteType(const pg::Type& t);
  void NoteGeneratedColumns(pg::Oid rel_oid);
  Status HandleKeepalive(pg::Connection& conn, std::string_view msg);
  Status Append(pg::EventLines& events) { return e_.Append(events); }
  Status SendStatus(pg::Connection& conn, bool reply);
  // A server that sent nothing for kPingAfterUs is asked for an answer (a
  // status update with its reply flag); one that does not answer within
  // kDeadAfterUs more is taken for dead: Unavailable, and the engine
  // reconnects. A network that drops packets without a word is thus
  // noticed in at most kPingAfterUs + kDeadAfterUs, whatever TCP does.
  Status CheckAlive(int64_t now);
  Status RecordPosition(Lsn wal_end, int64_t now);
  // What may be acknowledged: the position of the last durable frame,
  // which for a lone message is its LSN itself (see log/position.h).
  Lsn FlushPosition() const { return w_->durable_flush_lsn(); }

  Engine& e_;
  const Options& o_;
  log::LogWriter* w_;
  Metrics& m_;
  std::unique_ptr<pg::Connection> conn_;
  std::unique_ptr<Incremental> inc_;  // incremental snapshots
  pg::TypeCatalog catalog_;
  pg::EventBuilder builder_;
  TypeLookup types_;
  pg::ServerText server_text_;
  std::unordered_set<pg::Oid> warned_types_;  // each type warned of once
  bool generated_failed_ =
      false;  // the last lookup of generated columns failed
  pg::EventLines events_;

  bool in_txn_ = false;
  bool skip_txn_ = false;
  log::SourcePosition resume_;  // what the log held when streaming began
  pg::Xid txn_xid_ = 0;
  Lsn txn_lsn_ = 0;  // the open transaction's commit LSN

  Lsn received_ = 0;
  Lsn acked_ = 0;
  Lsn idle_target_ = 0;
  bool idle_done_ = false;
  int64_t last_status_ = 0;
  int64_t last_position_frame_ = 0;
  // Liveness: messages read (counted, not timed, per message), the count
  // Timers last saw and when it moved, and when a ping was sent unanswered.
  uint64_t messages_ = 0;
  uint64_t messages_seen_ = 0;
  int64_t alive_us_ = 0;
  int64_t ping_us_ = 0;
  bool paused_ = false;
  // Gathering (Wait): the stream is over TCP; messages came since the last
  // wait; SO_RCVLOWAT is kGatherBytes now.
  bool tcp_ = false, gathering_ = false;
  uint64_t read_since_wait_ = 0;
  // A keepalive's WAL end not yet recorded because a position frame was
  // written less than kPositionFrameEveryUs ago (0: none).
  Lsn deferred_wal_end_ = 0;
};

void PgSource::NoteType(const pg::Type& t) {
  // PostgreSQL names a domain by its base type as it was at the change
  // (pg_catalog as ""): a domain over a built-in type renders as that type
  // even when it was dropped before we got here.
  const pg::Oid base = t.nspname.empty() ? pg::BuiltinTypeOid(t.name) : 0;
  if (base != 0 && base != t.oid) {
    catalog_.domain_base[t.oid] = base;
    return;
  }
  Status s = types_.Lookup(t.oid, &catalog_);
  if (!s.ok() && warned_types_.insert(t.oid).second)
    Warn("cannot look up type " + t.nspname + "." + t.name +
         " (its values render as strings): " + s.message());
}

void PgSource::NoteGeneratedColumns(pg::Oid rel_oid) {
  // Tried for every relation: a failure (the server restarting, say) is
  // warned of once while it lasts, and never turns the lookup off.
  auto names = types_.GeneratedColumns(rel_oid);
  if (names.ok()) {
    builder_.SetGeneratedColumns(rel_oid, std::move(names).value());
    if (generated_failed_) Say("generated columns can be looked up again");
    generated_failed_ = false;
    return;
  }
  if (generated_failed_) return;
  generated_failed_ = true;
  Warn(
      "cannot look up generated columns (a schema change event meanwhile "
      "names those known before): " +
      names.status().message());
}

Status PgSource::HandleXLogData(pg::Connection& conn, std::string_view msg) {
  CDC_ASSIGN_OR_RETURN(pg::XLogData x, pg::ParseXLogData(msg));
  const Lsn start = x.start;
  received_ = std::max(received_, start);
  std::string_view payload = x.payload;
  // A row change always yields an event: a large one the writer holds is
  // not the transaction's last, and can go before this one is decoded.
  if (in_txn_ && !skip_txn_ && !payload.empty() &&
      (payload[0] == 'I' || payload[0] == 'U' || payload[0] == 'D'))
    CDC_RETURN_IF_ERROR(w_->EventFollows());
  CDC_ASSIGN_OR_RETURN(pg::Message m, pg::DecodeMessage(payload, start));
  // Decoding copied what it needs: a large message is not held twice while
  // it is rendered.
  conn.ReleaseCopy();
  events_.clear();
  if (auto* b = std::get_if<pg::Begin>(&m)) {
    in_txn_ = true;
    txn_xid_ = b->xid;
    txn_lsn_ = b->final_lsn;
    e_.StartTxn();
    skip_txn_ = resume_.CoversCommit(b->final_lsn);
    return builder_.Apply(m, &events_);
  }
  if (auto* c = std::get_if<pg::Commit>(&m)) {
    CDC_RETURN_IF_ERROR(builder_.Apply(m, &events_));
    in_txn_ = false;
    if (skip_txn_) {
      ++m_.skipped_transactions;
      return Status::OK();
    }
    return e_.Commit(c->commit_lsn, c->commit_time, txn_xid_);
  }
  if (auto* t = std::get_if<pg::Type>(&m)) NoteType(*t);
  if (auto* r = std::get_if<pg::Relation>(&m)) NoteGeneratedColumns(r->oid);
  auto* lm = std::get_if<pg::LogicalMessage>(&m);
  const bool lone_message = lm != nullptr && !in_txn_;
  CDC_RETURN_IF_ERROR(builder_.Apply(m, &events_));
  if (events_.empty()) return Status::OK();
  if (lone_message) {
    // A non-transactional message is a transaction of its own. Its LSN is
    // the end of its WAL record, where the next commit record may start:
    // the writer records it as an exclusive position.
    if (resume_.CoversMessage(lm->lsn)) return Status::OK();
    e_.StartTxn();
    CDC_RETURN_IF_ERROR(Append(events_));
    return e_.Commit(lm->lsn, NowMicros(), 0);
  }
  if (skip_txn_) return Status::OK();
  if (lm != nullptr && lm->prefix == log::kWatermarkPrefix) {
    // An incremental snapshot's chunk boundary: what of it goes into the
    // log (its rows, at the high watermark) is the snapshot's to say.
    CDC_RETURN_IF_ERROR(inc_->OnWatermark(lm->content, txn_lsn_, &events_));
    if (events_.empty()) return Status::OK();
  } else {
    inc_->Observe(events_);
  }
  return Append(events_);
}

Status PgSource::RecordPosition(Lsn wal_end, int64_t now) {
  // Only when nothing received is unwritten: advancing past a buffered
  // transaction would lose it.
  if (in_txn_ || w_->in_txn() || wal_end == 0) return Status::OK();
  // Every commit record starting below the WAL end was sent before the
  // keepalive, so the position covers commits at or below wal_end - 1 and
  // acknowledges wal_end. Recorded only when that moves the acknowledged
  // position forward (e.g. not over a lone message ending at wal_end).
  const Lsn pos = wal_end - 1;
  if (wal_end <= w_->position().FlushLsn() || wal_end <= resume_.FlushLsn())
    return Status::OK();
  last_position_frame_ = now;
  return e_.CommitPosition(pos, 0);
}

Status PgSource::HandleKeepalive(pg::Connection& conn, std::string_view msg) {
  CDC_ASSIGN_OR_RETURN(pg::Keepalive k, pg::ParseKeepalive(msg));
  const Lsn wal_end = k.wal_end;
  const bool reply = k.reply_requested;
  m_.server_wal_end = std::max(m_.server_wal_end, wal_end);
  const int64_t now = MonoMicros();
  if (!in_txn_ && (now - last_position_frame_ >= kPositionFrameEveryUs ||
                   (o_.exit_when_idle && wal_end >= idle_target_))) {
    deferred_wal_end_ = 0;
    CDC_RETURN_IF_ERROR(RecordPosition(wal_end, now));
  } else {
    // PostgreSQL may send no other keepalive for half of
    // wal_sender_timeout; record this one when the throttle allows, so
    // `cdc-log wait` for a position after an idle commit takes at most
    // about a second.
    deferred_wal_end_ = std::max(deferred_wal_end_, wal_end);
  }
  if (o_.exit_when_idle && !in_txn_ && wal_end >= idle_target_)
    idle_done_ = true;
  if (reply) return SendStatus(conn, false);
  return Status::OK();
}

Status PgSource::Handle(pg::Connection& conn, std::string_view msg) {
  if (msg.empty()) return Status::BadInput("empty replication message");
  switch (msg[0]) {
    case 'w':
      return HandleXLogData(conn, msg);
    case 'k':
      return HandleKeepalive(conn, msg);
    default:
      return Status::BadInput("unrecognized replication message type " +
                              pg::DescribeByte(static_cast<uint8_t>(msg[0])) +
                              " after " + FormatLsn(received_));
  }
}

Status PgSource::SendStatus(pg::Connection& conn, bool reply) {
  const StandbyStatus st = StatusFor(*w_, received_);
  CDC_RETURN_IF_ERROR(conn.SendStatus(st.write, st.flush, reply));
  acked_ = st.flush;
  last_status_ = MonoMicros();
  return Status::OK();
}

Status PgSource::CheckAlive(int64_t now) {
  if (messages_ != messages_seen_ || paused_ || alive_us_ == 0) {
    // Reading paused for disk space leaves messages unread: not silence.
    messages_seen_ = messages_;
    alive_us_ = now;
    ping_us_ = 0;
    return Status::OK();
  }
  if (ping_us_ == 0) {
    if (now - alive_us_ < kPingAfterUs) return Status::OK();
    ping_us_ = now;
    return SendStatus(*conn_, true);
  }
  if (now - ping_us_ < kDeadAfterUs) return Status::OK();
  return Status::Unavailable(
      "PostgreSQL sent nothing for " +
      std::to_string((now - alive_us_) / 1000000) +
      " s and did not answer a ping: the connection is taken for dead");
}

void PgSource::Tick(int64_t now, bool pausing) {
  inc_->Tick(now, pausing);
  // --exit-when-idle waits for incremental snapshots to finish.
  if (idle_done_ && inc_->busy()) idle_done_ = false;
}

Status PgSource::Timers(int64_t now, bool pausing) {
  (void)pausing;
  m_.received_lsn = received_;
  CDC_RETURN_IF_ERROR(CheckAlive(now));
  if (deferred_wal_end_ != 0 && !in_txn_ && !w_->in_txn() &&
      now - last_position_frame_ >= kPositionFrameEveryUs) {
    // A transaction received since the keepalive has a commit LSN at or
    // beyond its WAL end, so RecordPosition skips a position it covers.
    const Lsn wal_end = deferred_wal_end_;
    deferred_wal_end_ = 0;
    CDC_RETURN_IF_ERROR(RecordPosition(wal_end, now));
  }
  const Lsn flush = FlushPosition();
  const int64_t interval = static_cast<int64_t>(o_.status_interval_s * 1e6);
  if (now - last_status_ >= interval ||
      (flush > acked_ && now - last_status_ >= kAckEveryUs))
    CDC_RETURN_IF_ERROR(SendStatus(*conn_, false));
  return Status::OK();
}

Status PgSource::Start(bool* stopped) {
  conn_.reset();
  CDC_ASSIGN_OR_RETURN(conn_, pg::Connection::Connect(o_.dsn, true));
  CDC_ASSIGN_OR_RETURN(SlotState slot, Prepare(*conn_));
  if (slot.snapshot) {
    CDC_RETURN_IF_ERROR(Snapshot(slot, stopped));
    if (*stopped) return Status::OK();
  }
  return Stream(*conn_, slot);
}

Result<SlotState> PgSource::Prepare(pg::Connection& conn) {
  // Before the slot: a slot made for a snapshot must be the connection's
  // last command until the snapshot has been copied.
  CDC_RETURN_IF_ERROR(LoadTypeCatalog(conn, &catalog_));
  if (server_text_.encoding() != conn.ServerEncoding()) {
    Status e = server_text_.SetEncoding(conn.ServerEncoding());
    if (!e.ok()) Warn(e.message() + "; message content is not converted");
  }
  return PrepareSource(conn, o_, *w_);
}

Status PgSource::Snapshot(SlotState& slot, bool* stopped) {
  e_.Ready();
  SnapshotInput in;
  in.snapshot_name = slot.snapshot_name;
  in.consistent_point = slot.confirmed_flush;
  in.catalog = &catalog_;
  in.server_text = &server_text_;
  in.tick = [this] { e_.Tick(); };
  CDC_ASSIGN_OR_RETURN(SnapshotResult r, TakeInitialSnapshot(o_, in, *w_, &m_));
  if (r.stopped) {
    *stopped = true;
    return Status::OK();
  }
  // Durable before the marker goes: from here a restart streams on.
  CDC_RETURN_IF_ERROR(w_->Sync());
  CDC_RETURN_IF_ERROR(RemoveSnapshotMarker(o_.log));
  slot.server_lsn = std::max(slot.server_lsn, r.server_lsn);
  types_.Adopt(std::move(r.conn));
  return Status::OK();
}

Status PgSource::Stream(pg::Connection& conn, const SlotState& slot) {
  // The schema events the log holds (the snapshot's among them): a
  // relation seen again in this shape needs no new one.
  CDC_ASSIGN_OR_RETURN(std::vector<log::SchemaEntry> schemas,
                       log::ReadSchemas(o_.log));
  for (const log::SchemaEntry& e : schemas) builder_.KnowSchemaEvent(e.stored);
  resume_ = w_->position();
  idle_target_ = slot.server_lsn;
  idle_done_ = false;
  // PostgreSQL skips commits below the start position as if acknowledged.
  const Lsn start = resume_.FlushLsn();
  // The lookups a table's first change needs then find their connection
  // open (measured: the first event of a new log waited 26 ms, 19 of them
  // connecting).
  types_.Connect();
  CDC_RETURN_IF_ERROR(conn.StartReplication(o_.slot, start, o_.publication));
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  tcp_ = getsockname(conn.socket(), reinterpret_cast<sockaddr*>(&addr), &len) ==
             0 &&
         (addr.ss_family == AF_INET || addr.ss_family == AF_INET6);
  gathering_ = false;
  read_since_wait_ = 0;
  alive_us_ = 0;  // the silence counts from the first check
  messages_seen_ = messages_;
  Say("streaming from slot " + o_.slot + " (log at " +
      (resume_.valid ? FormatLsn(resume_.lsn) : std::string("start")) +
      ", slot confirmed " + FormatLsn(slot.confirmed_flush) + ")");
  last_status_ = MonoMicros();
  return Status::OK();
}

Result<bool> PgSource::Next() {
  std::string_view msg;
  CDC_ASSIGN_OR_RETURN(int got, conn_->ReadCopy(&msg));
  if (got < 0)
    return Status::Unavailable(
        conn_->end_reason().empty()
            ? "PostgreSQL ended the replication stream without an error "
              "(as it does when shutting down)"
            : "PostgreSQL ended the replication stream: " +
                  conn_->end_reason());
  if (got == 0) return false;
  ++read_since_wait_;
  ++messages_;
  CDC_RETURN_IF_ERROR(Handle(*conn_, msg));
  return true;
}

Result<bool> PgSource::Wait(int64_t wait_us, bool paused) {
  paused_ = paused;
  // A reader faster than walsender (which sends message by message) finds
  // a few KiB at each read, and pays a wakeup and a read for each. When
  // the last drain took kGatherAfterMessages or more (a stream in full
  // flow), the wait lets messages gather: over TCP the socket reads as
  // readable once kGatherBytes are there (SO_RCVLOWAT), and after
  // kGatherUs what came is read anyway; over a unix socket, whose poll
  // ignores SO_RCVLOWAT, it waits kGatherUs. A trickle (a small
  // transaction now and then) is read as it comes.
  const bool gather = read_since_wait_ >= kGatherAfterMessages && !paused;
  read_since_wait_ = 0;
  if (gather && !tcp_) {
    // A unix socket's poll ignores SO_RCVLOWAT: wait the time out.
    const timespec pause{
        0,
        static_cast<long>(std::clamp<int64_t>(wait_us, 0, kGatherUs)) * 1000};
    ::nanosleep(&pause, nullptr);
    return true;
  }
  if (gather != gathering_) {
    const int lowat = gather ? kGatherBytes : 1;
    gathering_ = setsockopt(conn_->socket(), SOL_SOCKET, SO_RCVLOWAT, &lowat,
                            sizeof lowat) == 0
                     ? gather
                     : gathering_;
  }
  if (gathering_) wait_us = std::min(wait_us, kGatherUs);
  pollfd p{conn_->socket(), static_cast<short>(paused ? 0 : POLLIN), 0};
  const timespec wait{static_cast<time_t>(wait_us / 1000000),
                      static_cast<long>(wait_us % 1000000) * 1000};
  if (::ppoll(&p, 1, &wait, nullptr) < 0 && errno != EINTR)
    return Status::IOError(std::string("ppoll: ") + strerror(errno));
  return (p.revents & POLLIN) != 0 || gathering_;
}

void PgSource::Abandon() {
  if (builder_.in_transaction()) builder_.EndTransaction();
  in_txn_ = false;
  inc_->Reset();
}

void PgSource::End() {
  inc_->Flush();  // the chunks now durable are recorded
  // Only an open stream takes a status: after the server ended it (say on
  // a shutdown) there is nobody to tell, and the next start resumes from
  // the log's position anyway.
  if (conn_ != nullptr && conn_->streaming()) {
    Status s = SendStatus(*conn_, false);
    conn_->EndCopy();
    if (!s.ok()) Warn("final status not sent: " + s.message());
  }
  conn_.reset();
}

}  // namespace

std::unique_ptr<Source> MakePgSource(Engine* engine) {
  return std::make_unique<PgSource>(engine);
}

}  // namespace cdc::capture
