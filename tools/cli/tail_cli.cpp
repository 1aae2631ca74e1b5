// cdc-tail: prints events as NDJSON from a position or a consumer's cursor.
#include "cdc/cli/cli.h"
#include "cdc/consume/reader.h"
#include "cdc/event/event.h"
#include "common.h"
#include "runners.h"

namespace cdc::tail {

namespace {

// Events this large are written out without a copy in the output buffer.
constexpr size_t kLargeLine = 1 << 16;

struct Options {
  std::string log;
  std::string consumer;
  bool follow = false;
  std::string from;
  std::string to;
  int64_t limit = -1;
  std::vector<std::string> tables;
  std::string ops;
  std::string format = "native";
};

Status Run(const Options& o, cli::Output& out) {
  if (o.format != "native")
    return Status::Usage("--format " + o.format +
                         " is not available in this version (use native)");
  consume::Options co;
  CDC_ASSIGN_OR_RETURN(co.selection,
                       consume::Selection::Make(o.log, o.tables, o.ops, o.to));
  co.log_dir = o.log;
  co.consumer = o.consumer;
  co.from = o.from;
  co.follow = o.follow;
  CDC_ASSIGN_OR_RETURN(auto reader, consume::Reader::Open(std::move(co)));
  int64_t printed = 0;
  consume::Event e;
  for (;;) {
    if (cli::StopRequested()) break;
    CDC_ASSIGN_OR_RETURN(bool got, reader->Next(&e));
    if (got) {
      if (e.stored.size() < kLargeLine) {
        event::AppendNative(e.seq, e.stored, e.last, out.buffer());
      } else {
        // Written from the frame, not copied into the output buffer: a
        // large event is then in memory once (plus its compressed form
        // while it is decompressed).
        char scratch[32];
        auto p = event::SplitNative(e.seq, e.stored, e.last, scratch);
        (void)(out.Write(p.head) && out.Write(p.body) && out.Write(p.tail));
      }
      if (++printed == o.limit || !out.MaybeFlush()) break;
      continue;
    }
    if (!out.Flush() || !o.follow || reader->stopped()) break;
    CDC_ASSIGN_OR_RETURN(auto wake, reader->Wait(1000, out.fd()));
    if (wake == log::ChangeWaiter::Wake::kWatchedFd) break;  // reader gone
  }
  out.Flush();
  return out.error();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::ReturnLargeBuffers();
  CLI::App app{
      "Print events from a cdc log as NDJSON, from a position or a named "
      "consumer's cursor; -f keeps following new events.",
      "cdc-tail"};
  Options o;
  tools::AddLogOption(app, &o.log);
  app.add_option("-c,--consumer", o.consumer,
                 "Start after this consumer's cursor (created at --from or "
                 "the earliest event when new). Never moves the cursor.")
      ->type_name("NAME");
  app.add_flag("-f,--follow", o.follow, "Wait for new events");
  app.add_option("--from", o.from,
                 "Start at earliest|latest|SEQ|lsn:X/Y|time:ISO "
                 "(default earliest)")
      ->type_name("POS");
  app.add_option("--to", o.to, "Stop after this position (inclusive)")
      ->type_name("POS");
  app.add_option("-n,--limit", o.limit, "Stop after N events")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_option("--table", o.tables,
                 "Only tables matching GLOB (schema.table or table); "
                 "repeatable")
      ->type_name("GLOB");
  app.add_option("--op", o.ops, "Only these operations, e.g. c,u,d")
      ->type_name("OPS");
  app.add_option("--format", o.format, "Output format: native")
      ->type_name("FMT");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);  // a misspelt key is an error, not ignored
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::Output out(1, o.follow ? (1 << 16) : (1 << 18));
  return cli::Report("cdc-tail", Run(o, out));
}

}  // namespace cdc::tail
