#include "sink_flags.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cdc/base/fs.h"
#include "cdc/cursor/consumers.h"
#include "common.h"

namespace cdc::tools {

void AddSinkFlags(CLI::App& app, SinkFlags* f, const SinkHelp& help) {
  app.add_option("--log", f->log, help.log)
      ->envname("CDC_LOG")
      ->type_name("DIR");
  app.add_option("-c,--consumer", f->consumer, help.consumer)
      ->required()
      ->type_name("NAME");
  app.add_flag("-f,--follow", f->follow, "Wait for new events");
  if (help.with_stdin) app.add_flag("--stdin", f->use_stdin, help.stdin_echo);
  app.add_option("--batch", f->batch, help.batch)
      ->type_name("N")
      ->transform(CountFlag(1, 1000000));
  app.add_option("--metrics-file", f->metrics_file,
                 "Write Prometheus metrics to FILE")
      ->type_name("FILE");
  app.add_option("--metrics-interval", f->metrics_interval_s,
                 "Time between metrics writes (default 10s)")
      ->type_name("DURATION")
      ->transform(DurationFlag(0, /*exclusive=*/true));
  if (help.with_reconnect_max)
    app.add_option("--reconnect-max", f->reconnect_max_s, help.reconnect_max)
        ->type_name("DURATION")
        ->transform(DurationFlag(0));
  app.add_flag("-q,--quiet", f->quiet,
               "Leave out informational messages (warnings and errors still "
               "print)");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);
}

Status CheckSinkFlags(const SinkFlags& f) {
  if (f.use_stdin && f.follow)
    return Status::Usage(
        "-f follows the log; with --stdin the input ends when its writer "
        "closes it");
  return cursor::ValidateConsumerName(f.consumer);
}

sink::EngineOptions SinkEngineOptions(const SinkFlags& f, cli::Output* echo) {
  sink::EngineOptions e;
  e.log = f.log;
  e.consumer = f.consumer;
  e.follow = f.follow;
  e.use_stdin = f.use_stdin;
  e.batch = f.batch;
  e.reconnect_max_s = f.reconnect_max_s;
  e.metrics_file = f.metrics_file;
  e.metrics_interval_s = f.metrics_interval_s;
  e.stop = cli::StopRequested;
  e.echo = f.use_stdin ? echo : nullptr;
  return e;
}

}  // namespace cdc::tools
