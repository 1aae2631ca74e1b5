// A JetStream stream as a sink::Target: the events published through
// Sink, which keeps a window of publishes in flight, checks each against
// the stream sequence it follows and resyncs by itself after a failure
// (see sink.h). Open connects and creates the stream when missing, then
// reads where the stream's last message says this log's events are
// stored up to.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cdc/nats/client.h"
#include "cdc/nats/sink.h"
#include "cdc/sink/target.h"

namespace cdc::nats {

// Makes a client (Client::Open; a fake in tests).
using Connector =
    std::function<Result<std::unique_ptr<Client>>(const ConnectOptions&)>;

class Target final : public sink::Target {
 public:
  Target(ConnectOptions co, StreamOptions so, SinkOptions sk,
         std::unique_ptr<event::Renderer> r, Connector connect = nullptr);

  Result<std::optional<uint64_t>> Open() override;
  bool HasRoom() const override { return sink_.has_room() && !sink_.failing(); }
  Status Submit(const consume::SinkBatch& b) override;
  Status Poll(int wait_ms) override;
  uint64_t confirmed() const override { return sink_.acked_seq(); }
  size_t in_flight() const override { return sink_.pending(); }
  void Metrics(Exposition* e) const override;
  std::string Name() const override { return "stream " + so_.name; }
  std::string MetricPrefix() const override { return "cdc_nats_"; }
  std::string MetricLabels() const override;

  // Schema events from before the first event read (--format debezium).
  void LearnSchema(std::string_view stored) { sink_.LearnSchema(stored); }
  const SinkStats& stats() const { return sink_.stats(); }

 private:
  ConnectOptions co_;
  StreamOptions so_;
  Sink sink_;
  Connector connect_;
  std::unique_ptr<Client> client_;
  bool resumed_ = false;
  uint64_t moved_seen_ = 0;
};

}  // namespace cdc::nats
