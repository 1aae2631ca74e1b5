// cdc-run: runs a command on each batch of a consumer's events and acks
// only what it finished (exit 0); retries, then stops (or, when asked,
// hands the batch to a dead-letter file). See cdc-run(1). The engine is
// sink::Engine; the command is run::CommandTarget.
#include "cdc/cli/cli.h"
#include "cdc/run/command.h"
#include "cdc/sink/engine.h"
#include "common.h"
#include "runners.h"
#include "sink_flags.h"

namespace cdc::run_tool {

namespace {

constexpr const char* kProg = "cdc-run";

struct Options {
  tools::SinkFlags sink;
  std::string timeout;
  int64_t max_retries = -1;
  std::string dead_letter;
  std::vector<std::string> command;
};

Status Run(const Options& o) {
  if (o.sink.log.empty())
    return Status::Usage("--log DIR (or CDC_LOG) is required");
  CDC_RETURN_IF_ERROR(tools::CheckSinkFlags(o.sink));
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
  ro.log = o.sink.log;
  ro.consumer = o.sink.consumer;
  run::CommandTarget target(std::move(ro));
  sink::EngineOptions e = tools::SinkEngineOptions(o.sink, nullptr);
  // --max-retries, not time, ends retrying; a run costs a process, so an
  // ack after each one costs little, and a restart repeats only the batch
  // in flight.
  e.reconnect_max_s = 1e9;
  e.ack_interval_s = 0;
  // The events cdc-tail -c NAME prints: no schema changes unless the
  // consumer's stored selection asks for them.
  e.schema_changes = false;
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
  o.sink.batch = 1;
  tools::SinkHelp help;
  help.batch =
      "Events per run, in whole transactions (default 1: one transaction "
      "per run)";
  help.log = "Log directory";
  help.with_stdin = false;
  help.with_reconnect_max = false;
  tools::AddSinkFlags(app, &o.sink, help);
  app.add_option("--timeout", o.timeout,
                 "Stop a run that takes longer (SIGTERM, then SIGKILL 5 s "
                 "later) and count it as failed: 30s, 5m ...")
      ->type_name("DURATION")
      ->check(tools::DurationText());
  app.add_option("--max-retries", o.max_retries,
                 "Runs again after a failure before giving up (default: no "
                 "end); then exit 75, or --dead-letter")
      ->type_name("N")
      ->transform(tools::CountFlag(0, 1000000000));
  app.add_option("--dead-letter", o.dead_letter,
                 "After --max-retries, append the batch to FILE and go on "
                 "(skipping it) instead of stopping")
      ->type_name("FILE");
  app.add_option("command", o.command, "COMMAND [ARG...] after --")
      ->required()
      ->type_name("COMMAND");
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::SetQuiet(o.sink.quiet);
  if (!o.dead_letter.empty() && o.max_retries < 0)
    return cli::Report(
        kProg, Status::Usage("--dead-letter needs --max-retries N (how many "
                             "runs again before a batch is skipped)"));
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::run_tool
