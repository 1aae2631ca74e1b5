// What a sink applies events to: Redis, a JetStream stream, a PostgreSQL
// database. The engine (engine.h) does everything a sink has in common;
// a target only knows its server. See docs/design.md, "Sinks".
//
// The contract (docs/invariants.md, 16):
//  - The target keeps its own applied position, written atomically with
//    the events it covers, and Open() reads it. It wins over the log
//    cursor on every start.
//  - confirmed() only moves forward, and only over events the target has
//    made durable in order. The engine acknowledges in the log, and echoes
//    on stdout, nothing above it.
//  - Events at or below what the target holds or has already queued are
//    skipped by Submit, so submitting a batch again is harmless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cdc/base/prometheus.h"
#include "cdc/base/status.h"
#include "cdc/consume/source.h"

namespace cdc::sink {

class Target {
 public:
  virtual ~Target() = default;

  // (Re)connects when needed and returns the seq up to which the target
  // holds this log's events (nullopt: none). Called at start and after
  // every retryable failure; the engine then submits again, in order,
  // every batch not yet confirmed. Unavailable: retried with backoff.
  virtual Result<std::optional<uint64_t>> Open() = 0;
  // True when another batch may be submitted now.
  virtual bool HasRoom() const = 0;
  // Starts applying `b`: whole transactions in seq order. The engine keeps
  // `b` alive and unchanged until confirmed() covers its last event or the
  // engine next calls Open(). May confirm earlier batches.
  virtual Status Submit(const consume::SinkBatch& b) = 0;
  // Takes the target's answers, waiting up to `wait_ms` for one when
  // something is in flight.
  virtual Status Poll(int wait_ms) = 0;
  // The seq up to which every event is applied (what Open() returned, at
  // least). Never moves back.
  virtual uint64_t confirmed() const = 0;
  // Events submitted and not yet confirmed or skipped.
  virtual size_t in_flight() const = 0;
  // A count that moves whenever the server answers anything (a statement
  // of a batch not yet confirmed): work in flight is then not stalled,
  // however long its batch takes. 0 for a target whose only answers are
  // confirmations.
  virtual uint64_t answers() const { return 0; }
  // Nothing is in flight and no more input is at hand (idle, or about to
  // exit): the target may tidy up what it keeps for a batch in flight.
  virtual Status Idle() { return Status::OK(); }
  // The target's own metrics (the engine adds lag_events).
  virtual void Metrics(Exposition* e) const { (void)e; }
  // What the target is, in messages: "Redis", "stream ORDERS" ...
  virtual std::string Name() const = 0;
  // The start of every metric name: cdc_redis_, cdc_nats_ ...
  virtual std::string MetricPrefix() const = 0;
  // Labels of every metric that tell this target from another of its kind
  // (mode="hash", stream="ORDERS"); the engine adds log and consumer.
  virtual std::string MetricLabels() const { return ""; }
};

}  // namespace cdc::sink
