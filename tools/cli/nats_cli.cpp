// cdc-nats: publishes a cdc log (or NDJSON on stdin) into a NATS
// JetStream stream, exactly once. See cdc-nats(1).
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <thread>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/consume/reader.h"
#include "cdc/consume/source.h"
#include "cdc/cursor/consumers.h"
#include "cdc/event/renderer.h"
#include "cdc/log/log_dir.h"
#include "cdc/nats/client.h"
#include "cdc/nats/sink.h"
#include "common.h"
#include "runners.h"

namespace cdc::nats_tool {

namespace {

constexpr const char* kProg = "cdc-nats";

struct Options {
  std::string log;
  std::string log_id;
  std::string consumer;
  std::string servers;
  std::string stream;
  std::string subject = "cdc.{schema}.{table}";
  std::vector<std::string> stream_subjects;
  int replicas = 1;
  std::string duplicate_window = "2m";
  std::string max_bytes;
  bool follow = false;
  bool use_stdin = false;
  std::string format = "native";
  std::string server_name;
  size_t batch = 1000;
  int max_in_flight = 1024;
  std::string creds;
  std::string tls_ca, tls_cert, tls_key;
  std::string metrics_file;
  double metrics_interval_s = 10;
  double reconnect_max_s = 60;
  double timeout_s = 10;
  bool quiet = false;
};

std::string Render(const nats::SinkStats& s, uint64_t reconnects,
                   uint64_t acked, size_t pending, uint64_t lag) {
  std::string o;
  auto add = [&](const char* name, const char* type, const char* help,
                 uint64_t v) {
    o += std::string("# HELP cdc_nats_") + name + " " + help + "\n";
    o += std::string("# TYPE cdc_nats_") + name + " " + type + "\n";
    o += std::string("cdc_nats_") + name + " " + std::to_string(v) + "\n";
  };
  add("events_published_total", "counter",
      "Events the stream stored (publish acknowledged).", s.published);
  add("duplicates_total", "counter",
      "Publishes the server already held (duplicate window).", s.duplicates);
  add("refused_total", "counter",
      "Publishes refused by the expected-last-sequence check.", s.refused);
  add("resyncs_total", "counter",
      "Times the stream's last message was read again after a failure.",
      s.resyncs);
  add("reconnects_total", "counter", "Reconnections to the cluster.",
      reconnects);
  add("acked_seq", "gauge", "Seq up to which every event is stored.", acked);
  add("pending_events", "gauge", "Events read but not yet stored.", pending);
  add("lag_events", "gauge", "Committed events in the log not yet stored.",
      lag);
  return o;
}

class Runner {
 public:
  Runner(const Options& o, nats::ConnectOptions co, nats::StreamOptions so,
         nats::SinkOptions sk, std::unique_ptr<event::Renderer> r)
      : o_(o),
        co_(std::move(co)),
        so_(std::move(so)),
        sink_(std::move(sk), std::move(r)) {}

  Status Run();

 private:
  Status Connect();
  // Sleeps before the next attempt after `s` (Unavailable): 100 ms doubling
  // up to 5 s; the failure is returned once nothing was stored for
  // --reconnect-max seconds.
  Status Backoff(const Status& s);
  Status Step(bool read_more, bool* read);
  Status Ack(bool force);
  void Echo();
  void MaybeWriteMetrics(bool force);
  void Progress() {
    if (sink_.acked_seq() != last_acked_ || sink_.pending() == 0) {
      last_acked_ = sink_.acked_seq();
      stalled_since_us_ = 0;
      delay_ms_ = 100;
    }
  }

