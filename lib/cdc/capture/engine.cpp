#include "cdc/capture/engine.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cdc/base/logging.h"
#include "cdc/base/prometheus.h"
#include "cdc/base/time.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/retention.h"

namespace cdc::capture {

namespace {

constexpr int64_t kHousekeepingEveryUs = 1000000;
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

}  // namespace

Engine::Engine(const Options& o) : o_(o) {}
Engine::~Engine() = default;

void Engine::Say(const std::string& msg) const {
  if (!o_.quiet) LogInfo(msg);
}

void Engine::Warn(const std::string& msg) { LogWarning(msg); }

int64_t Engine::SyncDue() const {
  return first_unsynced_ + static_cast<int64_t>(o_.commit_delay_ms * 1000);
}

int64_t Engine::WriteDue() const { return first_unwritten_ + kWriteDelayUs; }

void Engine::Ready() {
  if (ready_sent_) return;
  o_.hooks.ready();  // alive and working; the watchdog is fed meanwhile
  ready_sent_ = true;
}

Status Engine::Append(event::EventLines& events) {
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

Status Engine::Commit(Lsn lsn, int64_t time, uint64_t xid) {
  CDC_RETURN_IF_ERROR(w_->Commit(lsn, time, xid));
  m_.events += txn_events_;
  ++m_.transactions;
  m_.last_commit_time_us = time;
  txn_events_ = 0;
  if (first_unsynced_ == 0 || first_unwritten_ == 0) {
    const int64_t now = MonoMicros();
    if (first_unsynced_ == 0) first_unsynced_ = now;
    if (first_unwritten_ == 0) first_unwritten_ = now;
  }
  return Status::OK();
}

Status Engine::CommitPosition(Lsn lsn, uint64_t xid) {
  CDC_RETURN_IF_ERROR(w_->Commit(lsn, NowMicros(), xid));
  return w_->RequestSync();
}

void Engine::Tick() {
  const int64_t now = MonoMicros();
  if (now < next_housekeeping_) return;
  next_housekeeping_ = now + kHousekeepingEveryUs;
  Housekeeping(now, src_);
}

void Engine::Housekeeping(int64_t now, const Source* src) {
  m_.durable_lsn = w_->durable_lsn();
  m_.durable_flush_lsn = w_->durable_flush_lsn();
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
      Say("retention removed " + std::to_string(r->removed.size()) +
          " segments; earliest retained seq " + std::to_string(r->first_seq));
  }
  if (!o_.metrics_file.empty() && now >= next_metrics_) {
    next_metrics_ = now + static_cast<int64_t>(o_.metrics_interval_s * 1e6);
    Status s =
        WriteMetricsFile(o_.metrics_file, m_, w_->sync_stats(), metric_labels_);
    if (!s.ok()) Warn("metrics: " + s.message());
  }
  const std::string durable = src != nullptr ? src->Describe(m_.durable_lsn)
                                             : FormatLsn(m_.durable_lsn);
  const std::string line = src != nullptr ? src->StatusLine() : "";
  if (!line.empty() && !m_.snapshot_running)
    o_.hooks.status(line + "; durable at " + durable);
  else if (m_.snapshot_running)
    o_.hooks.status("initial snapshot: " + std::to_string(m_.snapshot_rows) +
                    " rows, " + std::to_string(m_.snapshot_tables_done) +
                    " of " + std::to_string(m_.snapshot_tables) + " tables");
  else
    o_.hooks.status((m_.paused ? "paused (disk); " : "streaming; ") +
                    std::to_string(m_.events) + " events, durable at " +
                    durable);
  o_.hooks.alive(now);
}

Status Engine::Timers(Source& src, int64_t now, bool pausing) {
  src.Tick(now, pausing);
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
  CDC_RETURN_IF_ERROR(src.Timers(now, pausing));
  if (now >= next_housekeeping_) {
    next_housekeeping_ =
        now +
        std::min<int64_t>(kHousekeepingEveryUs,
                          static_cast<int64_t>(o_.metrics_interval_s * 1e6));
    Housekeeping(now, &src);
  }
  return Status::OK();
}

Status Engine::Session(Source& src) {
  bool stopped = false;
  CDC_RETURN_IF_ERROR(src.Start(&stopped));
  if (stopped) return Status::OK();
  streamed_ = true;
  Ready();
  return Stream(src);
}

Status Engine::Stream(Source& src) {
  const int64_t start = MonoMicros();
  Housekeeping(start, &src);  // e.g. the disk floor, before reading anything
  next_housekeeping_ = start + kHousekeepingEveryUs;
  for (;;) {
    if (o_.hooks.stop_requested() || src.IdleDone()) return Status::OK();
    bool got = false;
    if (!m_.paused) {
      CDC_ASSIGN_OR_RETURN(got, src.Next());
    }
    if (got) {
      dry_since_ = 0;
      // While messages keep coming, look at the clock every 32nd: the
      // timers work in milliseconds, a message takes about a microsecond.
      if ((++since_clock_ & 31) == 0)
        CDC_RETURN_IF_ERROR(Timers(src, MonoMicros(), false));
      continue;
    }
    const int64_t now = MonoMicros();
    // A stream arriving faster than a thread can sleep and wake is read by
    // spinning through short gaps: the server then never has to wake us
    // (each wake-up can take its core), and neither do we.
    if (hot_ && !m_.paused) {
      if (dry_since_ == 0) dry_since_ = now;
      if (now - dry_since_ < kSpinUs) continue;
      hot_ = false;  // the gap outlasted the spin: sleep until data comes
    }
    CDC_RETURN_IF_ERROR(Timers(src, now, /*pausing=*/true));
    // The timers may have found the source idle (--exit-when-idle).
    if (src.IdleDone()) continue;
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
    } else if (src.SoonDue()) {
      wait_us = 5000;
    }
    CDC_ASSIGN_OR_RETURN(bool data, src.Wait(wait_us, m_.paused));
    // Data after a gap shorter than a spin: the stream is hot again.
    const int64_t woke = MonoMicros();
    hot_ = data && woke - now < kSpinUs;
    dry_since_ = 0;
  }
}

