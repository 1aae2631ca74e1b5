// The flags every sink takes (cdc-redis, cdc-nats, and the ones after
// them), and their mapping to sink::EngineOptions. A sink's runner adds
// these, then its own target's flags.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cdc/base/status.h"
#include "cdc/cli/cli.h"
#include "cdc/sink/engine.h"

namespace cdc::tools {

struct SinkFlags {
  std::string log;
  std::string consumer;
  bool follow = false;
  bool use_stdin = false;
  size_t batch = 1000;
  std::string metrics_file;
  double metrics_interval_s = 10;
  double reconnect_max_s = 60;
  bool quiet = false;
};

// The help texts that differ from one sink to another.
struct SinkHelp {
  const char* log = "Log directory (not with --stdin)";
  const char* consumer = "Consumer name: the log cursor to read and ack";
  const char* stdin_echo =
      "Read NDJSON events on stdin; echo each applied event on stdout";
  const char* batch = "Events per batch (whole transactions; default 1000)";
  const char* reconnect_max =
      "Seconds without progress (server unreachable) before exiting 69 "
      "(default 60)";
  // cdc-run has neither: it reads the log only, and counts retries.
  bool with_stdin = true;
  bool with_reconnect_max = true;
};

// --log, -c, -f, --stdin, --batch, --metrics-file, --metrics-interval,
// --reconnect-max, -q and --config.
void AddSinkFlags(CLI::App& app, SinkFlags* f, const SinkHelp& help);
// -f with --stdin, a bad consumer name: usage errors every sink shares.
Status CheckSinkFlags(const SinkFlags& f);
// The engine's options; `echo` receives confirmed events with --stdin.
sink::EngineOptions SinkEngineOptions(const SinkFlags& f, cli::Output* echo);

}  // namespace cdc::tools
