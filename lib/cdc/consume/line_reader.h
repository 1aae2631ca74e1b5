// consume::LineReader: NDJSON lines from a file descriptor (stdin in a
// pipe such as `cdc-tail -f | handler | cdc-ack`), with a timeout so the
// caller's timers (periodic acks, group commit) run while input pauses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cdc/base/status.h"
#include "cdc/log/frame.h"

namespace cdc::consume {

// No event line can be longer than a frame.
inline constexpr size_t kMaxLineBytes = log::kMaxFrameBytes;

class LineReader {
 public:
  // Reads `fd` (not owned; not closed). `name` is how messages call the
  // input ("stdin"). Lines longer than `max_line` bytes are refused.
  explicit LineReader(int fd, std::string name = "stdin",
                      size_t max_line = kMaxLineBytes);

  enum class Got {
    kLine,     // *line holds the next line
    kTimeout,  // nothing within the timeout, or a signal interrupted the
               // wait: check for a stop request and call again
    kEof,      // no more input
  };
  // The next non-blank line, without its '\n' (a final line without one
  // is a line too). Blank lines (only spaces, tabs, CRs) are skipped but
  // counted. Waits up to `timeout_ms` (-1: no limit) when no whole line is
  // buffered. `*line` points into the reader's buffer and is valid until
  // the next call. BadInput "stdin line N is longer than M bytes" for an
  // overlong line (N its number); IOError when reading fails.
  Result<Got> Next(int timeout_ms, std::string_view* line);

  // Number of the line last returned (1-based; blank lines count).
  uint64_t line_no() const { return line_no_; }
  // True when the line last returned ended the input without a '\n': a
  // file without a final newline, or a writer killed mid-line (check that
  // it is whole before trusting it).
  bool unterminated() const { return unterminated_; }
  // "stdin line N: `what`" for the line last returned, as BadInput.
  Status LineError(const std::string& what) const;

 private:
  // Reads once (after waiting up to `timeout_ms`); false on timeout.
  Result<bool> Fill(int timeout_ms);

  int fd_;
  std::string name_;
  size_t max_line_;
  std::string buf_;
  std::unique_ptr<char[]> chunk_;  // read() lands here
  size_t start_ = 0;               // first byte of buf_ not yet returned
  size_t scanned_ = 0;             // buf_[start_, scanned_) holds no newline
  bool eof_ = false;
  bool unterminated_ = false;
  uint64_t line_no_ = 0;
};

}  // namespace cdc::consume
