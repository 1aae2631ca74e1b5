// Redis as a sink::Target: whole transactions as MULTI/EXEC batches
// (Sink), pipelined so that a batch is built into Redis while the one
// before it runs.
//
// Redis runs one connection's commands in order, so batch B's EXEC (and
// the applied seq it sets) can only follow A's. B's EXEC is sent only
// after A's answer said A is applied: a B whose predecessor failed is
// discarded, never executed, so the applied seq never covers a batch that
// failed. A transport failure leaves the outcome of the batches in flight
// unknown: the engine calls Open, which reads the applied seq again, and
// submits them again; Sink skips what the applied seq covers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cdc/redis/client.h"
#include "cdc/redis/sink.h"
#include "cdc/sink/target.h"

namespace cdc::redis {

// Makes a connection (Connection::Open; a fake in tests).
using Connector =
    std::function<Result<std::unique_ptr<Connection>>(const ConnectOptions&)>;

struct TargetStats {
  uint64_t events = 0, batches = 0, already = 0, ignored = 0, unkeyed = 0;
  uint64_t duplicates = 0, reconnects = 0;
};

class Target final : public sink::Target {
 public:
  Target(ConnectOptions co, SinkOptions so, Connector connect = nullptr);

  Result<std::optional<uint64_t>> Open() override;
  bool HasRoom() const override { return true; }
  Status Submit(const consume::SinkBatch& b) override;
  Status Poll(int wait_ms) override;
  uint64_t confirmed() const override { return confirmed_; }
  // Events of the batch executed and not confirmed (none when Redis held
  // them all already).
  size_t in_flight() const override {
    return in_flight_ == nullptr || in_flight_->events.empty() ||
                   in_flight_->events.back().seq <= confirmed_
               ? 0
               : in_flight_->events.size();
  }
  Status Idle() override;
  void Metrics(Exposition* e) const override;
  std::string Name() const override { return "Redis"; }
  std::string MetricPrefix() const override { return "cdc_redis_"; }
  std::string MetricLabels() const override {
    return sink_.options().mode == Mode::kHash ? "mode=\"hash\""
                                               : "mode=\"stream\"";
  }

  const TargetStats& stats() const { return m_; }

 private:
  Status Begin(const consume::SinkBatch& b, std::optional<uint64_t> after);
  // Confirms the batch in flight, if any.
  Status Settle();
  void Count(const BatchResult& r);
  // Forgets the connection and whatever was in flight on it.
  void Drop();

  ConnectOptions co_;
  Sink sink_;
  Connector connect_;
  std::unique_ptr<Connection> conn_;
  std::optional<uint64_t> applied_;  // what Redis holds, as last read
  uint64_t confirmed_ = 0;
  const consume::SinkBatch* in_flight_ = nullptr;  // executed, unconfirmed
  TargetStats m_;
  bool opened_ = false, warned_unkeyed_ = false;
};

}  // namespace cdc::redis
