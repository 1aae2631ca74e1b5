#include "cdc/capture/capture.h"

#include <poll.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <unordered_set>

#include "cdc/base/coding.h"
#include "cdc/base/logging.h"
#include "cdc/base/prometheus.h"
#include "cdc/base/time.h"
#include "cdc/capture/incremental.h"
#include "cdc/capture/metrics.h"
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
constexpr int64_t kHousekeepingEveryUs = 1000000;
// A new durable position is acknowledged within this (the status interval
// bounds the rest). Each acknowledgement costs the walsender a slot update,
// and a slot that advances once a second releases WAL soon enough.
constexpr int64_t kAckEveryUs = 1000000;
// How long the reader spins on an empty socket while the stream is hot.
constexpr int64_t kSpinUs = 30;
// Ended transactions are written (so followers see them) within this, even
// while the group commit window for their fsync is longer.
constexpr int64_t kWriteDelayUs = 2000;
// When the stream pauses they are written at once, but at most once per this
// (a stream that pauses after every transaction would otherwise wake the
// writer for each one); what ends sooner is written when the gap is over.
constexpr int64_t kIdleWriteGapUs = 500;
constexpr int64_t kRetentionEveryUs = 10000000;

void Say(const Options& o, const std::string& msg) {
  if (!o.quiet) LogInfo(msg);
}

// Warnings are printed even with --quiet.
void Warn(const std::string& msg) { LogWarning(msg); }

class Capture {
 public:
  explicit Capture(const Options& o)
      : o_(o), builder_(&catalog_), types_(o.dsn) {
    builder_.SetServerText(&server_text_);
  }

  Status Run();

 private:
  // One connection's worth, in phases: Prepare (the source, the slot),
  // Snapshot (when the slot was created for one), Stream.
  Status Session(pg::Connection& conn);
  Result<SlotState> Prepare(pg::Connection& conn);
  // Sets *stopped when a stop was requested before it completed.
  Status Snapshot(SlotState& slot, bool* stopped);
  Status Stream(pg::Connection& conn, const SlotState& slot);
  Status Handle(pg::Connection& conn, std::string_view msg);
  Status HandleXLogData(pg::Connection& conn, std::string_view msg);
  void NoteType(const pg::Type& t);
  void NoteGeneratedColumns(pg::Oid rel_oid);
  Status HandleKeepalive(pg::Connection& conn, std::string_view msg);
  Status Append(pg::EventLines& events);
  Status CommitTxn(Lsn lsn, int64_t time, uint64_t xid, uint64_t events);
  // `pausing`: the reader is about to sleep on an empty socket.
  Status Timers(pg::Connection& conn, int64_t now, bool pausing = false);
  Status SendStatus(pg::Connection& conn, bool reply);
  Status RecordPosition(Lsn wal_end, int64_t now);
  Status Drain(pg::Connection* conn);
  void Housekeeping(int64_t now);
  int64_t SyncDue() const {
    return first_unsynced_ + static_cast<int64_t>(o_.commit_delay_ms * 1000);
  }
  int64_t WriteDue() const { return first_unwritten_ + kWriteDelayUs; }
  // What may be acknowledged: the position of the last durable frame,
  // which for a lone message is its LSN itself (see log/position.h).
  Lsn FlushPosition() const { return w_->durable_flush_lsn(); }

  Options o_;
  std::string metric_labels_;
  std::unique_ptr<log::LogWriter> w_;
  std::unique_ptr<Incremental> inc_;  // incremental snapshots
  pg::TypeCatalog catalog_;
  pg::EventBuilder builder_;
  TypeLookup types_;
  pg::ServerText server_text_;
  std::unordered_set<pg::Oid> warned_types_;  // each type warned of once
  bool generated_failed_ =
      false;  // the last lookup of generated columns failed
  Metrics m_;
  pg::EventLines events_;

  bool in_txn_ = false;
  bool skip_txn_ = false;
  log::SourcePosition resume_;  // what the log held when streaming began
  pg::Xid txn_xid_ = 0;
  Lsn txn_lsn_ = 0;  // the open transaction's commit LSN
  uint64_t txn_events_ = 0;

