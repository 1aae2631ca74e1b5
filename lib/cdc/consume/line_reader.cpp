#include "cdc/consume/line_reader.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>

namespace cdc::consume {

namespace {
constexpr size_t kChunk = 1 << 20;

bool Blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}
}  // namespace

LineReader::LineReader(int fd, std::string name, size_t max_line)
    : fd_(fd), name_(std::move(name)), max_line_(max_line) {}

Status LineReader::LineError(const std::string& what) const {
  return Status::BadInput(name_ + " line " + std::to_string(line_no_) + ": " +
                          what);
}

Result<LineReader::Got> LineReader::Next(int timeout_ms,
                                         std::string_view* line) {
  // The line returned last is dead now: after a long one, give back the
  // memory that held it (the caller copied what it keeps).
  if (start_ > 0 && buf_.capacity() > 2 * kChunk &&
      buf_.size() - start_ < buf_.capacity() / 4) {
    std::string rest(buf_, start_);
    buf_.swap(rest);  // not `buf_ = rest`: that keeps the long capacity
    scanned_ -= start_;
    start_ = 0;
  }
  for (;;) {
    // Search only bytes not searched before: one long line read in many
    // chunks must not be scanned again for every chunk.
    const size_t nl = buf_.find('\n', scanned_);
    const size_t end = nl != std::string::npos        ? nl
                       : eof_ && start_ < buf_.size() ? buf_.size()
                                                      : std::string::npos;
    if (end != std::string::npos) {
      ++line_no_;
      unterminated_ = nl == std::string::npos;
      *line = std::string_view(buf_.data() + start_, end - start_);
      start_ = scanned_ = end == buf_.size() ? end : end + 1;
      if (line->size() > max_line_)
        return LineError("longer than " + std::to_string(max_line_) + " bytes");
      if (Blank(*line)) continue;
      return Got::kLine;
    }
    scanned_ = buf_.size();
    if (eof_) return Got::kEof;
    if (scanned_ - start_ > max_line_) {
      ++line_no_;
      return LineError("longer than " + std::to_string(max_line_) + " bytes");
    }
    CDC_ASSIGN_OR_RETURN(bool read, Fill(timeout_ms));
    if (!read) return Got::kTimeout;
  }
}

Result<bool> LineReader::Fill(int timeout_ms) {
  if (timeout_ms >= 0) {
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, timeout_ms);
    if (rc < 0 && errno != EINTR)
      return Status::IOError("cannot poll " + name_ + ": " + strerror(errno));
    if (rc <= 0) return false;
  }
  // Drop what was handed out before growing the buffer.
  if (start_ > 0) {
    buf_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  if (!chunk_) chunk_.reset(new char[kChunk]);
  const ssize_t n = ::read(fd_, chunk_.get(), kChunk);
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) return false;
    return Status::IOError("cannot read " + name_ + ": " + strerror(errno));
  }
  buf_.append(chunk_.get(), static_cast<size_t>(n));
  if (n == 0) eof_ = true;
  return true;
}

}  // namespace cdc::consume
