// Process-level helpers every tool shares: stop signals, stdout that treats
// a closed pipe as a clean stop, and one-line error reporting.
#pragma once

#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc::cli {

// SIGINT/SIGTERM/SIGHUP set a flag (handlers do nothing else); SIGPIPE is
// ignored so a closed stdout shows up as EPIPE.
void InstallStopHandlers();
bool StopRequested();

// Routes the library's log messages (base/logging.h) to stderr as
// "prog: message" ("prog: warning: message"), through EscapeForTerminal.
// Call once at start-up, before other threads run.
void InstallLogging(std::string_view prog);
// -q: informational messages routed by InstallLogging (progress) are
// dropped; warnings, and errors (which travel as Status to Report), are not.
void SetQuiet(bool quiet);

// Makes buffers of 1 MiB or more come from the kernel and go back to it when
// freed. glibc otherwise raises its threshold for that after freeing such a
// buffer (up to 32 MiB), serves the next ones from the heap and keeps what
// they freed: a stream of large values would then cost more memory than
// the largest of them. A heap keeps up to 8 MiB of free space at its top.
void ReturnLargeBuffers();

// Buffered writer to a file descriptor. Write() returns false once the
// reader has gone away (EPIPE) — a clean stop, not an error — and sets
// error() for any other failure.
class Output {
 public:
  explicit Output(int fd = 1, size_t flush_at = 1 << 16)
      : fd_(fd), flush_at_(flush_at) {}
  ~Output() { (void)Flush(); }
  std::string* buffer() { return &buf_; }
  // Flushes when the buffer passed its threshold.
  bool MaybeFlush() { return buf_.size() < flush_at_ || Flush(); }
  bool Flush();
  // Appends `bytes` after what is buffered; a piece of the threshold's size
  // or more is written from where it is (after the buffer), not copied.
  bool Write(std::string_view bytes);
  bool closed() const { return closed_; }
  const Status& error() const { return error_; }
  int fd() const { return fd_; }

 private:
  bool WriteAll(std::string_view bytes);

  int fd_;
  size_t flush_at_;
  std::string buf_;
  bool closed_ = false;
  Status error_;
};

// `text` safe to print on one terminal line: control characters (C0, DEL,
// C1) become \n, \r, \t or \xHH / \u00HH, and bytes that are not valid
// UTF-8 become \xHH, so input quoted in a message can neither forge a
// line nor drive the terminal.
std::string EscapeForTerminal(std::string_view text);

// Prints "prog: message" to stderr (the message through
// EscapeForTerminal), plus a --help hint for usage errors, and returns the
// exit code for `s`.
int Report(std::string_view prog, const Status& s);

}  // namespace cdc::cli