  Lsn received_ = 0;
  Lsn acked_ = 0;
  Lsn idle_target_ = 0;
  bool idle_done_ = false;
  int64_t first_unsynced_ = 0;   // first commit not yet asked to be synced
  int64_t first_unwritten_ = 0;  // ... not yet asked to be written
  int64_t last_write_ = 0;       // when a write or sync was last asked for
  int64_t last_status_ = 0;
  int64_t last_position_frame_ = 0;
  // A keepalive's WAL end not yet recorded because a position frame was
  // written less than kPositionFrameEveryUs ago (0: none).
  Lsn deferred_wal_end_ = 0;
  int64_t next_housekeeping_ = 0;
  int64_t next_retention_ = 0;
  int64_t next_metrics_ = 0;
  bool ready_sent_ = false;
  bool streamed_ = false;     // the last session got as far as streaming
  uint32_t since_clock_ = 0;  // messages handled since the clock was read
  bool hot_ = true;           // messages come faster than a sleep and wake
  int64_t dry_since_ = 0;     // when reading last found nothing
};

Status Capture::Append(pg::EventLines& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    m_.bytes += events[i].size();
    // A large line moves into the writer instead of being copied.
    CDC_RETURN_IF_ERROR(events.is_schema(i)
                            ? w_->AppendSchema(events[i])
                            : w_->AppendTaking(events.mutable_line(i)));
  }
  txn_events_ += events.size();
  return Status::OK();
}

Status Capture::CommitTxn(Lsn lsn, int64_t time, uint64_t xid,
                          uint64_t events) {
  CDC_RETURN_IF_ERROR(w_->Commit(lsn, time, xid));
  m_.events += events;
  ++m_.transactions;
  m_.last_commit_time_us = time;
  if (first_unsynced_ == 0 || first_unwritten_ == 0) {
    const int64_t now = MonoMicros();
    if (first_unsynced_ == 0) first_unsynced_ = now;
    if (first_unwritten_ == 0) first_unwritten_ = now;
  }
  return Status::OK();
}

