#include "cdc/run/command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "cdc/base/fs.h"
#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/event/event.h"

extern char** environ;

namespace cdc::run {

namespace {

constexpr int64_t kKillGraceUs = 5000000;

std::string Range(uint64_t first, uint64_t last) {
  return first == last
             ? "seq " + std::to_string(first)
             : "seqs " + std::to_string(first) + "-" + std::to_string(last);
}

// What waitpid's status says, for messages.
std::string Describe(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "ended abnormally";
}

}  // namespace

CommandTarget::CommandTarget(Options o) : o_(std::move(o)) {}

Result<std::optional<uint64_t>> CommandTarget::Open() {
  return std::optional<uint64_t>();
}

Status CommandTarget::RunOnce(const std::string& input, uint64_t first,
                              uint64_t last) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Status::IOError(std::string("pipe: ") + strerror(errno));
  FileHandle rd(fds[0]), wr(fds[1]);
  // The environment, with the batch's facts.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view v(*e);
    if (v.rfind("CDC_SEQ_FIRST=", 0) == 0 || v.rfind("CDC_SEQ_LAST=", 0) == 0 ||
        v.rfind("CDC_ATTEMPT=", 0) == 0 || v.rfind("CDC_LOG=", 0) == 0 ||
        v.rfind("CDC_CONSUMER=", 0) == 0)
      continue;
    env.emplace_back(v);
  }
  env.push_back("CDC_SEQ_FIRST=" + std::to_string(first));
  env.push_back("CDC_SEQ_LAST=" + std::to_string(last));
  env.push_back("CDC_ATTEMPT=" + std::to_string(attempts_ + 1));
  if (!o_.log.empty()) env.push_back("CDC_LOG=" + o_.log);
  if (!o_.consumer.empty()) env.push_back("CDC_CONSUMER=" + o_.consumer);
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const std::string& a : o_.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, rd.fd(), 0);
  // The child gets default signal dispositions (cdc-run ignores SIGPIPE).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGHUP);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_USEVFORK);
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  rd.Reset();
  if (rc != 0)
    return Status::Config("cannot run " + o_.argv[0] + ": " + strerror(rc));
  ++m_.runs;

  // Feed stdin while waiting for the end (a command that exits without
  // reading all of it is not an error in itself: its exit status says).
  if (fcntl(wr.fd(), F_SETFL, O_NONBLOCK) != 0)
    return Status::IOError(std::string("fcntl: ") + strerror(errno));
  size_t off = 0;
  const int64_t start = MonoMicros();
  int64_t term_at = 0;
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR)
      return Status::Internal(std::string("waitpid: ") + strerror(errno));
    const int64_t now = MonoMicros();
    if (o_.timeout_us > 0 && now - start >= o_.timeout_us) {
      if (term_at == 0) {
        term_at = now;
        kill(pid, SIGTERM);
      } else if (now - term_at >= kKillGraceUs) {
        kill(pid, SIGKILL);
      }
    }
    if (wr.valid() && off == input.size()) wr.Reset();  // EOF for the child
    if (wr.valid()) {
      pollfd p{wr.fd(), POLLOUT, 0};
      if (poll(&p, 1, 10) > 0) {
        ssize_t n = write(wr.fd(), input.data() + off, input.size() - off);
        if (n > 0) {
          off += static_cast<size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          wr.Reset();  // EPIPE: it stopped reading
        }
      }
    } else {
      poll(nullptr, 0, 5);
    }
  }
  if (term_at != 0) {
    char secs[32];
    snprintf(secs, sizeof secs, "%g", static_cast<double>(o_.timeout_us) / 1e6);
    return Status::Unavailable(Name() + " ran longer than " + secs + " s on " +
                               Range(first, last) + " and was stopped");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::OK();
  return Status::Unavailable(Name() + " " + Describe(status) + " on " +
                             Range(first, last));
}

Status CommandTarget::DeadLetter(const std::string& input, uint64_t first,
                                 uint64_t last, const Status& why) {
  CDC_ASSIGN_OR_RETURN(
      FileHandle f,
      OpenFile(o_.dead_letter, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC));
  CDC_RETURN_IF_ERROR(
      WriteAll(f.fd(), input.data(), input.size(), o_.dead_letter));
  CDC_RETURN_IF_ERROR(SyncFile(f.fd(), o_.dead_letter));
  m_.dead_lettered += last - first + 1;
  LogWarning(why.message() + "; " + Range(first, last) + " written to " +
             o_.dead_letter + " after " + std::to_string(attempts_) +
             " failed runs, and skipped");
  return Status::OK();
}

Status CommandTarget::Submit(const consume::SinkBatch& b) {
  // Events the command already finished (a batch submitted again) are
  // left out.
  input_.clear();
  uint64_t first = 0, last = 0;
  for (const consume::Event& e : b.events) {
    if (e.seq <= confirmed_) continue;
    if (first == 0) first = e.seq;
    last = e.seq;
    event::AppendNative(e.seq, e.stored, e.last, &input_);
  }
  if (first == 0) return Status::OK();
  if (first != failing_first_) {
    failing_first_ = first;
    attempts_ = 0;
  }
  Status s = RunOnce(input_, first, last);
  if (s.ok()) {
    confirmed_ = last;
    ++m_.batches;
    m_.events += b.events.size();
    attempts_ = 0;
    failing_first_ = 0;
    return s;
  }
  if (s.code() != Code::kUnavailable) return s;  // cannot run it at all
  ++m_.failures;
  ++attempts_;
  if (o_.max_retries < 0 || attempts_ <= o_.max_retries) return s;  // retried
  if (!o_.dead_letter.empty()) {
    CDC_RETURN_IF_ERROR(DeadLetter(input_, first, last, s));
    confirmed_ = last;
    attempts_ = 0;
    failing_first_ = 0;
    return Status::OK();
  }
  return Status::Busy(s.message() + " (" + std::to_string(attempts_) +
                      " runs); stopped: nothing from seq " +
                      std::to_string(first) +
                      " on is acknowledged (fix the command and start "
                      "again, or give --dead-letter FILE to skip)");
}

void CommandTarget::Metrics(Exposition* e) const {
  e->Metric("cdc_run_runs_total", "counter", "Runs of the command.", m_.runs);
  e->Metric("cdc_run_failures_total", "counter",
            "Runs that failed (exit status not 0, a signal, a timeout).",
            m_.failures);
  e->Metric("cdc_run_events_total", "counter",
            "Events the command finished (exit 0).", m_.events);
  e->Metric("cdc_run_batches_total", "counter",
            "Batches the command finished (exit 0).", m_.batches);
  e->Metric("cdc_run_dead_lettered_events_total", "counter",
            "Events written to the dead-letter file and skipped.",
            m_.dead_lettered);
  e->Metric("cdc_run_acked_seq", "gauge",
            "Seq up to which the command finished every event.", confirmed_);
}

}  // namespace cdc::run