Status Engine::Drain(Source* src) {
  // An open transaction is incomplete: drop it; the source sends it again
  // because it was never acknowledged.
  if (src != nullptr) src->Abandon();
  if (w_->in_txn()) CDC_RETURN_IF_ERROR(w_->Abort());
  txn_events_ = 0;
  CDC_RETURN_IF_ERROR(w_->Sync());
  first_unsynced_ = first_unwritten_ = 0;
  if (src != nullptr) src->End();
  return Status::OK();
}

Status Engine::Run(
    const std::function<std::unique_ptr<Source>(Engine*)>& make) {
  CDC_ASSIGN_OR_RETURN(id_, log::OpenOrCreateLog(o_.log));
  log::WriterOptions wo;
  wo.segment_bytes = o_.segment_bytes;
  // On two cores a second compressor only contends with the server, the
  // reader and this loop for them: measured, one drains as fast for less
  // CPU (bench/capture).
  wo.compress_threads = std::thread::hardware_concurrency() <= 2 ? 1 : 2;
  CDC_ASSIGN_OR_RETURN(w_, log::LogWriter::Open(o_.log, wo));
  if (w_->recovery().truncated_bytes > 0)
    Say("recovered the log: cut a torn tail of " +
        std::to_string(w_->recovery().truncated_bytes) + " bytes");
  std::unique_ptr<Source> src = make(this);
  src_ = src.get();
  // What tells this capture's metrics from another's in one directory.
  metric_labels_ = "log_id=\"" + PrometheusLabelValue(id_.log_id) + "\"" +
                   src->MetricLabels();
  CDC_RETURN_IF_ERROR(src->Load());
  Say("log " + o_.log + " at seq " + std::to_string(w_->next_seq()) +
      ", connecting to " + src->Target());
  int64_t failing_since = 0;
  int64_t backoff_ms = 500;
  for (;;) {
    Status s = Session(*src);
    if (s.ok()) {
      // Stopped or idle: leave everything durable and acknowledged.
      Status d = Drain(src.get());
      o_.hooks.stopping();
      next_metrics_ = 0;  // the final figures, whatever the interval
      Housekeeping(MonoMicros(), src.get());
      Say("stopped at seq " + std::to_string(w_->next_seq() - 1) +
          ", durable at " + src->Describe(w_->durable_lsn()));
      return d;
    }
    ++m_.errors;
    // Busy too: a slot still held by a walsender that has not noticed its
    // client is gone is released when that walsender times out.
    const bool retry = IsRetryable(s) || s.code() == Code::kBusy;
    Status d = Drain(src.get());
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

}  // namespace cdc::capture