void Capture::NoteType(const pg::Type& t) {
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

void Capture::NoteGeneratedColumns(pg::Oid rel_oid) {
  // Tried for every relation: a failure (the server restarting, say) is
  // warned of once while it lasts, and never turns the lookup off.
  auto names = types_.GeneratedColumns(rel_oid);
  if (names.ok()) {
    builder_.SetGeneratedColumns(rel_oid, std::move(names).value());
    if (generated_failed_) Say(o_, "generated columns can be looked up again");
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

Status Capture::HandleXLogData(pg::Connection& conn, std::string_view msg) {
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
    txn_events_ = 0;
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
    return CommitTxn(c->commit_lsn, c->commit_time, txn_xid_, txn_events_);
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
    txn_events_ = 0;
    CDC_RETURN_IF_ERROR(Append(events_));
    return CommitTxn(lm->lsn, NowMicros(), 0, events_.size());
  }
  if (skip_txn_) return Status::OK();
  if (lm != nullptr && lm->prefix == log::kWatermarkPrefix) {
    // An incremental snapshot's chunk boundary: what of it goes into the
    // log (its rows, at the high watermark) is the snapshot's to say.
    CDC_RETURN_IF_ERROR(inc_->OnWatermark(*lm, txn_lsn_, &events_));
    if (events_.empty()) return Status::OK();
  } else {
    inc_->Observe(events_);
  }
  return Append(events_);
}

Status Capture::RecordPosition(Lsn wal_end, int64_t now) {
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
  CDC_RETURN_IF_ERROR(w_->Commit(pos, NowMicros(), 0));
  last_position_frame_ = now;
  return w_->RequestSync();
}

Status Capture::HandleKeepalive(pg::Connection& conn, std::string_view msg) {
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

Status Capture::Handle(pg::Connection& conn, std::string_view msg) {
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

Status Capture::SendStatus(pg::Connection& conn, bool reply) {
  const StandbyStatus st = StatusFor(*w_, received_);
  CDC_RETURN_IF_ERROR(conn.SendStatus(st.write, st.flush, reply));
  acked_ = st.flush;
  last_status_ = MonoMicros();
  return Status::OK();
}

void Capture::Housekeeping(int64_t now) {
  m_.received_lsn = received_;
  m_.durable_lsn = w_->durable_lsn();
  m_.durable_flush_lsn = FlushPosition();
  struct statvfs vfs;
  if (statvfs(o_.log.c_str(), &vfs) == 0) {
    const uint64_t avail = static_cast<uint64_t>(vfs.f_bavail) *
                           static_cast<uint64_t>(vfs.f_frsize);
    const bool low = avail < o_.min_free_bytes;
    if (low != m_.paused)
      Warn(low ? "free disk " + std::to_string(avail >> 20) +
                     " MiB is below the floor; pausing reading (nothing "
                     "new is acknowledged until space is freed)"
               : "free disk is above the floor again; resuming");
    m_.paused = low;
  }
  if (o_.retention.any() && now >= next_retention_) {
    next_retention_ = now + kRetentionEveryUs;
    auto r = log::ApplyRetention(o_.log, o_.retention, NowMicros(), false);
    if (!r.ok())
      Warn("retention: " + r.status().message());
    else if (!r->removed.empty())
      Say(o_, "retention removed " + std::to_string(r->removed.size()) +
                  " segments; earliest retained seq " +
                  std::to_string(r->first_seq));
  }
  if (!o_.metrics_file.empty() && now >= next_metrics_) {
    next_metrics_ = now + static_cast<int64_t>(o_.metrics_interval_s * 1e6);
    Status s =
        WriteMetricsFile(o_.metrics_file, m_, w_->sync_stats(), metric_labels_);
    if (!s.ok()) Warn("metrics: " + s.message());
  }
  const std::string incremental = inc_ ? inc_->StatusLine() : "";
  if (!incremental.empty() && !m_.snapshot_running)
    o_.hooks.status(incremental + "; durable at " + FormatLsn(m_.durable_lsn));
  else if (m_.snapshot_running)
    o_.hooks.status("initial snapshot: " + std::to_string(m_.snapshot_rows) +
                    " rows, " + std::to_string(m_.snapshot_tables_done) +
                    " of " + std::to_string(m_.snapshot_tables) + " tables");
  else
    o_.hooks.status((m_.paused ? "paused (disk); " : "streaming; ") +
                    std::to_string(m_.events) + " events, durable at " +
                    FormatLsn(m_.durable_lsn));
  o_.hooks.alive(now);
}

Status Capture::Timers(pg::Connection& conn, int64_t now, bool pausing) {
  inc_->Tick(now, pausing);
  // --exit-when-idle waits for incremental snapshots to finish.
  if (idle_done_ && inc_->busy()) idle_done_ = false;
  // One fsync at a time: while one waits on the disk the next group grows,
  // and the other writer thread stays free to write (so followers never
  // wait for the disk).
  if (first_unsynced_ != 0 && !w_->SyncPending() &&
      (now >= SyncDue() || w_->unsynced_commits() >= 10000)) {
    CDC_RETURN_IF_ERROR(w_->RequestSync());
    first_unsynced_ = first_unwritten_ = 0;
    last_write_ = now;
  } else if (first_unwritten_ != 0 &&
             (now >= WriteDue() ||
              // The stream paused: show followers what ended without
              // waiting out the write window.
              (pausing && now - last_write_ >= kIdleWriteGapUs))) {
    CDC_RETURN_IF_ERROR(w_->RequestWrite());
    first_unwritten_ = 0;
    last_write_ = now;
  }
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
    CDC_RETURN_IF_ERROR(SendStatus(conn, false));
  if (now >= next_housekeeping_) {
    next_housekeeping_ =
        now +
        std::min<int64_t>(kHousekeepingEveryUs,
                          static_cast<int64_t>(o_.metrics_interval_s * 1e6));
    Housekeeping(now);
  }
  return Status::OK();
}

Status Capture::Session(pg::Connection& conn) {
  CDC_ASSIGN_OR_RETURN(SlotState slot, Prepare(conn));
  if (slot.snapshot) {
    bool stopped = false;
    CDC_RETURN_IF_ERROR(Snapshot(slot, &stopped));
    if (stopped) return Status::OK();
  }
  return Stream(conn, slot);
}

Result<SlotState> Capture::Prepare(pg::Connection& conn) {
  // Before the slot: a slot made for a snapshot must be the connection's
  // last command until the snapshot has been copied.
  CDC_RETURN_IF_ERROR(LoadTypeCatalog(conn, &catalog_));
  if (server_text_.encoding() != conn.ServerEncoding()) {
    Status e = server_text_.SetEncoding(conn.ServerEncoding());
    if (!e.ok()) Warn(e.message() + "; message content is not converted");
  }
  return PrepareSource(conn, o_, *w_);
}

Status Capture::Snapshot(SlotState& slot, bool* stopped) {
  if (!ready_sent_) {
    o_.hooks.ready();  // alive and working; the watchdog is fed meanwhile
    ready_sent_ = true;
  }
  SnapshotInput in;
  in.snapshot_name = slot.snapshot_name;
  in.consistent_point = slot.confirmed_flush;
  in.catalog = &catalog_;
  in.server_text = &server_text_;
  in.tick = [this] {
    const int64_t now = MonoMicros();
    if (now < next_housekeeping_) return;
    next_housekeeping_ = now + kHousekeepingEveryUs;
    Housekeeping(now);
  };
  CDC_ASSIGN_OR_RETURN(SnapshotResult r, TakeInitialSnapshot(o_, in, *w_, &m_));
  if (r.stopped) {
    *stopped = true;
    return Status::OK();
  }
  // Durable before the marker goes: from here a restart streams on.
  CDC_RETURN_IF_ERROR(w_->Sync());
  CDC_RETURN_IF_ERROR(RemoveSnapshotMarker(o_.log));
  slot.server_lsn = std::max(slot.server_lsn, r.server_lsn);
  return Status::OK();
}

Status Capture::Stream(pg::Connection& conn, const SlotState& slot) {
  // The schema events the log holds (the snapshot's among them): a
  // relation seen again in this shape needs no new one.
  CDC_ASSIGN_OR_RETURN(std::vector<log::SchemaEntry> schemas,
                       log::ReadSchemas(o_.log));
  for (const log::SchemaEntry& e : schemas) builder_.KnowSchemaEvent(e.stored);
  resume_ = w_->position();
  idle_target_ = slot.server_lsn;
  // PostgreSQL skips commits below the start position as if acknowledged.
  const Lsn start = resume_.FlushLsn();
  CDC_RETURN_IF_ERROR(conn.StartReplication(o_.slot, start, o_.publication));
  streamed_ = true;
  Say(o_, "streaming from slot " + o_.slot + " (log at " +
              (resume_.valid ? FormatLsn(resume_.lsn) : std::string("start")) +
              ", slot confirmed " + FormatLsn(slot.confirmed_flush) + ")");
  if (!ready_sent_) {
    o_.hooks.ready();
    ready_sent_ = true;
  }
  last_status_ = MonoMicros();
  Housekeeping(last_status_);  // e.g. the disk floor, before reading anything
  next_housekeeping_ = last_status_ + kHousekeepingEveryUs;
  std::string_view msg;
  for (;;) {
    if (o_.hooks.stop_requested() || idle_done_) return Status::OK();
    int got = 0;
    if (!m_.paused) {
      CDC_ASSIGN_OR_RETURN(got, conn.ReadCopy(&msg));
      if (got < 0)
        return Status::Unavailable(
            conn.end_reason().empty()
                ? "PostgreSQL ended the replication stream without an error "
                  "(as it does when shutting down)"
                : "PostgreSQL ended the replication stream: " +
                      conn.end_reason());
      if (got > 0) CDC_RETURN_IF_ERROR(Handle(conn, msg));
    }
    if (got > 0) {
      dry_since_ = 0;
      // While messages keep coming, look at the clock every 32nd: the
      // timers work in milliseconds, a message takes about a microsecond.
      if ((++since_clock_ & 31) == 0)
        CDC_RETURN_IF_ERROR(Timers(conn, MonoMicros()));
      continue;
    }
    const int64_t now = MonoMicros();
    // A stream arriving faster than a thread can sleep and wake is read by
    // spinning through short gaps: the walsender then never has to wake us
    // (each wake-up can take its core), and neither do we.
    if (hot_ && !m_.paused) {
      if (dry_since_ == 0) dry_since_ = now;
      if (now - dry_since_ < kSpinUs) continue;
      hot_ = false;  // the gap outlasted the spin: sleep until data comes
    }
    CDC_RETURN_IF_ERROR(Timers(conn, now, /*pausing=*/true));
    // Wake for data, at the end of the group commit window, or soon while
    // a sync is in flight (to acknowledge it).
    int64_t wait_us = 200000;
    if (first_unsynced_ != 0) {
      int64_t due = SyncDue();
      if (w_->SyncPending()) due = std::max(due, now + 1000);  // look again
      // What ended within kIdleWriteGapUs of the last write is written
      // when that gap is over, not at the end of the write window: at a
      // low rate this wait is the latency followers see.
      if (first_unwritten_ != 0)
        due = std::min({due, WriteDue(), last_write_ + kIdleWriteGapUs});
      wait_us = std::max<int64_t>(0, due - now) + 50;
    } else if (FlushPosition() != w_->position().FlushLsn() ||
               FlushPosition() > acked_) {
      wait_us = 5000;
    }
    pollfd p{conn.socket(), static_cast<short>(m_.paused ? 0 : POLLIN), 0};
    const timespec wait{static_cast<time_t>(wait_us / 1000000),
                        static_cast<long>(wait_us % 1000000) * 1000};
    if (::ppoll(&p, 1, &wait, nullptr) < 0 && errno != EINTR)
      return Status::IOError(std::string("ppoll: ") + strerror(errno));
    // Data after a gap shorter than a spin: the stream is hot again.
    const int64_t woke = MonoMicros();
    hot_ = (p.revents & POLLIN) != 0 && woke - now < kSpinUs;
    dry_since_ = 0;
  }
}

Status Capture::Drain(pg::Connection* conn) {
  // An open transaction is incomplete: drop it; PostgreSQL sends it again
  // because it was never acknowledged.
  if (w_->in_txn()) CDC_RETURN_IF_ERROR(w_->Abort());
  if (builder_.in_transaction()) builder_.EndTransaction();
  in_txn_ = false;
  inc_->Reset();
  CDC_RETURN_IF_ERROR(w_->Sync());
  inc_->Flush();  // the chunks now durable are recorded
  first_unsynced_ = first_unwritten_ = 0;
  // Only an open stream takes a status: after the server ended it (say on
  // a shutdown) there is nobody to tell, and the next start resumes from
  // the log's position anyway.
  if (conn != nullptr && streamed_ && conn->streaming()) {
    Status s = SendStatus(*conn, false);
    conn->EndCopy();
    if (!s.ok()) Warn("final status not sent: " + s.message());
  }
  return Status::OK();
}

Status Capture::Run() {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::OpenOrCreateLog(o_.log));
  // What tells this capture's metrics from another's in one directory.
  metric_labels_ = "log_id=\"" + PrometheusLabelValue(id.log_id) +
                   "\",slot=\"" + PrometheusLabelValue(o_.slot) + "\"";
  log::WriterOptions wo;
  wo.segment_bytes = o_.segment_bytes;
  CDC_ASSIGN_OR_RETURN(w_, log::LogWriter::Open(o_.log, wo));
  if (w_->recovery().truncated_bytes > 0)
    Say(o_, "recovered the log: cut a torn tail of " +
                std::to_string(w_->recovery().truncated_bytes) + " bytes");
  inc_ = std::make_unique<Incremental>(o_, w_.get(), &builder_, &m_);
  CDC_RETURN_IF_ERROR(inc_->Load());
  Say(o_, "log " + o_.log + " at seq " + std::to_string(w_->next_seq()) +
              ", connecting to " + pg::RedactDsn(o_.dsn));
  int64_t failing_since = 0;
  int64_t backoff_ms = 500;
  for (;;) {
    Status s;
    std::unique_ptr<pg::Connection> conn;
    auto c = pg::Connection::Connect(o_.dsn, true);
    if (c.ok()) {
      conn = std::move(c).value();
      s = Session(*conn);
      if (s.ok()) {
        // Stopped or idle: leave everything durable and acknowledged.
        Status d = Drain(conn.get());
        o_.hooks.stopping();
        next_metrics_ = 0;  // the final figures, whatever the interval
        Housekeeping(MonoMicros());
        Say(o_, "stopped at seq " + std::to_string(w_->next_seq() - 1) +
                    ", durable at " + FormatLsn(w_->durable_lsn()));
        return d;
      }
    } else {
      s = c.status();
    }
    ++m_.errors;
    // Busy too: a slot still held by a walsender that has not noticed its
    // client is gone is released when that walsender times out.
    const bool retry = IsRetryable(s) || s.code() == Code::kBusy;
    Status d = Drain(conn.get());
    if (!d.ok()) return d;
    if (!retry) return s;
    const int64_t now = MonoMicros();
    if (failing_since == 0 || streamed_) {
      failing_since = now;  // a new run of failures
      if (streamed_) backoff_ms = 500;
      streamed_ = false;
    }
    if (now - failing_since >= static_cast<int64_t>(o_.reconnect_max_s * 1e6))
      return Status::Unavailable(
          "gave up after " +
          std::to_string(static_cast<int>(o_.reconnect_max_s)) +
          " s of failures: " + s.message());
    Warn(s.message() + "; retrying in " + std::to_string(backoff_ms) + " ms");
    o_.hooks.status("reconnecting: " + s.message());
    for (int64_t waited = 0; waited < backoff_ms && !o_.hooks.stop_requested();
         waited += 50) {
      o_.hooks.alive(MonoMicros());  // alive, only waiting
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (o_.hooks.stop_requested()) return Status::OK();
    backoff_ms = std::min<int64_t>(backoff_ms * 2, 30000);
    ++m_.reconnects;
  }
}

}  // namespace

Status Run(const Options& opts) {
  Capture c(opts);
  return c.Run();
}

}  // namespace cdc::capture
