// A command as a sink::Target, for cdc-run: each batch (whole
// transactions) is written as native NDJSON to a fresh run of the command
// on its stdin, and is confirmed only when the command exits 0. A command
// that fails is run again with the same batch (the engine's backoff: 100
// ms doubling to 5 s), up to max_retries times; then the batch goes to the
// dead-letter file if there is one, else the sink stops (Busy, exit 75)
// with nothing past the batch acknowledged. Never skips in silence.
//
// The command's environment gains CDC_SEQ_FIRST and CDC_SEQ_LAST (the
// batch's seqs), CDC_ATTEMPT (1 for the first run of a batch), and
// CDC_LOG and CDC_CONSUMER. Its stdout and stderr are cdc-run's. A run
// that outlives `timeout` is sent SIGTERM, then SIGKILL 5 s later, and
// counts as a failure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cdc/sink/target.h"

namespace cdc::run {

struct Options {
  std::vector<std::string> argv;  // the command and its arguments
  int64_t timeout_us = 0;         // 0: none
  int64_t max_retries = -1;       // runs after the first failure; -1: no end
  std::string dead_letter;        // empty: stop instead of skipping
  std::string log, consumer;      // for the environment
};

struct Stats {
  uint64_t runs = 0, failures = 0, events = 0, batches = 0;
  uint64_t dead_lettered = 0;  // events handed to the dead-letter file
};

class CommandTarget final : public sink::Target {
 public:
  explicit CommandTarget(Options o);

  // The command keeps no position: the consumer's cursor is where to
  // start (nullopt).
  Result<std::optional<uint64_t>> Open() override;
  bool HasRoom() const override { return true; }
  // Runs the command on `b` and waits for it.
  Status Submit(const consume::SinkBatch& b) override;
  Status Poll(int) override { return Status::OK(); }
  uint64_t confirmed() const override { return confirmed_; }
  size_t in_flight() const override { return 0; }
  void Metrics(Exposition* e) const override;
  std::string Name() const override { return "command " + o_.argv.at(0); }
  std::string MetricPrefix() const override { return "cdc_run_"; }

  const Stats& stats() const { return m_; }

 private:
  // One run on `input`: OK for exit 0, else why not.
  Status RunOnce(const std::string& input, uint64_t first, uint64_t last);
  Status DeadLetter(const std::string& input, uint64_t first, uint64_t last,
                    const Status& why);

  Options o_;
  uint64_t confirmed_ = 0;
  uint64_t failing_first_ = 0;  // the batch failing, by its first seq
  int64_t attempts_ = 0;        // its failed runs so far
  std::string input_;
  Stats m_;
};

}  // namespace cdc::run
