#include "cdc/cli/cli.h"

#include <errno.h>
#include <malloc.h>
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

void ReturnLargeBuffers() { mallopt(M_MMAP_THRESHOLD, 1 << 20); }

bool Output::Flush() {
  bool ok = WriteAll(buf_);
  buf_.clear();
  // Let go of a buffer a huge event grew.
  if (buf_.capacity() > 4 * flush_at_) std::string().swap(buf_);
  return ok;
}

bool Output::Write(std::string_view bytes) {
  if (bytes.size() < flush_at_) {
    buf_.append(bytes);
    return MaybeFlush();
  }
  return Flush() && WriteAll(bytes);
}

bool Output::WriteAll(std::string_view bytes) {
  if (closed_ || !error_.ok()) return false;
  const char* p = bytes.data();
  size_t n = bytes.size();
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE)
        closed_ = true;
      else
        error_ = Status::IOError(std::string("cannot write output: ") +
                                 strerror(errno));
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
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
