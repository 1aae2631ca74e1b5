// cdc-redis: applies a cdc log (or NDJSON on stdin) to Redis, effectively
// once: streams per table or a hash per row. See cdc-redis(1). The engine
// is sink::Engine; Redis is redis::Target.

#include <cstdlib>

#include "cdc/cli/cli.h"
#include "cdc/redis/target.h"
#include "common.h"
#include "runners.h"
#include "sink_flags.h"

namespace cdc::redis_tool {

namespace {

constexpr const char* kProg = "cdc-redis";

struct Options {
  tools::SinkFlags sink;
  std::string url;
  std::string mode;
  std::string prefix = "cdc:";
  std::string key_template;
  uint64_t maxlen = 0;
  std::string password_file;
  double timeout_s = 60;
};

Result<std::string> ReadPassword(const std::string& file) {
  if (!file.empty()) return tools::ReadPasswordFile(file);
  const char* env = std::getenv("REDISCLI_AUTH");
  return std::string(env ? env : "");
}

Status Check(const Options& o) {
  if (o.mode != "stream" && o.mode != "hash")
    return Status::Usage("--mode must be stream or hash, not \"" + o.mode +
                         "\"");
  CDC_RETURN_IF_ERROR(tools::CheckSinkFlags(o.sink));
  if (!o.sink.use_stdin && o.sink.log.empty())
    return Status::Usage("--log DIR (or CDC_LOG) is required, unless --stdin");
  if (o.maxlen > 0 && o.mode != "stream")
    return Status::Usage("--maxlen is for --mode stream");
  if (o.prefix.find_first_of("{}") != std::string::npos)
    return Status::Usage("--prefix must not contain '{' or '}'");
  return Status::OK();
}

Status Run(const Options& o) {
  CDC_RETURN_IF_ERROR(Check(o));
  redis::SinkOptions so;
  so.mode = o.mode == "stream" ? redis::Mode::kStream : redis::Mode::kHash;
  so.prefix = o.prefix;
  so.key_template = o.key_template;
  so.maxlen = o.maxlen;
  so.consumer = o.sink.consumer;
  if (!o.key_template.empty())
    CDC_RETURN_IF_ERROR(redis::CheckTemplate(so.mode, o.key_template));
  redis::ConnectOptions co;
  CDC_ASSIGN_OR_RETURN(co.endpoint, redis::ParseUrl(o.url));
  CDC_ASSIGN_OR_RETURN(co.password, ReadPassword(o.password_file));
  co.connect_timeout_ms = static_cast<int>(std::min(o.timeout_s, 10.0) * 1000);
  co.io_timeout_ms = static_cast<int>(o.timeout_s * 1000);
  redis::Target target(std::move(co), std::move(so));
  cli::Output out(1);
  sink::EngineOptions e = tools::SinkEngineOptions(o.sink, &out);
  // A transaction is one MULTI, but an initial snapshot (one transaction
  // in the log) is a copy of tables: in MULTIs of --batch, or it is held
  // whole here and queued whole in Redis.
  e.pieces = consume::Pieces::kSnapshots;
  sink::Engine engine(e, &target, sink::DefaultSource(e, "Redis"));
  return engine.Run();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging(kProg);
  CLI::App app{
      "Apply a cdc log to Redis, effectively once: one stream per table "
      "(--mode stream) or one hash per row (--mode hash).",
      kProg};
  Options o;
  tools::SinkHelp help;
  help.consumer =
      "Consumer name: the log cursor to read and ack, and the applied seq "
      "key in Redis";
  help.batch =
      "Events per MULTI/EXEC (whole transactions, an initial snapshot in "
      "pieces of N; default 1000)";
  help.reconnect_max =
      "How long to keep reconnecting before exiting 69 (default 60s)";
  tools::AddSinkFlags(app, &o.sink, help);
  app.add_option("--redis", o.url,
                 "redis://[user@]host[:port][/db] or unix:///path[?db=N]; "
                 "password from REDISCLI_AUTH or --password-file")
      ->required()
      ->type_name("URL");
  app.add_option("--mode", o.mode,
                 "stream (XADD per table) or hash (a hash per row)")
      ->required()
      ->type_name("MODE");
  app.add_option("--prefix", o.prefix, "Prefix of every key (default cdc:)")
      ->type_name("STR");
  app.add_option("--key-template", o.key_template,
                 "Key of a stream or row hash from {prefix} {schema} {table} "
                 "{key} (names escaped: '.' is %2E ...) or {schema_raw} "
                 "{table_raw} (as they are)")
      ->type_name("TMPL");
  app.add_option("--maxlen", o.maxlen,
                 "Stream mode: trim each stream to about N entries (MAXLEN ~)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, UINT64_MAX));
  app.add_option("--password-file", o.password_file,
                 "Read the Redis password from FILE (else REDISCLI_AUTH)")
      ->type_name("FILE");
  app.add_option("--timeout", o.timeout_s,
                 "How long to wait for Redis to answer (default 60s)")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, /*exclusive=*/true));
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::SetQuiet(o.sink.quiet);
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::redis_tool
