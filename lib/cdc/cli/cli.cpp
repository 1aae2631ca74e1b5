#include "cdc/cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace cdc::cli {

namespace {
volatile sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }
}  // namespace

void InstallStopHandlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // a closed terminal: stop cleanly too
  signal(SIGPIPE, SIG_IGN);
}

bool StopRequested() { return g_stop != 0; }

bool Output::Flush() {
  if (closed_ || !error_.ok()) {
    buf_.clear();
    return false;
  }
  const char* p = buf_.data();
  size_t n = buf_.size();
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE)
        closed_ = true;
      else
        error_ = Status::IOError(std::string("cannot write output: ") +
                                 strerror(errno));
      buf_.clear();
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  buf_.clear();
  return true;
}

int Report(std::string_view prog, const Status& s) {
  if (s.ok()) return 0;
  std::string line(prog);
  line += ": " + s.message() + "\n";
  if (s.code() == Code::kUsage)
    line += "Try \"" + std::string(prog) + " --help\" for more information.\n";
  (void)!::write(2, line.data(), line.size());
  return ExitCodeFor(s);
}

}  // namespace cdc::cli