  const Options& o_;
  nats::ConnectOptions co_;
  nats::StreamOptions so_;
  nats::Sink sink_;
  std::unique_ptr<nats::Client> client_;
  std::unique_ptr<consume::Source> source_;
  consume::SinkBatch batch_;
  std::deque<std::pair<uint64_t, std::string>> echo_;
  Status bad_input_;  // the source's failure: nothing more is read
  uint64_t acked_ = 0, last_acked_ = 0, refused_seen_ = 0;
  int64_t next_ack_us_ = 0, next_metrics_us_ = 0;
  int64_t stalled_since_us_ = 0, delay_ms_ = 100;
  cli::Output out_{1};
};

Status Runner::Backoff(const Status& s) {
  const int64_t now = MonoMicros();
  if (stalled_since_us_ == 0) stalled_since_us_ = now;
  if (now - stalled_since_us_ >=
          static_cast<int64_t>(o_.reconnect_max_s * 1e6) ||
      cli::StopRequested())
    return s.Annotate("gave up after " +
                      std::to_string(static_cast<int>(o_.reconnect_max_s)) +
                      " s");
  if (!o_.quiet)
    fprintf(stderr, "%s: %s; retrying in %lld ms\n", kProg,
            cli::EscapeForTerminal(s.message()).c_str(),
            static_cast<long long>(delay_ms_));
  for (int64_t slept = 0; slept < delay_ms_ && !cli::StopRequested();
       slept += 50)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  delay_ms_ = std::min<int64_t>(delay_ms_ * 2, 5000);
  return Status::OK();
}

Status Runner::Connect() {
  for (;;) {
    Status s;
    auto c = nats::Client::Open(co_);
    if (c.ok()) {
      auto end = (*c)->EnsureStream(so_);
      if (end.ok()) {
        if (end->created && !o_.quiet)
          fprintf(stderr, "%s: created stream %s (%d replicas)\n", kProg,
                  so_.name.c_str(), so_.replicas);
        client_ = std::move(*c);
        return Status::OK();
      }
      s = end.status();
    } else {
      s = c.status();
    }
    if (s.code() != Code::kUnavailable) return s;
    CDC_RETURN_IF_ERROR(Backoff(s));
  }
}

Status Runner::Ack(bool force) {
  if (o_.use_stdin || sink_.acked_seq() <= acked_) return Status::OK();
  int64_t now = MonoMicros();
  if (!force && now < next_ack_us_) return Status::OK();
  next_ack_us_ = now + 1000000;
  CDC_RETURN_IF_ERROR(source_->Ack(sink_.acked_seq()));
  acked_ = sink_.acked_seq();
  return Status::OK();
}

void Runner::Echo() {
  while (!echo_.empty() && echo_.front().first <= sink_.acked_seq()) {
    out_.buffer()->append(echo_.front().second);
    out_.buffer()->push_back('\n');
    echo_.pop_front();
    if (!out_.MaybeFlush()) break;
  }
  out_.Flush();
}

void Runner::MaybeWriteMetrics(bool force) {
  if (o_.metrics_file.empty()) return;
  int64_t now = MonoMicros();
  if (!force && now < next_metrics_us_) return;
  next_metrics_us_ = now + static_cast<int64_t>(o_.metrics_interval_s * 1e6);
  uint64_t lag = 0;
  auto last = source_ ? source_->LastSeq() : Result<uint64_t>(uint64_t{0});
  if (last.ok() && *last > sink_.acked_seq()) lag = *last - sink_.acked_seq();
  Status s =
      WriteFileAtomic(o_.metrics_file,
                      Render(sink_.stats(), client_ ? client_->reconnects() : 0,
                             sink_.acked_seq(), sink_.pending(), lag),
                      0644);
  if (!s.ok() && !o_.quiet)
    fprintf(stderr, "%s: warning: %s\n", kProg,
            cli::EscapeForTerminal(s.message()).c_str());
}

// One round: read more events when there is room, publish, take answers.
Status Runner::Step(bool read_more, bool* read) {
  bool got = false;
  *read = false;
  if (read_more && sink_.has_room() && !sink_.failing() && bad_input_.ok()) {
    batch_.clear();
    auto filled = source_->Fill(&batch_, o_.batch);
    // Bad input: reading stops there, and what came before it is still
    // published, echoed and acknowledged before the failure is returned.
    if (!filled.ok()) bad_input_ = filled.status();
    got = filled.ok() && *filled;
    *read = got;
    if (got) {
      batch_.Seal();
      // Events the stream already holds are echoed too (at once), so that
      // an ack downstream moves past them, as with cdc-redis --stdin.
      if (o_.use_stdin)
        for (const consume::Event& e : batch_.events)
          echo_.emplace_back(e.seq, std::string(e.stored));
      CDC_RETURN_IF_ERROR(sink_.Add(*client_, batch_.events));
    }
  }
  Status s = sink_.Poll(*client_, got ? 0 : 100);
  if (sink_.stats().refused > refused_seen_ && !o_.quiet)
    fprintf(
        stderr,
        "%s: warning: stream %s moved under this sink: %llu publishes "
        "refused by the expected-last-sequence check (another cdc-nats "
        "publishing this log to it?); resumed after seq %llu\n",
        kProg, so_.name.c_str(),
        static_cast<unsigned long long>(sink_.stats().refused - refused_seen_),
        static_cast<unsigned long long>(sink_.acked_seq()));
  refused_seen_ = sink_.stats().refused;
  Progress();
  if (!s.ok()) {
    if (s.code() != Code::kUnavailable) return s;
    CDC_RETURN_IF_ERROR(Backoff(s));
  } else if (sink_.pending() > 0) {
    if (stalled_since_us_ == 0) stalled_since_us_ = MonoMicros();
    if (MonoMicros() - stalled_since_us_ >=
        static_cast<int64_t>(o_.reconnect_max_s * 1e6))
      return Status::Unavailable(
          "stream " + so_.name + ": nothing stored for " +
          std::to_string(static_cast<int>(o_.reconnect_max_s)) +
          " s (is the cluster down or without quorum?)");
  }
  Echo();
  if (out_.closed()) return Status::OK();
  CDC_RETURN_IF_ERROR(out_.error());
  CDC_RETURN_IF_ERROR(Ack(false));
  MaybeWriteMetrics(false);
  return Status::OK();
}

Status Runner::Run() {
  CDC_RETURN_IF_ERROR(Connect());
  std::optional<uint64_t> applied;
  for (;;) {
    auto r = sink_.Resume(*client_);
    if (r.ok()) {
      applied = *r;
      break;
    }
    if (r.status().code() != Code::kUnavailable) return r.status();
    CDC_RETURN_IF_ERROR(Backoff(r.status()));
  }
  last_acked_ = sink_.acked_seq();
  if (o_.use_stdin) {
    source_ = consume::OpenStdinSource();
  } else {
    CDC_ASSIGN_OR_RETURN(
        source_, consume::OpenLogSource(o_.log, o_.consumer, applied, o_.follow,
                                        "stream " + so_.name));
    acked_ = applied.value_or(0);
    if (o_.format == "debezium")
      CDC_RETURN_IF_ERROR(consume::LearnSchemas(
          o_.log, source_->NextSeq(),
          [this](std::string_view stored) { sink_.LearnSchema(stored); }));
  }
  Status result;
  bool eof = false;
  while (!cli::StopRequested() && !out_.closed()) {
    bool read = false;
    result = Step(!eof, &read);
    if (!result.ok() || !bad_input_.ok()) break;
    if (read || sink_.pending() > 0) continue;
    // Everything read is stored: wait for more input.
    (void)Ack(true);
    MaybeWriteMetrics(false);
    if (eof || (!o_.follow && !o_.use_stdin)) break;
    auto more = source_->Wait(1000);
    if (!more.ok()) {
      result = more.status();
      break;
    }
    if (!*more) eof = true;  // stdin at EOF: publish what is left
  }
  // SIGTERM, the end of the input, or a failure: what is in flight is
  // answered first, so the ack below covers every event stored.
  while (result.ok() && sink_.pending() > 0 && !out_.closed()) {
    bool read = false;
    result = Step(false, &read);
  }
  // After a failure too, every event stored in order is echoed: a cdc-ack
  // downstream must move past what the stream holds.
  Echo();
  Status acked = Ack(true);
  MaybeWriteMetrics(true);
  if (result.ok()) result = bad_input_;
  return result.ok() ? acked : result;
}

Status Check(const Options& o) {
  if (o.use_stdin && o.follow)
    return Status::Usage(
        "-f follows the log; with --stdin the input ends when its writer "
        "closes it");
  if (!o.use_stdin && o.log.empty())
    return Status::Usage("--log DIR (or CDC_LOG) is required");
  if (o.use_stdin && o.log.empty() && o.log_id.empty())
    return Status::Usage(
        "--stdin needs --log DIR (for the log's id) or --log-id ID");
  if (!o.log_id.empty() && !o.use_stdin)
    return Status::Usage("--log-id is for --stdin (a log names itself)");
  if (o.use_stdin && o.format != "native")
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
  CDC_RETURN_IF_ERROR(nats::CheckSubjectTemplate(o.subject));
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(o.consumer));
  return Status::OK();
}

// The stream's subjects when cdc-nats creates it: --stream-subjects, else
// the literal tokens before the template's first field, then ">".
Result<std::vector<std::string>> StreamSubjects(const Options& o) {
  if (!o.stream_subjects.empty()) return o.stream_subjects;
  size_t brace = o.subject.find('{');
  size_t dot = o.subject.rfind('.', brace);
  if (dot == std::string::npos || brace == std::string::npos)
    return Status::Usage("--subject \"" + o.subject +
                         "\" starts with a field: name the stream's "
                         "subjects with --stream-subjects");
  return std::vector<std::string>{o.subject.substr(0, dot + 1) + ">"};
}

Status Run(const Options& o) {
  CDC_RETURN_IF_ERROR(Check(o));
  nats::ConnectOptions co;
  CDC_ASSIGN_OR_RETURN(co.servers, nats::ParseServers(o.servers));
  co.creds_file = o.creds;
  if (co.creds_file.empty())
    if (const char* e = std::getenv("NATS_CREDS")) co.creds_file = e;
  if (const char* e = std::getenv("NATS_USER")) co.user = e;
  if (const char* e = std::getenv("NATS_PASSWORD")) co.password = e;
  if (const char* e = std::getenv("NATS_TOKEN")) co.token = e;
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
  CDC_ASSIGN_OR_RETURN(so.subjects, StreamSubjects(o));
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
  sk.native_input = o.use_stdin;
  sk.max_pending =
      std::max<size_t>(4 * static_cast<size_t>(o.max_in_flight), o.batch);
  event::SourceInfo src;
  bool captured = false;  // a log cdc-capture writes
  if (!o.log.empty()) {
    CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(o.log));
    sk.log_id = id.log_id;
    src.log_id = id.log_id;
    captured = id.source.has_value();
    if (id.source) {
      src.system_id = id.source->system_id;
      src.database = id.source->database;
      src.slot = id.source->slot;
    }
  } else {
    if (o.log_id.find_first_of(" \t\r\n:") != std::string::npos)
      return Status::Usage("--log-id must not hold spaces or ':'");
    sk.log_id = o.log_id;
  }
  event::RenderOptions ro;
  CDC_ASSIGN_OR_RETURN(ro.format, event::ParseFormat(o.format));
  ro.server_name = o.server_name;
  // Capture announces every table before its first change.
  ro.schemas_required = captured && !o.use_stdin;
  if (!o.server_name.empty() && ro.format != event::Format::kDebezium)
    return Status::Usage("--server-name needs --format debezium");
  Runner r(o, std::move(co), std::move(so), std::move(sk),
           event::MakeRenderer(ro, src));
  return r.Run();
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
  app.add_option("--log", o.log, "Log directory (with --stdin: only its id)")
      ->envname("CDC_LOG")
      ->type_name("DIR");
  app.add_option("-c,--consumer", o.consumer,
                 "Consumer name: the log cursor to read and ack")
      ->required()
      ->type_name("NAME");
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
      ->type_name("DURATION");
  app.add_option("--max-bytes", o.max_bytes,
                 "Size limit of a stream cdc-nats creates; a full stream "
                 "refuses new events (exit 74)")
      ->type_name("SIZE");
  app.add_flag("-f,--follow", o.follow, "Wait for new events");
  app.add_flag("--stdin", o.use_stdin,
               "Read NDJSON events on stdin; echo each stored event on "
               "stdout");
  app.add_option("--log-id", o.log_id,
                 "With --stdin and no --log: the log id for Nats-Msg-Id")
      ->type_name("ID");
  app.add_option("--format", o.format,
                 "Message body: native (default), debezium or cloudevents")
      ->type_name("FMT");
  app.add_option("--server-name", o.server_name,
                 "debezium: source.name (default: the database's name)")
      ->type_name("NAME");
  app.add_option("--batch", o.batch,
                 "Events read from the log at a time (whole transactions; "
                 "default 1000)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 1000000));
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
  app.add_option("--metrics-file", o.metrics_file,
                 "Write Prometheus metrics to FILE")
      ->type_name("FILE");
  app.add_option("--metrics-interval", o.metrics_interval_s,
                 "Seconds between metrics writes (default 10)")
      ->check(tools::DurationFlag(0, /*exclusive=*/true));
  app.add_option("--reconnect-max", o.reconnect_max_s,
                 "Seconds without storing anything (cluster unreachable or "
                 "without quorum) before exiting 69 (default 60)")
      ->check(tools::DurationFlag(0));
  app.add_option("--timeout", o.timeout_s,
                 "Seconds publishes in flight may go without an answer "
                 "(default 10)")
      ->check(tools::DurationFlag(0, /*exclusive=*/true));
  app.add_flag("-q,--quiet", o.quiet, "Only errors on stderr");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::nats_tool
