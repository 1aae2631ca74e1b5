// cdc-tail: prints events as NDJSON from a position or a consumer's cursor.
#include <fcntl.h>

#include <optional>

#include "cdc/cli/cli.h"
#include "cdc/consume/reader.h"
#include "cdc/event/event.h"
#include "cdc/event/renderer.h"
#include "cdc/event/tx_markers.h"
#include "cdc/log/log_dir.h"
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
  std::vector<std::string> exclude_tables;
  bool schema_changes = false;
  bool watermarks = false;
  std::string ops;
  std::string format = "native";
  bool with_key = false;
  std::string server_name;
  bool tx_markers = false;
  event::DebeziumModeNames modes;
};

// The native format without markers: the stored line as it is, with no
// per-event work beyond the "seq" and "last" it gains.
Status RunNative(const Options& o, consume::Reader& reader, cli::Output& out) {
  int64_t printed = 0;
  consume::Event e;
  for (;;) {
    if (cli::StopRequested()) break;
    CDC_ASSIGN_OR_RETURN(bool got, reader.Next(&e));
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
    if (!out.Flush() || !o.follow || reader.stopped()) break;
    CDC_ASSIGN_OR_RETURN(auto wake, reader.Wait(1000, out.fd()));
    if (wake == log::ChangeWaiter::Wake::kWatchedFd) break;  // reader gone
  }
  out.Flush();
  return out.error();
}

// Another format, or markers: every event read (skipped ones too, which a
// renderer counts within their transaction) goes through the renderer.
Status RunRendered(const Options& o, event::Format format,
                   consume::Reader& reader, cli::Output& out) {
  CDC_ASSIGN_OR_RETURN(consume::LogSourceInfo src,
                       consume::ReadLogSourceInfo(o.log));
  event::RenderOptions ro;
  ro.format = format;
  ro.with_key = o.with_key;
  ro.server_name = o.server_name;
  CDC_RETURN_IF_ERROR(event::ApplyDebeziumModes(o.modes, &ro));
  // Capture announces every table before its first change.
  ro.schemas_required = src.captured;
  auto renderer = event::MakeRenderer(ro, src.info);
  if (format == event::Format::kDebezium)
    CDC_RETURN_IF_ERROR(consume::LearnSchemas(o.log, reader.consumed_seq() + 1,
                                              renderer.get()));
  std::optional<event::TxMarkers> markers;
  if (o.tx_markers) markers.emplace(format, src.info);
  CDC_ASSIGN_OR_RETURN(bool at_start, reader.StartsTransaction());
  renderer->Restart(at_start);
  if (markers) markers->Restart(at_start);
  int64_t printed = 0;
  consume::Event e;
  bool selected = false;
  for (;;) {
    if (cli::StopRequested()) break;
    CDC_ASSIGN_OR_RETURN(bool got, reader.NextConsumed(&e, &selected));
    if (got) {
      std::string* buf = out.buffer();
      if (markers)
        CDC_RETURN_IF_ERROR(markers->Before(e.seq, e.stored, selected, buf));
      if (selected) {
        const size_t before = buf->size();
        CDC_RETURN_IF_ERROR(renderer->Append(e.seq, e.stored, e.last, buf));
        if (buf->size() != before) ++printed;
      } else {
        CDC_RETURN_IF_ERROR(renderer->Skip(e.seq, e.stored, e.last));
      }
      if (markers) markers->After(e.seq, e.last, buf);
      if (printed == o.limit || !out.MaybeFlush()) break;
      continue;
    }
    if (!out.Flush() || !o.follow || reader.stopped()) break;
    CDC_ASSIGN_OR_RETURN(auto wake, reader.Wait(1000, out.fd()));
    if (wake == log::ChangeWaiter::Wake::kWatchedFd) break;  // reader gone
  }
  out.Flush();
  return out.error();
}

Status Run(const Options& o, cli::Output& out) {
  CDC_ASSIGN_OR_RETURN(event::Format format, event::ParseFormat(o.format));
  if (o.with_key && format != event::Format::kDebezium)
    return Status::Usage("--with-key needs --format debezium");
  if (!o.server_name.empty() && format != event::Format::kDebezium)
    return Status::Usage("--server-name needs --format debezium");
  {
    event::RenderOptions check;
    check.format = format;
    CDC_RETURN_IF_ERROR(event::ApplyDebeziumModes(o.modes, &check));
  }
  consume::Options co;
  CDC_ASSIGN_OR_RETURN(co.selection, consume::Selection::Make(
                                         o.log, o.tables, o.ops, o.to,
                                         o.exclude_tables, o.schema_changes));
  co.selection.set_watermarks(o.watermarks);
  co.log_dir = o.log;
  co.consumer = o.consumer;
  co.from = o.from;
  co.follow = o.follow;
  CDC_ASSIGN_OR_RETURN(auto reader, consume::Reader::Open(std::move(co)));
  if (format == event::Format::kNative && !o.tx_markers)
    return RunNative(o, *reader, out);
  return RunRendered(o, format, *reader, out);
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging("cdc-tail");
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
                 "Start at earliest|latest|SEQ|seq:SEQ|lsn:X/Y|time:ISO "
                 "(default earliest)")
      ->type_name("POS");
  app.add_option("--to", o.to,
                 "Stop after this position (inclusive; now: the end when "
                 "cdc-tail started)")
      ->type_name("POS");
  app.add_option("-n,--limit", o.limit, "Stop after N events")
      ->type_name("N")
      ->transform(tools::CountFlag(1, INT64_MAX));
  app.add_option("--table", o.tables,
                 "Only tables matching GLOB (schema.table or table); "
                 "repeatable")
      ->type_name("GLOB");
  app.add_option("--exclude-table", o.exclude_tables,
                 "Leave out tables matching GLOB (as --table); repeatable")
      ->type_name("GLOB");
  app.add_option("--op", o.ops, "Only these operations, e.g. c,u,d")
      ->type_name("OPS");
  app.add_flag("--schema-changes", o.schema_changes,
               "Print schema-change events (op s) too");
  app.add_flag("--watermarks", o.watermarks,
               "Print incremental snapshots' watermarks (op m, prefix "
               "cdc.snapshot) too");
  app.add_option("--format", o.format,
                 "Output format: native (default), debezium or cloudevents")
      ->type_name("FMT");
  app.add_flag("--with-key", o.with_key,
               "debezium: print {\"key\":...,\"value\":...} per event");
  app.add_option("--server-name", o.server_name,
                 "debezium: source.name (Debezium's topic.prefix; default "
                 "the database's name)")
      ->type_name("NAME");
  tools::AddDebeziumModeFlags(app, &o.modes);
  app.add_flag("--tx-markers", o.tx_markers,
               "Print a BEGIN and an END line around each source "
               "transaction, with its event count");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);  // a misspelt key is an error, not ignored
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  // A pipe of 1 MiB (Linux's default limit for unprivileged processes)
  // instead of 64 KiB: a reader as fast as wc or jq then takes each of our
  // writes in one go instead of waking us four times per buffer. Failure
  // (not a pipe, the limit lowered) leaves the pipe as it was.
  if (int size = fcntl(1, F_GETPIPE_SZ); size > 0 && size < (1 << 20))
    (void)fcntl(1, F_SETPIPE_SZ, 1 << 20);
  cli::Output out(1, o.follow ? (1 << 16) : (1 << 18));
  return cli::Report("cdc-tail", Run(o, out));
}

}  // namespace cdc::tail
