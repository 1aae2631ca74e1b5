#include "cdc/cli/cli.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "cdc/base/logging.h"

namespace cdc::cli {

namespace {
volatile sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }

std::string& LogProgram() {
  static std::string* prog = new std::string;  // never destroyed: threads
  return *prog;                                // may log during exit
}
std::atomic<bool> g_quiet{false};
void ToolSink(LogLevel level, std::string_view message) {
  // -q means one thing in every tool: no informational messages; warnings
  // (and errors, which cli::Report prints) still reach stderr.
  if (level == LogLevel::kInfo && g_quiet.load(std::memory_order_relaxed))
    return;
  WriteLogLine(LogProgram(), level, EscapeForTerminal(message));
}
}  // namespace

void InstallLogging(std::string_view prog) {
  LogProgram() = prog;
  SetLogSink(ToolSink);
}

void SetQuiet(bool quiet) { g_quiet = quiet; }

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

void ReturnLargeBuffers() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Setting that threshold also fixes the one for giving a heap's free top
  // back at its default, 128 KiB, which a thread's heap crosses all the
  // time as frames and batches come and go: each crossing is a madvise,
  // and each page touched again a fault (5% of capture's CPU in an initial
  // snapshot). Up to 8 MiB of free top stays.
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
}

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

std::string EscapeForTerminal(std::string_view t) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(t.size());
  auto hex = [&](const char* prefix, unsigned char c) {
    out += prefix;
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  };
  for (size_t i = 0; i < t.size();) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c < 0x80) {
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7f) {
        hex("\\x", c);
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlongs, surrogates or > U+10FFFF).
    size_t n = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    bool ok = n > 0 && i + n <= t.size();
    for (size_t k = 1; ok && k < n; ++k)
      ok = (static_cast<unsigned char>(t[i + k]) & 0xc0) == 0x80;
    if (ok && n > 2) {
      const unsigned char c1 = static_cast<unsigned char>(t[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0) &&
           !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok) {
      hex("\\x", c);
      ++i;
      continue;
    }
    const unsigned char c1 = static_cast<unsigned char>(t[i + 1]);
    if (c == 0xc2 && c1 < 0xa0) {
      hex("\\u00", c1);  // C1 control (U+0080-U+009F)
    } else {
      out.append(t.data() + i, n);
    }
    i += n;
  }
  return out;
}

int Report(std::string_view prog, const Status& s) {
  if (s.ok()) return 0;
  std::string line(prog);
  line += ": " + EscapeForTerminal(s.message()) + "\n";
  if (s.code() == Code::kUsage)
    line += "Try \"" + std::string(prog) + " --help\" for more information.\n";
  (void)!::write(2, line.data(), line.size());
  return ExitCodeFor(s);
}

}  // namespace cdc::cli
