// cdc-nats: publishes a cdc log (or NDJSON on stdin) into a NATS
// JetStream stream, exactly once. See cdc-nats(1).

#include "cdc/cli/cli.h"
#include "cdc/consume/reader.h"
#include "cdc/consume/source.h"
#include "cdc/event/renderer.h"
#include "cdc/nats/target.h"
#include "common.h"
#include "runners.h"
#include "sink_flags.h"

namespace cdc::nats_tool {

namespace {

constexpr const char* kProg = "cdc-nats";

struct Options {
  tools::SinkFlags sink;
  std::string log_id;
  std::string servers;
  std::string stream;
  std::string subject = "cdc.{schema}.{table}";
  std::vector<std::string> stream_subjects;
  int replicas = 1;
  std::string duplicate_window = "2m";
  std::string max_bytes;
  std::string format = "native";
  std::string server_name;
  event::DebeziumModeNames modes;
  int max_in_flight = 1024;
  std::string creds;
  std::string tls_ca, tls_cert, tls_key;
  double timeout_s = 10;
};

Status Check(const Options& o) {
  CDC_RETURN_IF_ERROR(tools::CheckSinkFlags(o.sink));
  if (!o.sink.use_stdin && o.sink.log.empty())
    return Status::Usage("--log DIR (or CDC_LOG) is required");
  if (o.sink.use_stdin && o.sink.log.empty() && o.log_id.empty())
    return Status::Usage(
        "--stdin needs --log DIR (for the log's id) or --log-id ID");
  if (!o.log_id.empty() && !o.sink.use_stdin)
    return Status::Usage("--log-id is for --stdin (a log names itself)");
  if (o.sink.use_stdin && o.format != "native")
    return Status::Usage(
        "--stdin publishes the native lines it reads; "
        "--format is for --log");
  if (o.replicas < 1 || o.replicas > 5)
    return Status::Usage("--replicas must be 1 to 5");
  if (o.stream.empty() ||
      o.stream.find_first_of(" \t.*>/\\") != std::string::npos)
    return Status::Usage("--stream \"" + o.stream +
                         "\": a stream name has no spaces, '.', '*', '>', "
                         "'/' or '\\'");
  return nats::CheckSubjectTemplate(o.subject);
}

Status Run(const Options& o) {
  CDC_RETURN_IF_ERROR(Check(o));
  nats::ConnectOptions co;
  CDC_ASSIGN_OR_RETURN(co.servers, nats::ParseServers(o.servers));
  co.creds_file = o.creds;
  nats::CredentialsFromEnvironment(&co);
  co.ca_file = o.tls_ca;
  co.cert_file = o.tls_cert;
  co.key_file = o.tls_key;
  if (co.cert_file.empty() != co.key_file.empty())
    return Status::Usage("--tls-cert and --tls-key go together");
  co.publish_timeout_ms = static_cast<int>(o.timeout_s * 1000);
  co.request_timeout_ms = static_cast<int>(std::min(o.timeout_s, 5.0) * 1000);
  co.max_in_flight = o.max_in_flight;

  nats::StreamOptions so;
  so.name = o.stream;
  if (!o.stream_subjects.empty()) {
    so.subjects = o.stream_subjects;
  } else {
    CDC_ASSIGN_OR_RETURN(so.subjects, nats::StreamSubjectsFor(o.subject));
  }
  so.replicas = o.replicas;
  CDC_ASSIGN_OR_RETURN(so.duplicate_window_us,
                       tools::ParseDuration(o.duplicate_window));
  if (!o.max_bytes.empty()) {
    CDC_ASSIGN_OR_RETURN(uint64_t mb, tools::ParseSize(o.max_bytes));
    so.max_bytes = static_cast<int64_t>(mb);
    so.discard_new = true;
  }

  nats::SinkOptions sk;
  sk.stream = o.stream;
  sk.subject_template = o.subject;
  sk.native_input = o.sink.use_stdin;
  sk.max_pending =
      std::max<size_t>(4 * static_cast<size_t>(o.max_in_flight), o.sink.batch);
  consume::LogSourceInfo src;
  if (!o.sink.log.empty()) {
    CDC_ASSIGN_OR_RETURN(src, consume::ReadLogSourceInfo(o.sink.log));
    sk.log_id = src.info.log_id;
  } else {
    if (o.log_id.find_first_of(" \t\r\n:") != std::string::npos)
      return Status::Usage("--log-id must not hold spaces or ':'");
    sk.log_id = o.log_id;
  }
  event::RenderOptions ro;
  CDC_ASSIGN_OR_RETURN(ro.format, event::ParseFormat(o.format));
  ro.server_name = o.server_name;
  CDC_RETURN_IF_ERROR(event::ApplyDebeziumModes(o.modes, &ro));
  // Capture announces every table before its first change.
  ro.schemas_required = src.captured && !o.sink.use_stdin;
  if (!o.server_name.empty() && ro.format != event::Format::kDebezium)
    return Status::Usage("--server-name needs --format debezium");
  nats::Target target(std::move(co), std::move(so), std::move(sk),
                      event::MakeRenderer(ro, src.info));
  cli::Output out(1);
  sink::EngineOptions e = tools::SinkEngineOptions(o.sink, &out);
  // JetStream stores each message on its own (a reader sees a transaction's
  // messages as they arrive, whatever the batch): a transaction held whole
  // would only cost memory, its size again (an initial snapshot is one).
  e.pieces = consume::Pieces::kAlways;
  if (ro.format == event::Format::kDebezium && !o.sink.use_stdin)
    e.prepare = [&target, &o](const consume::Source& source) {
      return consume::LearnSchemas(
          o.sink.log, source.NextSeq(),
          [&target](std::string_view stored) { target.LearnSchema(stored); });
    };
  sink::Engine engine(e, &target, sink::DefaultSource(e, "stream " + o.stream));
  return engine.Run();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging(kProg);
  CLI::App app{
      "Publish a cdc log into a NATS JetStream stream, exactly once: one "
      "message per event, Nats-Msg-Id <log id>:<seq>.",
      kProg};
  Options o;
  tools::SinkHelp help;
  help.log = "Log directory (with --stdin: only its id)";
  help.stdin_echo =
      "Read NDJSON events on stdin; echo each stored event on stdout";
  help.batch =
      "Events read from the log at a time (whole transactions, a larger one "
      "in pieces of N; default 1000)";
  help.reconnect_max =
      "How long without storing anything (cluster unreachable or without "
      "quorum) before exiting 69 (default 60s)";
  tools::AddSinkFlags(app, &o.sink, help);
  app.add_option("-s,--server", o.servers,
                 "nats://host:port or tls://host:port, comma-separated "
                 "(any servers of the cluster)")
      ->required()
      ->envname("NATS_URL")
      ->type_name("URLS");
  app.add_option("--stream", o.stream,
                 "JetStream stream: used as it is, created when missing")
      ->required()
      ->type_name("NAME");
  app.add_option("--subject", o.subject,
                 "Subject of each event from {schema} {table} (default "
                 "cdc.{schema}.{table})")
      ->type_name("TMPL");
  app.add_option("--stream-subjects", o.stream_subjects,
                 "Subjects of a stream cdc-nats creates (default: the "
                 "--subject prefix, e.g. cdc.>)")
      ->type_name("SUBJ")
      ->delimiter(',');
  app.add_option("--replicas", o.replicas,
                 "Replicas of a stream cdc-nats creates (default 1)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 5));
  app.add_option("--duplicate-window", o.duplicate_window,
                 "Duplicate window of a stream cdc-nats creates (default 2m)")
      ->type_name("DURATION")
      ->check(tools::DurationText());
  app.add_option("--max-bytes", o.max_bytes,
                 "Size limit of a stream cdc-nats creates; a full stream "
                 "refuses new events (exit 74)")
      ->type_name("SIZE")
      ->check(tools::SizeText());
  app.add_option("--log-id", o.log_id,
                 "With --stdin and no --log: the log id for Nats-Msg-Id")
      ->type_name("ID");
  app.add_option("--format", o.format,
                 "Message body: native (default), debezium or cloudevents")
      ->type_name("FMT");
  app.add_option("--server-name", o.server_name,
                 "debezium: source.name (default: the database's name)")
      ->type_name("NAME");
  tools::AddDebeziumModeFlags(app, &o.modes);
  app.add_option("--max-in-flight", o.max_in_flight,
                 "Publishes awaiting the server's answer (default 1024)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 65536));
  app.add_option("--creds", o.creds,
                 "NATS credentials file (else $NATS_CREDS; also "
                 "$NATS_USER/$NATS_PASSWORD or $NATS_TOKEN)")
      ->type_name("FILE");
  app.add_option("--tls-ca", o.tls_ca, "CA certificates to trust (TLS)")
      ->type_name("FILE");
  app.add_option("--tls-cert", o.tls_cert, "Client certificate (TLS)")
      ->type_name("FILE");
  app.add_option("--tls-key", o.tls_key, "Client certificate's key (TLS)")
      ->type_name("FILE");
  app.add_option("--timeout", o.timeout_s,
                 "How long publishes in flight may go without an answer "
                 "(default 10s)")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, /*exclusive=*/true));
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::SetQuiet(o.sink.quiet);
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::nats_tool
