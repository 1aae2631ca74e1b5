#include "cdc/sink/engine.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "cdc/base/fs.h"
#include "cdc/base/logging.h"
#include "cdc/base/prometheus.h"
#include "cdc/base/time.h"
#include "cdc/log/log_dir.h"

namespace cdc::sink {

SourceOpener DefaultSource(const EngineOptions& o, std::string target_name) {
  return [o, name = std::move(target_name)](std::optional<uint64_t> applied)
             -> Result<std::unique_ptr<consume::Source>> {
    if (o.use_stdin) return consume::OpenStdinSource();
    return consume::OpenLogSource(o.log, o.consumer, applied, o.follow, name,
                                  o.schema_changes, o.pieces);
  };
}

Engine::Engine(EngineOptions o, Target* target, SourceOpener open_source)
    : o_(std::move(o)), t_(target), open_source_(std::move(open_source)) {
  std::string log_id = o_.log_id;
  if (log_id.empty() && !o_.log.empty()) {
    auto id = log::ReadIdentity(o_.log);  // a bad log fails at open
    if (id.ok()) log_id = id->log_id;
  }
  auto add = [this](const char* k, const std::string& v) {
    if (v.empty()) return;
    if (!metric_labels_.empty()) metric_labels_ += ',';
    metric_labels_ += std::string(k) + "=\"" + PrometheusLabelValue(v) + "\"";
  };
  add("log_id", log_id);
  if (!o_.use_stdin) add("consumer", o_.consumer);
  const std::string own = t_->MetricLabels();
  if (!own.empty()) metric_labels_ += (metric_labels_.empty() ? "" : ",") + own;
}

// Waits before the next attempt after a retryable failure: 100 ms,
// doubling up to 5 s, while no progress was made for less than
// reconnect_max_s; then returns the failure.
Status Engine::Backoff(const Status& s) {
  const int64_t now = MonoMicros();
  if (failing_since_us_ == 0) {
    failing_since_us_ = now;
    delay_ms_ = 100;
  }
  if (now - failing_since_us_ >=
          static_cast<int64_t>(o_.reconnect_max_s * 1e6) ||
      o_.stop())
    return s.Annotate("gave up after " +
                      std::to_string(static_cast<int>(o_.reconnect_max_s)) +
                      " s");
  LogWarning(s.message() + "; retrying in " + std::to_string(delay_ms_) +
             " ms");
  if (o_.sleep) {
    o_.sleep(delay_ms_);
  } else {
    for (int64_t slept = 0; slept < delay_ms_ && !o_.stop(); slept += 50)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  delay_ms_ = std::min<int64_t>(delay_ms_ * 2, 5000);
  return Status::OK();
}

Result<std::optional<uint64_t>> Engine::OpenTarget() {
  for (;;) {
    auto a = t_->Open();
    if (a.ok() || !IsRetryable(a.status())) return a;
    CDC_RETURN_IF_ERROR(Backoff(a.status()));
  }
}

Status Engine::Reopen() {
  auto a = t_->Open();
  if (!a.ok()) return a.status();
  for (const auto& b : held_) CDC_RETURN_IF_ERROR(t_->Submit(*b));
  return Status::OK();
}

Status Engine::Recover(Status s) {
  while (!s.ok()) {
    if (!IsRetryable(s)) return s;
    CDC_RETURN_IF_ERROR(Backoff(s));
    s = Reopen();
  }
  return Status::OK();
}

// A run of failures ends when the target confirms something, or when
// nothing read is left unconfirmed. (Not when the target merely has
// nothing in flight: a target that drops its connection on each failure
// has none, and would retry for ever.)
void Engine::Progress() {
  if (t_->confirmed() != last_confirmed_ || held_.empty()) {
    last_confirmed_ = t_->confirmed();
    failing_since_us_ = 0;
    delay_ms_ = 100;
  }
}

std::unique_ptr<consume::SinkBatch> Engine::TakeBatch() {
  if (spare_.empty()) return std::make_unique<consume::SinkBatch>();
  auto b = std::move(spare_.back());
  spare_.pop_back();
  b->clear();
  return b;
}

Result<bool> Engine::ReadAndSubmit() {
  if (!input_.ok()) return false;
  std::unique_ptr<consume::SinkBatch> b = TakeBatch();
  auto got = source_->Fill(b.get(), o_.batch);
  if (!got.ok() || !*got) {
    // Bad input: reading stops there; what came before it is still
    // applied, echoed and acknowledged before the failure is returned.
    if (!got.ok()) input_ = got.status();
    spare_.push_back(std::move(b));
    return false;
  }
  b->Seal();
  held_.push_back(std::move(b));
  CDC_RETURN_IF_ERROR(Recover(t_->Submit(*held_.back())));
  return true;
}

// Echoes (with --stdin) the events the target confirmed, in order, and
// releases the batches it confirmed whole.
Status Engine::Release() {
  const uint64_t c = t_->confirmed();
  cli::Output* out = o_.echo;
  while (!held_.empty()) {
    consume::SinkBatch& b = *held_.front();
    for (; echoed_ < b.events.size() && b.events[echoed_].seq <= c; ++echoed_) {
      if (out == nullptr || out->closed()) continue;
      if (!out->Write(b.events[echoed_].stored) || !out->Write("\n")) continue;
    }
    if (echoed_ < b.events.size()) break;
    echoed_ = 0;
    spare_.push_back(std::move(held_.front()));
    held_.pop_front();
  }
  if (out == nullptr) return Status::OK();
  out->Flush();
  return out->error();
}

uint64_t Engine::Done() const {
  uint64_t c = t_->confirmed();
  // Everything read is confirmed: the events the selection hid after it
  // (watermarks, schema events) are done too, or a log ending in one
  // would show a lag of 1 for ever.
  if (held_.empty() && input_.ok() && source_ != nullptr &&
      source_->NextSeq() > 0)
    c = std::max(c, source_->NextSeq() - 1);
  return c;
}

Status Engine::Ack(bool force) {
  const uint64_t c = Done();
  if (o_.use_stdin || c <= acked_) return Status::OK();
  const int64_t now = MonoMicros();
  if (!force && now < next_ack_us_) return Status::OK();
  next_ack_us_ = now + static_cast<int64_t>(o_.ack_interval_s * 1e6);
  CDC_RETURN_IF_ERROR(source_->Ack(c));
  acked_ = c;
  return Status::OK();
}

void Engine::MaybeWriteMetrics(bool force) {
  if (o_.metrics_file.empty()) return;
  const int64_t now = MonoMicros();
  if (!force && now < next_metrics_us_) return;
  next_metrics_us_ = now + static_cast<int64_t>(o_.metrics_interval_s * 1e6);
  uint64_t lag = 0;
  if (source_ != nullptr) {
    auto last = source_->LastSeq();
    if (last.ok() && *last > Done()) lag = *last - Done();
  }
  Exposition e;
  e.SetCommonLabels(metric_labels_);
  t_->Metrics(&e);
  e.Metric(t_->MetricPrefix() + "lag_events", "gauge",
           "Committed events in the log not yet applied.", lag);
  Status s = WriteFileAtomic(o_.metrics_file, e.text(), 0644);
  if (!s.ok()) LogWarning(s.message());
}

Status Engine::Step(int wait_ms) {
  Status s = t_->Poll(wait_ms);
  Progress();
  if (!s.ok()) {
    quiet_since_us_ = 0;  // an answer, if a failure: Backoff times it
    CDC_RETURN_IF_ERROR(Recover(s));
  }
  // Answers can stop without a failure (a cluster without a quorum): give
  // up after as long as on failures.
  const int64_t now = MonoMicros();
  if (t_->in_flight() == 0 || t_->confirmed() != quiet_confirmed_ ||
      t_->answers() != quiet_answers_) {
    quiet_since_us_ = 0;
    quiet_confirmed_ = t_->confirmed();
    quiet_answers_ = t_->answers();
  } else if (quiet_since_us_ == 0) {
    quiet_since_us_ = now;
  } else if (now - quiet_since_us_ >=
             static_cast<int64_t>(o_.reconnect_max_s * 1e6)) {
    return Status::Unavailable(
        t_->Name() + ": nothing confirmed for " +
        std::to_string(static_cast<int>(o_.reconnect_max_s)) +
        " s (is the server down, or without a quorum?)");
  }
  CDC_RETURN_IF_ERROR(Release());
  if (o_.echo != nullptr && o_.echo->closed()) return Status::OK();
  CDC_RETURN_IF_ERROR(Ack(false));
  MaybeWriteMetrics(false);
  return Status::OK();
}

Status Engine::Run() {
  auto opened = OpenTarget();
  if (!opened.ok() && IsRetryable(opened.status()) && o_.stop())
    return Status::OK();  // stopped before the target could be reached
  CDC_ASSIGN_OR_RETURN(std::optional<uint64_t> applied, std::move(opened));
  last_confirmed_ = t_->confirmed();
  CDC_ASSIGN_OR_RETURN(source_, open_source_(applied));
  if (!o_.use_stdin) acked_ = applied.value_or(0);
  if (o_.prepare) CDC_RETURN_IF_ERROR(o_.prepare(*source_));
  auto closed = [this] { return o_.echo != nullptr && o_.echo->closed(); };
  Status result;
  bool eof = false;
  while (!o_.stop() && !closed()) {
    // A target without room (its window full, or resyncing) is waited
    // for: that is not the end of the input.
    const bool room = t_->HasRoom();
    auto read = eof || !room ? Result<bool>(false) : ReadAndSubmit();
    if (!read.ok()) {
      result = read.status();
      break;
    }
    result = Step(*read ? 0 : 100);
    if (!result.ok() || !input_.ok()) break;
    if (*read || !room || t_->in_flight() > 0) continue;
    // Everything read is confirmed: tidy up, ack, wait for more input.
    result = Recover(t_->Idle());
    if (!result.ok()) break;
    (void)Ack(true);
    MaybeWriteMetrics(false);
    if (eof || (!o_.follow && !o_.use_stdin)) break;
    auto more = source_->Wait(1000);
    if (!more.ok()) {
      result = more.status();
      break;
    }
    if (!*more) eof = true;  // stdin at EOF: apply what is left
  }
  // SIGTERM, the end of the input, or a failure: what is in flight is
  // answered first, so the ack below covers every event confirmed.
  while (result.ok() && t_->in_flight() > 0 && !closed()) result = Step(100);
  if (result.ok() && !closed()) result = t_->Idle();
  // After a failure too, every event confirmed is echoed and acked: a
  // cdc-ack downstream must move past what the target holds.
  Status released = Release();
  Status acked = Ack(true);
  MaybeWriteMetrics(true);
  // Stopped while the target was unreachable: a clean stop; what was
  // confirmed is acked, the rest is read again on the next start.
  if (!result.ok() && IsRetryable(result) && o_.stop()) result = Status::OK();
  if (result.ok()) result = input_;
  if (result.ok()) result = released;
  return result.ok() ? acked : result;
}

}  // namespace cdc::sink
