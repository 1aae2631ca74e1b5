// A blocking connection to one Redis server (hiredis, RESP2).
//
// Two kinds of failure are kept apart, as hiredis requires:
//  - a transport failure (refused, timed out, closed, a protocol error):
//    the connection is dead from then on (hiredis's rule: a context is
//    never used again after an I/O error); the caller builds a new one.
//    Reported as Unavailable (exit 69 once reconnecting gives up).
//  - a reply error (-ERR, -WRONGTYPE, ...): the connection stays usable;
//    the error becomes a Status whose kind ReplyErrorStatus decides.
// Not thread-safe; one Connection per thread. hiredis stays inside this
// folder: no hiredis type appears in a header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/redis/url.h"

namespace cdc::redis {

struct ConnectOptions {
  Endpoint endpoint;
  std::string password;  // empty: no AUTH
  int connect_timeout_ms = 5000;
  // Every read and write; a longer wait is a transport failure. A batch
  // (one MULTI/EXEC) must be answered within it.
  int io_timeout_ms = 60000;
};

// A reply, copied out of hiredis.
struct Reply {
  enum class Type { kString, kArray, kInteger, kNil, kStatus, kError };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  long long integer = 0;
  std::vector<Reply> elements;  // kArray
  bool is_error() const { return type == Type::kError; }
};

// The Status for a reply error `err` (the text after '-'), its kind chosen
// by the error's first word: NOAUTH, WRONGPASS, NOPERM -> Permission (77);
// WRONGTYPE -> BadInput (65); OOM -> IOError (74: the target is full, as a
// full disk is); READONLY, LOADING, MASTERDOWN, BUSY, TRYAGAIN -> Unavailable
// (69, retried: a failover or a restart ends them); MOVED, ASK,
// CLUSTERDOWN, "unknown command" -> Config (78); anything else Internal.
// `what` says what was being done.
Status ReplyErrorStatus(std::string_view err, std::string_view what);

// Arguments of one command, kept as views; the bytes must outlive Append.
class Args {
 public:
  Args& operator<<(std::string_view a) {
    ptrs_.push_back(a.data());
    lens_.push_back(a.size());
    return *this;
  }
  void clear() {
    ptrs_.clear();
    lens_.clear();
  }
  size_t size() const { return ptrs_.size(); }
  const char* const* ptrs() const { return ptrs_.data(); }
  const size_t* lens() const { return lens_.data(); }

 private:
  std::vector<const char*> ptrs_;
  std::vector<size_t> lens_;
};

// One connection's commands and replies, in order. Connection::Open
// gives the real one (hiredis); tests drive the sink through a fake
// (tests/redis/fake_redis.h) that answers as a Redis server would and
// cuts the connection where a test says.
class Connection {
 public:
  // Connects, authenticates (AUTH [user] password) and selects the
  // database. Unavailable when the server cannot be reached; Permission
  // for a refused password; Config for a database out of range.
  static Result<std::unique_ptr<Connection>> Open(const ConnectOptions& o);
  virtual ~Connection() = default;

  // Queues a command in the output buffer: no I/O. The arguments are
  // copied, except one of kSendInPlace bytes or more: it is written to the
  // socket at once (after everything queued before it), from where it is.
  // Fails when the connection is dead, or dies writing.
  static constexpr size_t kSendInPlace = 1 << 20;
  virtual Status Append(const Args& args) = 0;
  // Writes what is queued once it holds `bytes` or more (no reply is
  // read), so the server works on the first commands of a large pipeline
  // while later ones are built.
  virtual Status SendIfOver(size_t bytes) = 0;
  // Sends what is queued (at the first call) and reads the next reply.
  // A reply error is a Reply of kError, not a failed Status.
  virtual Status Read(Reply* out) = 0;
  // True once a transport failure killed the connection.
  virtual bool dead() const = 0;

  // Append + Read for one command.
  Result<Reply> Command(std::initializer_list<std::string_view> args);
};

}  // namespace cdc::redis
