#include "cdc/redis/target.h"

#include <algorithm>

#include "cdc/base/logging.h"

namespace cdc::redis {

Target::Target(ConnectOptions co, SinkOptions so, Connector connect)
    : co_(std::move(co)), sink_(std::move(so)), connect_(std::move(connect)) {
  if (!connect_) connect_ = &Connection::Open;
}

void Target::Drop() {
  conn_.reset();
  sink_.Reset();
  in_flight_ = nullptr;
}

Result<std::optional<uint64_t>> Target::Open() {
  Drop();
  CDC_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, connect_(co_));
  CDC_ASSIGN_OR_RETURN(std::optional<uint64_t> a, sink_.ReadApplied(*c));
  conn_ = std::move(c);
  applied_ = a;
  confirmed_ = std::max(confirmed_, a.value_or(0));
  if (opened_) ++m_.reconnects;
  opened_ = true;
  return a;
}

void Target::Count(const BatchResult& r) {
  applied_ = r.applied_seq;
  confirmed_ = std::max(confirmed_, r.applied_seq);
  m_.events += r.applied;
  m_.already += r.already;
  m_.ignored += r.ignored;
  m_.unkeyed += r.unkeyed;
  m_.duplicates += r.duplicates;
  if (r.applied > 0) ++m_.batches;
  if (r.unkeyed > 0 && !warned_unkeyed_) {
    warned_unkeyed_ = true;
    LogWarning(
        "rows of a table without a primary key or replica identity cannot "
        "be mirrored as hashes; they are skipped");
  }
}

Status Target::Settle() {
  if (in_flight_ == nullptr) return Status::OK();
  in_flight_ = nullptr;
  auto r = sink_.Finish(*conn_);
  if (!r.ok()) {
    if (IsRetryable(r.status())) Drop();
    return r.status();
  }
  Count(*r);
  return Status::OK();
}

// Begins `b` on top of `after`. On failure what was begun is discarded;
// when that fails too, or the connection died, the connection is dropped
// with whatever was in flight on it (the engine submits it again).
Status Target::Begin(const consume::SinkBatch& b,
                     std::optional<uint64_t> after) {
  Status begun = sink_.Begin(*conn_, b.events, after);
  if (begun.ok()) return begun;
  Status a = sink_.Abandon(*conn_);
  if (a.ok() && !conn_->dead()) return begun;
  Drop();
  if (!a.ok()) return a;
  return IsRetryable(begun) ? begun
                            : Status::Unavailable("Redis: connection lost");
}

Status Target::Submit(const consume::SinkBatch& b) {
  if (conn_ == nullptr) return Status::Unavailable("Redis: not connected");
  // What Redis will hold once the batch in flight is applied.
  std::optional<uint64_t> after = applied_;
  if (in_flight_ != nullptr && !in_flight_->events.empty())
    after = std::max(applied_.value_or(0), in_flight_->events.back().seq);
  Status begun = Begin(b, after);
  if (conn_ == nullptr) return begun;
  CDC_RETURN_IF_ERROR(Settle());
  if (begun.ok() && sink_.in_flight() == 0) {
    // Settling the batch before discarded this one (its EXEC answered
    // errors, e.g. stream entries Redis held already: a replay): begin it
    // again, on what Redis holds now.
    begun = Begin(b, applied_);
    if (conn_ == nullptr) return begun;
  }
  if (!begun.ok()) {
    if (IsRetryable(begun)) Drop();
    return begun;
  }
  Status e = sink_.Exec(*conn_);
  if (!e.ok()) {
    Drop();
    return e;
  }
  in_flight_ = &b;
  return Status::OK();
}

Status Target::Poll(int wait_ms) {
  if (wait_ms <= 0 || in_flight_ == nullptr) return Status::OK();
  return Settle();
}

Status Target::Idle() {
  if (conn_ == nullptr) return Status::OK();
  CDC_RETURN_IF_ERROR(Settle());
  Status s = sink_.Confirm(*conn_);
  if (s.ok() || !IsRetryable(s)) return s;
  // Harmless to leave: a restart would apply the last batch again.
  Drop();
  return Status::OK();
}

void Target::Metrics(Exposition* e) const {
  e->Metric("cdc_redis_events_applied_total", "counter",
            "Events written to Redis.", m_.events);
  e->Metric("cdc_redis_batches_total", "counter",
            "MULTI/EXEC batches confirmed.", m_.batches);
  e->Metric("cdc_redis_events_already_applied_total", "counter",
            "Events skipped because Redis already held them.", m_.already);
  e->Metric("cdc_redis_events_ignored_total", "counter",
            "Events with no effect in this mode (hash mode: m, s, rows "
            "without a key).",
            m_.ignored + m_.unkeyed);
  e->Metric("cdc_redis_reconnects_total", "counter",
            "Connections to Redis rebuilt.", m_.reconnects);
  e->Metric("cdc_redis_applied_seq", "gauge", "The applied seq Redis holds.",
            applied_.value_or(0));
}

}  // namespace cdc::redis
