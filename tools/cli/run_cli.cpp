// cdc-run: runs a command on each batch of a consumer's events and acks
// only what it finished (exit 0); retries, then stops (or, when asked,
// hands the batch to a dead-letter file). See cdc-run(1). The engine is
// sink::Engine; the command is run::CommandTarget.
#include "cdc/cli/cli.h"
#include "cdc/cursor/consumers.h"
#include "cdc/run/command.h"
#include "cdc/sink/engine.h"
#include "common.h"
#include "runners.h"

namespace cdc::run_tool {

namespace {

constexpr const char* kProg = "cdc-run";

struct Options {
  std::string log, consumer;
  bool follow = false;
  size_t batch = 1;
  std::string timeout;
  int64_t max_retries = -1;
  std::string dead_letter;
  std::string metrics_file;
  double metrics_interval_s = 10;
  bool quiet = false;
  std::vector<std::string> command;
};

Status Run(const Options& o) {
  if (o.log.empty()) return Status::Usage("--log DIR (or CDC_LOG) is required");
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(o.consumer));
  if (o.command.empty() || o.command[0].empty())
    return Status::Usage("no command: cdc-run [OPTIONS] -- COMMAND [ARG...]");
  run::Options ro;
  ro.argv = o.command;
  if (!o.timeout.empty()) {
    auto t = tools::ParseDuration(o.timeout);
    if (!t.ok()) return Status::Usage("--timeout: " + t.status().message());
    ro.timeout_us = *t;
    if (ro.timeout_us <= 0)
      return Status::Usage("--timeout must be more than 0 (e.g. 30s, 5m)");
  }
  ro.max_retries = o.max_retries;
  ro.dead_letter = o.dead_letter;
  ro.log = o.log;
  ro.consumer = o.consumer;
  run::CommandTarget target(std::move(ro));
  sink::EngineOptions e;
  e.log = o.log;
  e.consumer = o.consumer;
  e.follow = o.follow;
  e.batch = o.batch;
  // --max-retries, not time, ends retrying.
  e.reconnect_max_s = 1e9;
  // A run costs a process: an ack after each one costs little, and a
  // restart repeats only the batch in flight.
  e.ack_interval_s = 0;
  e.metrics_file = o.metrics_file;
  e.metrics_interval_s = o.metrics_interval_s;
  e.stop = cli::StopRequested;
  sink::Engine engine(e, &target, sink::DefaultSource(e, target.Name()));
  return engine.Run();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging(kProg);
  CLI::App app{
      "Run COMMAND on each batch of a consumer's events (NDJSON on its "
      "stdin); ack only what it finished with exit status 0.",
      kProg};
  Options o;
  tools::AddLogOption(app, &o.log);
  app.add_option("-c,--consumer", o.consumer,
                 "Consumer name: the log cursor to read and ack")
      ->required()
      ->type_name("NAME");
  app.add_flag("-f,--follow", o.follow, "Wait for new events");
  app.add_option("--batch", o.batch,
                 "Events per run, in whole transactions (default 1: one "
                 "transaction per run)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 1000000));
  app.add_option("--timeout", o.timeout,
                 "Stop a run that takes longer (SIGTERM, then SIGKILL 5 s "
                 "later) and count it as failed: 30s, 5m ...")
      ->type_name("DURATION");
  app.add_option("--max-retries", o.max_retries,
                 "Runs again after a failure before giving up (default: no "
                 "end); then exit 75, or --dead-letter")
      ->type_name("N")
      ->transform(tools::CountFlag(0, 1000000000));
  app.add_option("--dead-letter", o.dead_letter,
                 "After --max-retries, append the batch to FILE and go on "
                 "(skipping it) instead of stopping")
      ->type_name("FILE");
  app.add_option("--metrics-file", o.metrics_file,
                 "Write Prometheus metrics to FILE")
      ->type_name("FILE");
  app.add_option("--metrics-interval", o.metrics_interval_s,
                 "Seconds between metrics writes (default 10)")
      ->check(tools::DurationFlag(0, /*exclusive=*/true));
  app.add_flag("-q,--quiet", o.quiet, "Only errors on stderr");
  app.add_option("command", o.command, "COMMAND [ARG...] after --")
      ->required()
      ->type_name("COMMAND");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::SetQuiet(o.quiet);
  if (!o.dead_letter.empty() && o.max_retries < 0)
    return cli::Report(
        kProg, Status::Usage("--dead-letter needs --max-retries N (how many "
                             "runs again before a batch is skipped)"));
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::run_tool
