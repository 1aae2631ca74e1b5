// The one sink engine: reads whole transactions from the log (as a named
// consumer) or stdin, submits them to a Target, and acknowledges in the
// log only what the target confirmed. Everything cdc-redis, cdc-nats and
// later sinks share lives here; a tool maps its flags to EngineOptions
// and builds its Target.
//
//   resume   the target's applied position wins over the cursor (Open)
//   batch    whole transactions, up to `batch` events (Source::Fill)
//   submit   Target::Submit while the target has room
//   confirm  Target::Poll; batches fully confirmed are echoed (--stdin)
//            and released
//   ack      the consumer's cursor moves to confirmed(), at most once
//            per ack_interval_s and at every idle moment and exit
//   stall    work in flight with neither a confirmation nor any other
//            answer (Target::answers) for reconnect_max_s: given up (69)
//   retry    a retryable failure (IsRetryable) backs off 100 ms doubling
//            to 5 s, reopens the target and submits again what it did
//            not confirm, for at most reconnect_max_s of no progress
//   stop     `stop()` turning true ends reading; what was read is still
//            confirmed, echoed and acked before Run returns
//   metrics  the target's metrics plus lag_events, every
//            metrics_interval_s and at exit, through one writer
// Bad input from the source stops reading; what came before it is still
// applied and acked, and the input's failure is returned.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/cli/cli.h"
#include "cdc/consume/source.h"
#include "cdc/sink/target.h"

namespace cdc::sink {

struct EngineOptions {
  // Where events come from: the log at `log` as consumer `consumer`
  // (following with `follow`), or NDJSON on stdin (`use_stdin`).
  std::string log;
  std::string consumer;
  bool follow = false;
  bool use_stdin = false;
  // False: schema-change events (op s) are consumed but not handed to the
  // target, as cdc-tail's default view (a consumer's stored selection, made
  // with cdc-ack --create --schema-changes, still brings them).
  bool schema_changes = true;
  size_t batch = 1000;  // events per batch (whole transactions)
  // Which transactions of more than `batch` events come from the log in
  // batches of `batch` (the target applies and confirms each one on its
  // own) rather than in one batch held whole (consume::Pieces): any, for a
  // target that stores events one at a time anyway (a JetStream stream);
  // an initial snapshot's, for one that applies a transaction atomically.
  // Stdin is read whole.
  consume::Pieces pieces = consume::Pieces::kNever;
  double reconnect_max_s = 60;  // no progress for this long: give up
  // Acks in the log at most this often (and at every idle moment and at
  // exit); 0: after every batch confirmed.
  double ack_interval_s = 1;
  std::string metrics_file;  // empty: none
  // The log's id, as metrics label it (empty: read from `log`).
  std::string log_id;
  double metrics_interval_s = 10;
  // Polled between batches; true ends reading (SIGTERM).
  std::function<bool()> stop = [] { return false; };
  // --stdin: every confirmed event is written here, one per line, in
  // order, so a downstream cdc-ack can follow. Not owned; may be null.
  cli::Output* echo = nullptr;
  // Sleeps between retries (tests pass one that returns at once).
  std::function<void(int64_t ms)> sleep;
  // Called once the source is open, before the first read, with the seq
  // of the first event to be read (e.g. to learn the schemas before it).
  std::function<Status(const consume::Source&)> prepare;
};

// The engine's source: the log as the consumer (the target's applied
// position `applied` winning over its cursor), or stdin.
using SourceOpener = std::function<Result<std::unique_ptr<consume::Source>>(
    std::optional<uint64_t> applied)>;
SourceOpener DefaultSource(const EngineOptions& o, std::string target_name);

class Engine {
 public:
  Engine(EngineOptions o, Target* target, SourceOpener open_source);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Status Run();

  // The seq last acknowledged in the log (tests).
  uint64_t acked() const { return acked_; }

 private:
  // Open with backoff: the target's applied position.
  Result<std::optional<uint64_t>> OpenTarget();
  // `s` OK: OK. Retryable: back off, reopen the target, submit again what
  // it has not confirmed, until that succeeds or time runs out. Else `s`.
  Status Recover(Status s);
  Status Reopen();
  Status Backoff(const Status& s);
  // Reads one batch and submits it; false when nothing was read.
  Result<bool> ReadAndSubmit();
  // Takes answers (waiting up to `wait_ms`), then releases, echoes, acks
  // and writes metrics as confirmed() allows.
  Status Step(int wait_ms);
  void Progress();
  Status Release();
  // The seq up to which the log's events are done: confirmed(), or past
  // the events the source hid when nothing read is unconfirmed.
  uint64_t Done() const;
  Status Ack(bool force);
  void MaybeWriteMetrics(bool force);
  std::unique_ptr<consume::SinkBatch> TakeBatch();

  EngineOptions o_;
  Target* t_;
  SourceOpener open_source_;
  std::unique_ptr<consume::Source> source_;
  // Batches submitted and not wholly confirmed, oldest first, and spent
  // ones kept for reuse.
  std::string metric_labels_;  // log, consumer and the target's own
  std::deque<std::unique_ptr<consume::SinkBatch>> held_;
  std::vector<std::unique_ptr<consume::SinkBatch>> spare_;
  size_t echoed_ = 0;  // events of held_.front() already echoed
  Status input_;       // the source's failure: nothing more is read
  uint64_t acked_ = 0, last_confirmed_ = 0;
  int64_t next_ack_us_ = 0, next_metrics_us_ = 0;
  int64_t failing_since_us_ = 0, delay_ms_ = 100;
  // Since when work is in flight with no answer, and what was confirmed
  // then.
  int64_t quiet_since_us_ = 0;
  uint64_t quiet_confirmed_ = 0, quiet_answers_ = 0;
};

}  // namespace cdc::sink
