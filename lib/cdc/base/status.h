// Status and Result: the closed set of error kinds every part of cdc reports.
//
// An error kind is decided where the error happens; one function
// (cdc::ExitCodeFor) maps kinds to the stable exit codes of docs/design.md
// ("Errors and exit codes").
// An OK status holds no allocation and costs one pointer compare.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace cdc {

enum class Code : int {
  kOk = 0,
  kCheckFailed,   // verify found a problem (exit 1)
  kUsage,         // bad flags or arguments (exit 64)
  kBadInput,      // malformed input data (exit 65)
  kCorruption,    // log data fails its checksum or structure (exit 65)
  kNotFound,      // log, segment, consumer or backup not found (exit 66)
  kUnavailable,   // a server cannot be reached (exit 69)
  kInternal,      // a bug (exit 70)
  kCannotCreate,  // cannot create a file or directory (exit 73)
  kIOError,       // read/write/fsync failed, disk full (exit 74)
  kBusy,          // lock held; retry later (exit 75)
  kPermission,    // permission or authentication (exit 77)
  kConfig,        // bad configuration, wrong log for this source (exit 78)
  kExpired,       // consumer's next event was removed (exit 10)
  kGap,           // log is behind the replication slot (exit 11)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string msg)
      : rep_(code == Code::kOk
                 ? nullptr
                 : std::make_shared<const Rep>(Rep{code, std::move(msg)})) {}

  static Status OK() { return Status(); }
  static Status CheckFailed(std::string m) {
    return {Code::kCheckFailed, std::move(m)};
  }
  static Status Usage(std::string m) { return {Code::kUsage, std::move(m)}; }
  static Status BadInput(std::string m) {
    return {Code::kBadInput, std::move(m)};
  }
  static Status Corruption(std::string m) {
    return {Code::kCorruption, std::move(m)};
  }
  static Status NotFound(std::string m) {
    return {Code::kNotFound, std::move(m)};
  }
  static Status Unavailable(std::string m) {
    return {Code::kUnavailable, std::move(m)};
  }
  static Status Internal(std::string m) {
    return {Code::kInternal, std::move(m)};
  }
  static Status CannotCreate(std::string m) {
    return {Code::kCannotCreate, std::move(m)};
  }
  static Status IOError(std::string m) {
    return {Code::kIOError, std::move(m)};
  }
  static Status Busy(std::string m) { return {Code::kBusy, std::move(m)}; }
  static Status Permission(std::string m) {
    return {Code::kPermission, std::move(m)};
  }
  static Status Config(std::string m) { return {Code::kConfig, std::move(m)}; }
  static Status Expired(std::string m) {
    return {Code::kExpired, std::move(m)};
  }
  static Status Gap(std::string m) { return {Code::kGap, std::move(m)}; }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  const std::string& message() const {
    static const std::string kEmpty;
    return rep_ ? rep_->msg : kEmpty;
  }
  // "OK" or the message (the message already says what failed).
  std::string ToString() const { return ok() ? "OK" : rep_->msg; }

  // Returns a copy of this status with `prefix: ` prepended to the message.
  Status Annotate(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code(), prefix + ": " + message());
  }

 private:
  struct Rep {
    Code code;
    std::string msg;
  };
  std::shared_ptr<const Rep> rep_;
};

// Exit code for a status (0 for OK), as fixed in docs/design.md.
int ExitCodeFor(const Status& s);

// True for the kind that reconnecting and trying again may cure: a server
// out of reach (Unavailable). The one rule by which every long-running
// tool decides to back off and retry rather than exit.
inline bool IsRetryable(const Status& s) {
  return s.code() == Code::kUnavailable;
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status s) : v_(std::move(s)) {}     // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace cdc

#define CDC_RETURN_IF_ERROR(expr) \
  do {                            \
    ::cdc::Status _st = (expr);   \
    if (!_st.ok()) return _st;    \
  } while (0)

#define CDC_CONCAT_INNER(a, b) a##b
#define CDC_CONCAT(a, b) CDC_CONCAT_INNER(a, b)
#define CDC_ASSIGN_OR_RETURN(lhs, expr) \
  CDC_ASSIGN_OR_RETURN_IMPL(CDC_CONCAT(_res_, __LINE__), lhs, expr)
#define CDC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
