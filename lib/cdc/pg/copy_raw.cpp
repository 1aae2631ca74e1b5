#include "cdc/pg/copy_raw.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cdc::pg {

Status ClassifySqlState(const char* code, Status s) {
  if (code == nullptr || s.code() != Code::kUnavailable) return s;
  const std::string c = code;
  if (c == "42501" || c.rfind("28", 0) == 0)
    return Status::Permission(s.message());
  if (c.rfind("42", 0) == 0 || c == "55000" || c == "53400" || c == "0A000" ||
      c.rfind("22", 0) == 0)
    return Status::Config(s.message());
  return s;
}

std::string OneLine(const char* msg) {
  std::string s;
  for (const char* p = msg ? msg : ""; *p != '\0'; ++p) {
    const bool space = *p == '\n' || *p == '\t' || *p == '\r' || *p == ' ';
    if (!space)
      s.push_back(*p);
    else if (!s.empty() && s.back() != ' ')
      s.push_back(' ');
  }
  if (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

namespace {

uint32_t GetBe32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) |
         (uint32_t{u[2]} << 8) | u[3];
}

// Waits until `fd` (non-blocking, as libpq leaves it) is ready for `events`.
Status Wait(int fd, short events) {
  pollfd p{fd, events, 0};
  while (poll(&p, 1, -1) < 0)
    if (errno != EINTR)
      return Status::Unavailable(std::string("COPY: poll: ") +
                                 std::strerror(errno));
  return Status::OK();
}

Status SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      CDC_RETURN_IF_ERROR(Wait(fd, POLLOUT));
    } else if (n < 0 && errno != EINTR) {
      return Status::Unavailable(
          std::string("COPY: cannot send the query to PostgreSQL: ") +
          std::strerror(errno));
    }
  }
  return Status::OK();
}

// Protocol messages read from a socket into one buffer.
class MessageReader {
 public:
  MessageReader(int fd, size_t bytes) : fd_(fd), buf_(bytes, '\0') {}

  // The next message's type and body (valid until the next call).
  Status Next(char* type, std::string_view* body) {
    CDC_RETURN_IF_ERROR(Fill(5));
    const uint32_t len = GetBe32(buf_.data() + start_ + 1);
    // The length counts itself; libpq takes no message of 2^31 bytes or
    // more either (PQgetCopyData returns an int).
    if (len < 4 || len > 0x7fffffffu)
      return Status::Unavailable(
          "COPY: PostgreSQL sent a message of impossible length " +
          std::to_string(len));
    CDC_RETURN_IF_ERROR(Fill(size_t{1} + len));
    *type = buf_[start_];
    *body = std::string_view(buf_.data() + start_ + 5, len - 4);
    start_ += size_t{1} + len;
    return Status::OK();
  }

 private:
  // Makes at least `need` bytes from start_ available.
  Status Fill(size_t need) {
    if (end_ - start_ >= need) return Status::OK();
    // What is left is part of one message: moved to the front, it is
    // little to copy, and the reads that follow take a whole buffer each
    // rather than what is left at its end.
    if (start_ > 0) {
      std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    }
    if (buf_.size() < need) buf_.resize(need);
    while (end_ - start_ < need) {
      const ssize_t n = recv(fd_, buf_.data() + end_, buf_.size() - end_, 0);
      if (n > 0) {
        end_ += static_cast<size_t>(n);
      } else if (n == 0) {
        return Status::Unavailable(
            "COPY: the server closed the connection unexpectedly");
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        CDC_RETURN_IF_ERROR(Wait(fd_, POLLIN));
      } else if (errno != EINTR) {
        return Status::Unavailable(std::string("COPY: ") +
                                   std::strerror(errno));
      }
    }
    return Status::OK();
  }

  int fd_;
  std::string buf_;
  size_t start_ = 0, end_ = 0;
};

// An ErrorResponse's or NoticeResponse's fields: one type byte and a
// NUL-terminated value each, ended by a NUL.
struct Fields {
  std::string severity, code, message, detail, hint;
};

Fields ParseFields(std::string_view body) {
  Fields f;
  std::string nonlocalized;
  while (!body.empty() && body[0] != '\0') {
    const char t = body[0];
    const size_t nul = body.find('\0', 1);
    const std::string_view v =
        body.substr(1, nul == std::string_view::npos ? nul : nul - 1);
    if (t == 'S') f.severity = v;
    if (t == 'V') nonlocalized = v;
    if (t == 'C') f.code = v;
    if (t == 'M') f.message = v;
    if (t == 'D') f.detail = v;
    if (t == 'H') f.hint = v;
    if (nul == std::string_view::npos) break;
    body.remove_prefix(nul + 1);
  }
  if (!nonlocalized.empty()) f.severity = nonlocalized;
  return f;
}

}  // namespace

Status RawCopyOut(int fd, const std::string& sql,
                  const std::function<Status(std::string_view row)>& on_row,
                  const RawCopyOptions& o, bool* broken) {
  *broken = true;  // until ReadyForQuery ends the exchange
  std::string query(5, '\0');
  const uint32_t len = static_cast<uint32_t>(4 + sql.size() + 1);
  query[0] = 'Q';
  for (int i = 0; i < 4; ++i)
    query[1 + i] = static_cast<char>(len >> (8 * (3 - i)));
  query.append(sql);
  query.push_back('\0');
  CDC_RETURN_IF_ERROR(SendAll(fd, query));

  MessageReader in(fd, o.buffer_bytes);
  Status failed;
  bool copying = false, cancelled = false;
  for (;;) {
    char type = 0;
    std::string_view body;
    Status read = in.Next(&type, &body);
    // A server that fails the copy and closes (a FATAL on termination or
    // shutdown) is reported in its own words, as is a row's error.
    if (!read.ok()) return failed.ok() ? read : failed;
    switch (type) {
      case 'd':  // CopyData: one row
        if (!copying)
          return Status::Unavailable(
              "COPY: PostgreSQL sent a row before the copy started");
        if (failed.ok()) failed = on_row(body);
        if (!failed.ok() && !cancelled) {
          cancelled = true;
          if (o.cancel) o.cancel();
        }
        break;
      case 'H':  // CopyOutResponse
        copying = true;
        break;
      case 'c':  // CopyDone
      case 'C':  // CommandComplete
        copying = false;
        break;
      case 'E': {  // ErrorResponse: the copy failed; ReadyForQuery follows
        copying = false;
        const Fields f = ParseFields(body);
        // As libpq words it: "ERROR:  text\nDETAIL:  ...\nHINT:  ...".
        std::string text = f.severity + ": " + f.message;
        if (!f.detail.empty()) text += " DETAIL: " + f.detail;
        if (!f.hint.empty()) text += " HINT: " + f.hint;
        if (failed.ok())
          failed = ClassifySqlState(
              f.code.c_str(),
              Status::Unavailable("COPY failed: " + OneLine(text.c_str())));
        break;
      }
      case 'N': {  // NoticeResponse
        if (o.notice) {
          const Fields f = ParseFields(body);
          o.notice(f.severity, f.message);
        }
        break;
      }
      case 'S':  // ParameterStatus
      case 'A':  // NotificationResponse
        break;
      case 'Z':  // ReadyForQuery: the exchange is over
        *broken = false;
        return failed;
      default: {
        char hex[8];
        snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(type));
        return Status::Unavailable(
            std::string("COPY: unexpected message type ") + hex +
            " from PostgreSQL");
      }
    }
  }
}

}  // namespace cdc::pg
