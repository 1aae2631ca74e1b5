// cdc-redis: applies a cdc log (or NDJSON on stdin) to Redis, effectively
// once: streams per table or a hash per row. See cdc-redis(1).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/consume/source.h"
#include "cdc/cursor/consumers.h"
#include "cdc/redis/client.h"
#include "cdc/redis/sink.h"
#include "common.h"
#include "runners.h"

namespace cdc::redis_tool {

namespace {

constexpr const char* kProg = "cdc-redis";

struct Options {
  std::string log;
  std::string consumer;
  std::string url;
  std::string mode;
  bool follow = false;
  bool use_stdin = false;
  std::string prefix = "cdc:";
  std::string key_template;
  uint64_t maxlen = 0;
  size_t batch = 1000;
  std::string password_file;
  std::string metrics_file;
  double metrics_interval_s = 10;
  double reconnect_max_s = 60;
  double timeout_s = 60;
  bool quiet = false;
};

struct Metrics {
  uint64_t events = 0, batches = 0, already = 0, ignored = 0, unkeyed = 0;
  uint64_t duplicates = 0, reconnects = 0, applied_seq = 0, lag = 0;
};

std::string Render(const Metrics& m) {
  std::string o;
  auto add = [&](const char* name, const char* type, const char* help,
                 uint64_t v) {
    o += std::string("# HELP cdc_redis_") + name + " " + help + "\n";
    o += std::string("# TYPE cdc_redis_") + name + " " + type + "\n";
    o += std::string("cdc_redis_") + name + " " + std::to_string(v) + "\n";
  };
  add("events_applied_total", "counter", "Events written to Redis.", m.events);
  add("batches_total", "counter", "MULTI/EXEC batches confirmed.", m.batches);
  add("events_already_applied_total", "counter",
      "Events skipped because Redis already held them.", m.already);
  add("events_ignored_total", "counter",
      "Events with no effect in this mode (hash mode: m, s, rows without a "
      "key).",
      m.ignored + m.unkeyed);
  add("reconnects_total", "counter", "Connections to Redis rebuilt.",
      m.reconnects);
  add("applied_seq", "gauge", "The applied seq Redis holds.", m.applied_seq);
  add("lag_events", "gauge", "Committed events in the log not yet applied.",
      m.lag);
  return o;
}

Result<std::string> ReadPassword(const Options& o) {
  if (o.password_file.empty()) {
    const char* env = std::getenv("REDISCLI_AUTH");
    return std::string(env ? env : "");
  }
  int fd = ::open(o.password_file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::Config("--password-file " + o.password_file + ": " +
                          strerror(errno));
  FileHandle f(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096)
    return Status::Config("--password-file " + o.password_file +
                          ": not a regular file of at most 4096 bytes");
  std::string pw(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::read(fd, pw.data(), pw.size());
  if (n < 0)
    return Status::Config("--password-file " + o.password_file + ": " +
                          strerror(errno));
  pw.resize(static_cast<size_t>(n));
  while (!pw.empty() && (pw.back() == '\n' || pw.back() == '\r')) pw.pop_back();
  return pw;
}

class Runner {
 public:
  Runner(const Options& o, redis::ConnectOptions co, redis::SinkOptions so)
      : o_(o), co_(std::move(co)), sink_(std::move(so)) {}

  Status Run();

 private:
  // Connects (again), with exponential backoff while the server is
  // unavailable, for at most --reconnect-max seconds; then reads the
  // applied seq.
  Status Connect();
  Status Backoff(const Status& s);
  // Applies `b` alone, retrying after transport failures.
  Status ApplyBatch(consume::SinkBatch& b);
  // Pipelined: `b` is built into Redis while the batch in flight runs,
  // then the one in flight is confirmed and `b` executed (in flight).
  // With nothing in flight, `b` is just begun and executed.
  Status Pipeline(consume::SinkBatch& b);
  // Confirms the batch in flight, if any.
  Status Settle();
  // Nothing in flight: Redis's unconfirmed seq goes (Sink::Confirm).
  Status Unconfirmed();
  void Count(const redis::BatchResult& r);
  // What follows a confirmed batch: echo (--stdin) and ack.
  Status Confirmed(const consume::SinkBatch& b);
  Status Ack(bool force);
  Status Echo(const consume::SinkBatch& b);
  void MaybeWriteMetrics(bool force);

  const Options& o_;
  redis::ConnectOptions co_;
  redis::Sink sink_;
  std::unique_ptr<redis::Connection> conn_;
  std::optional<uint64_t> applied_;
  std::unique_ptr<consume::Source> source_;
  consume::SinkBatch batches_[2];
  consume::SinkBatch* in_flight_ = nullptr;  // executed, not confirmed
  Metrics m_;
  uint64_t acked_ = 0;
  int64_t next_ack_us_ = 0, next_metrics_us_ = 0;
  bool warned_unkeyed_ = false;
  bool connected_once_ = false;
  int64_t failing_since_us_ = 0, delay_ms_ = 100;
  cli::Output out_{1};
};

// Waits before the next attempt after a retryable failure: 100 ms,
// doubling up to 5 s, for at most --reconnect-max seconds since the first
// failure of this run of failures; then returns the failure.
Status Runner::Backoff(const Status& s) {
  const int64_t now = MonoMicros();
  if (failing_since_us_ == 0) {
    failing_since_us_ = now;
    delay_ms_ = 100;
  }
  if (now - failing_since_us_ >=
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
  conn_.reset();
  for (;;) {
    Status s;
    auto c = redis::Connection::Open(co_);
    if (c.ok()) {
      auto a = sink_.ReadApplied(**c);
      if (a.ok()) {
        conn_ = std::move(*c);
        applied_ = *a;
        if (connected_once_) ++m_.reconnects;
        connected_once_ = true;
        return Status::OK();
      }
      s = a.status();
    } else {
      s = c.status();
    }
    if (!redis::Retryable(s)) return s;
    CDC_RETURN_IF_ERROR(Backoff(s));
  }
}

void Runner::Count(const redis::BatchResult& r) {
  failing_since_us_ = 0;
  applied_ = r.applied_seq;
  m_.events += r.applied;
  m_.already += r.already;
  m_.ignored += r.ignored;
  m_.unkeyed += r.unkeyed;
  m_.duplicates += r.duplicates;
  if (r.applied > 0) ++m_.batches;
  m_.applied_seq = r.applied_seq;
  if (r.unkeyed > 0 && !warned_unkeyed_ && !o_.quiet) {
    warned_unkeyed_ = true;
    fprintf(stderr,
            "%s: warning: rows of a table without a primary key or "
            "replica identity cannot be mirrored as hashes; they are "
            "skipped\n",
            kProg);
  }
}

Status Runner::ApplyBatch(consume::SinkBatch& b) {
  for (;;) {
    if (conn_ == nullptr) CDC_RETURN_IF_ERROR(Connect());
    auto r = sink_.Apply(*conn_, b.events, applied_);
    if (r.ok()) {
      Count(*r);
      return Confirmed(b);
    }
    // The outcome of a batch cut off by a transport failure is unknown:
    // reconnecting reads the applied seq, and Apply skips what it covers.
    if (!redis::Retryable(r.status())) return r.status();
    conn_.reset();
    sink_.Reset();
    CDC_RETURN_IF_ERROR(Backoff(r.status()));
  }
}

Status Runner::Confirmed(const consume::SinkBatch& b) {
  CDC_RETURN_IF_ERROR(Echo(b));
  if (out_.closed()) return Status::OK();
  return Ack(false);
}

Status Runner::Settle() {
  if (in_flight_ == nullptr) return Status::OK();
  consume::SinkBatch* a = in_flight_;
  in_flight_ = nullptr;
  if (conn_ != nullptr) {
    auto r = sink_.Finish(*conn_);
    if (r.ok()) {
      Count(*r);
      return Confirmed(*a);
    }
    if (!redis::Retryable(r.status())) return r.status();
    conn_.reset();
    sink_.Reset();
    CDC_RETURN_IF_ERROR(Backoff(r.status()));
  }
  return ApplyBatch(*a);
}

Status Runner::Unconfirmed() {
  Status s = sink_.Confirm(*conn_);
  if (s.ok() || !redis::Retryable(s)) return s;
  // Harmless to leave: a restart would apply the last batch again.
  conn_.reset();
  sink_.Reset();
  return Status::OK();
}

// Redis runs one connection's commands in order, so batch B's EXEC (and
// the applied seq it sets) can only follow A's. B's EXEC is sent only
// after A's answer said A is applied: a B whose predecessor failed is
// discarded, never executed, so the applied seq never covers a batch that
// failed.
Status Runner::Pipeline(consume::SinkBatch& b) {
  if (conn_ == nullptr) CDC_RETURN_IF_ERROR(Connect());
  uint64_t expected = applied_.value_or(0);
  if (in_flight_ != nullptr && !in_flight_->events.empty())
    expected = std::max(expected, in_flight_->events.back().seq);
  std::optional<uint64_t> after =
      in_flight_ != nullptr ? std::optional<uint64_t>(expected) : applied_;
  Status begun = sink_.Begin(*conn_, b.events, after);
  if (!begun.ok()) {
    Status a = sink_.Abandon(*conn_);
    if (!a.ok()) {
      conn_.reset();
      sink_.Reset();
    }
  }
  CDC_RETURN_IF_ERROR(Settle());
  if (!begun.ok()) {
    if (!redis::Retryable(begun)) return begun;
    if (conn_ != nullptr) {
      conn_.reset();
      sink_.Reset();
    }
    return ApplyBatch(b);
  }
  if (conn_ == nullptr || sink_.in_flight() == 0) {
    // Settle reconnected: what was begun on the old connection is gone.
    return ApplyBatch(b);
  }
  Status e = sink_.Exec(*conn_);
  if (!e.ok()) {
    conn_.reset();
    sink_.Reset();
    return ApplyBatch(b);
  }
  in_flight_ = &b;
  return Status::OK();
}

Status Runner::Ack(bool force) {
  if (o_.use_stdin || !applied_ || *applied_ <= acked_) return Status::OK();
  int64_t now = MonoMicros();
  if (!force && now < next_ack_us_) return Status::OK();
  next_ack_us_ = now + 1000000;
  CDC_RETURN_IF_ERROR(source_->Ack(*applied_));
  acked_ = *applied_;
  return Status::OK();
}

Status Runner::Echo(const consume::SinkBatch& b) {
  if (!o_.use_stdin) return Status::OK();
  // Output::Write sends a long event from the batch itself, not a copy.
  for (const redis::EventRef& e : b.events)
    if (!out_.Write(e.stored) || !out_.Write("\n")) break;
  out_.Flush();
  return out_.error();
}

void Runner::MaybeWriteMetrics(bool force) {
  if (o_.metrics_file.empty()) return;
  int64_t now = MonoMicros();
  if (!force && now < next_metrics_us_) return;
  next_metrics_us_ = now + static_cast<int64_t>(o_.metrics_interval_s * 1e6);
  auto last = source_->LastSeq();
  if (last.ok() && *last > applied_.value_or(0))
    m_.lag = *last - applied_.value_or(0);
  else
    m_.lag = 0;
  Status s = WriteFileAtomic(o_.metrics_file, Render(m_), 0644);
  if (!s.ok() && !o_.quiet)
    fprintf(stderr, "%s: warning: %s\n", kProg,
            cli::EscapeForTerminal(s.message()).c_str());
}

Status Runner::Run() {
  CDC_RETURN_IF_ERROR(Connect());
  if (o_.use_stdin) {
    source_ = consume::OpenStdinSource();
  } else {
    CDC_ASSIGN_OR_RETURN(source_,
                         consume::OpenLogSource(o_.log, o_.consumer, applied_,
                                                o_.follow, "Redis"));
  }
  Status result;
  int next = 0;
  for (;;) {
    consume::SinkBatch& b = batches_[next];
    b.clear();
    auto got = source_->Fill(&b, o_.batch);
    if (!got.ok()) {
      result = got.status();
      break;
    }
    if (*got) {
      // SIGTERM lets the batches read finish: applied, acked and echoed.
      b.Seal();
      Status s = Pipeline(b);
      if (!s.ok() || out_.closed()) {
        result = s;
        break;
      }
      next ^= 1;
      MaybeWriteMetrics(false);
      if (cli::StopRequested()) break;
      continue;
    }
    Status s = Settle();
    if (s.ok() && conn_ != nullptr) s = Unconfirmed();
    if (!s.ok() || out_.closed()) {
      result = s;
      break;
    }
    if (cli::StopRequested()) break;
    (void)Ack(true);
    MaybeWriteMetrics(false);
    if (!o_.follow && !o_.use_stdin) break;
    auto more = source_->Wait(1000);
    if (!more.ok()) {
      result = more.status();
      break;
    }
    if (!*more) break;  // stdin at EOF, all applied
  }
  // The batch in flight is confirmed (or failed) before the ack.
  // After a failure the unconfirmed seq stays: it says where to start.
  Status settled = Settle();
  if (result.ok() && settled.ok() && conn_ != nullptr) settled = Unconfirmed();
  if (result.ok()) result = settled;
  Status acked = Ack(true);
  MaybeWriteMetrics(true);
  return result.ok() ? acked : result;
}

Status Check(const Options& o) {
  if (o.mode != "stream" && o.mode != "hash")
    return Status::Usage("--mode must be stream or hash, not \"" + o.mode +
                         "\"");
  if (o.use_stdin && o.follow)
    return Status::Usage(
        "-f follows the log; with --stdin the input ends "
        "when its writer closes it");
  if (!o.use_stdin && o.log.empty())
    return Status::Usage("--log DIR (or CDC_LOG) is required, unless --stdin");
  if (o.maxlen > 0 && o.mode != "stream")
    return Status::Usage("--maxlen is for --mode stream");
  if (o.prefix.find_first_of("{}") != std::string::npos)
    return Status::Usage("--prefix must not contain '{' or '}'");
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(o.consumer));
  return Status::OK();
}

Status Run(const Options& o) {
  CDC_RETURN_IF_ERROR(Check(o));
  redis::SinkOptions so;
  so.mode = o.mode == "stream" ? redis::Mode::kStream : redis::Mode::kHash;
  so.prefix = o.prefix;
  so.key_template = o.key_template;
  so.maxlen = o.maxlen;
  so.consumer = o.consumer;
  if (!o.key_template.empty())
    CDC_RETURN_IF_ERROR(redis::CheckTemplate(so.mode, o.key_template));
  redis::ConnectOptions co;
  CDC_ASSIGN_OR_RETURN(co.endpoint, redis::ParseUrl(o.url));
  CDC_ASSIGN_OR_RETURN(co.password, ReadPassword(o));
  co.connect_timeout_ms = static_cast<int>(std::min(o.timeout_s, 10.0) * 1000);
  co.io_timeout_ms = static_cast<int>(o.timeout_s * 1000);
  Runner r(o, std::move(co), std::move(so));
  return r.Run();
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
  app.add_option("--log", o.log, "Log directory (not with --stdin)")
      ->envname("CDC_LOG")
      ->type_name("DIR");
  app.add_option("-c,--consumer", o.consumer,
                 "Consumer name: the log cursor to read and ack, and the "
                 "applied seq key in Redis")
      ->required()
      ->type_name("NAME");
  app.add_option("--redis", o.url,
                 "redis://[user@]host[:port][/db] or unix:///path[?db=N]; "
                 "password from REDISCLI_AUTH or --password-file")
      ->required()
      ->type_name("URL");
  app.add_option("--mode", o.mode,
                 "stream (XADD per table) or hash (a hash "
                 "per row)")
      ->required()
      ->type_name("MODE");
  app.add_flag("-f,--follow", o.follow, "Wait for new events");
  app.add_flag("--stdin", o.use_stdin,
               "Read NDJSON events on stdin; echo each applied event on "
               "stdout");
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
  app.add_option("--batch", o.batch,
                 "Events per MULTI/EXEC (whole transactions; default 1000)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 1000000));
  app.add_option("--password-file", o.password_file,
                 "Read the Redis password from FILE (else REDISCLI_AUTH)")
      ->type_name("FILE");
  app.add_option("--metrics-file", o.metrics_file,
                 "Write Prometheus metrics to FILE")
      ->type_name("FILE");
  app.add_option("--metrics-interval", o.metrics_interval_s,
                 "Seconds between metrics writes (default 10)")
      ->check(tools::DurationFlag(0, /*exclusive=*/true));
  app.add_option("--reconnect-max", o.reconnect_max_s,
                 "Seconds to keep reconnecting before exiting 69 (default 60)")
      ->check(tools::DurationFlag(0));
  app.add_option("--timeout", o.timeout_s,
                 "Seconds to wait for Redis to answer (default 60)")
      ->check(tools::DurationFlag(0, /*exclusive=*/true));
  app.add_flag("-q,--quiet", o.quiet, "Only errors on stderr");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::redis_tool
