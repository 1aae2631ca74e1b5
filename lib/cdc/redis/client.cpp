#include "cdc/redis/client.h"

#include <hiredis/hiredis.h>
#include <hiredis/sds.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace cdc::redis {

namespace {

redisContext* Ctx(void* p) { return static_cast<redisContext*>(p); }

timeval Tv(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

void Copy(const redisReply* r, Reply* out) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out->type = Reply::Type::kString;
      out->str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out->type = Reply::Type::kStatus;
      out->str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out->type = Reply::Type::kError;
      out->str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out->type = Reply::Type::kInteger;
      out->integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out->type = Reply::Type::kArray;
      out->elements.resize(r->elements);
      for (size_t i = 0; i < r->elements; ++i)
        Copy(r->element[i], &out->elements[i]);
      break;
    default:
      out->type = Reply::Type::kNil;
      break;
  }
}

bool StartsWord(std::string_view s, std::string_view word) {
  return s.rfind(word, 0) == 0 &&
         (s.size() == word.size() || s[word.size()] == ' ');
}

}  // namespace

Status ReplyErrorStatus(std::string_view err, std::string_view what) {
  std::string msg = std::string(what) + ": Redis replied: " + std::string(err);
  for (std::string_view w : {"NOAUTH", "WRONGPASS", "NOPERM"})
    if (StartsWord(err, w)) return Status::Permission(msg);
  if (err.find("without any password configured") != std::string_view::npos ||
      err.find("invalid password") != std::string_view::npos)
    return Status::Permission(msg);
  if (StartsWord(err, "WRONGTYPE")) return Status::BadInput(msg);
  if (StartsWord(err, "OOM"))
    return Status::IOError(msg +
                           " (Redis is at maxmemory; nothing of the batch "
                           "was applied)");
  for (std::string_view w :
       {"READONLY", "LOADING", "MASTERDOWN", "BUSY", "TRYAGAIN"})
    if (StartsWord(err, w)) return Status::Unavailable(msg);
  for (std::string_view w : {"MOVED", "ASK", "CLUSTERDOWN", "CROSSSLOT"})
    if (StartsWord(err, w))
      return Status::Config(msg +
                            " (cdc-redis speaks to one server, not a "
                            "cluster)");
  if (err.find("unknown command") != std::string_view::npos ||
      err.find("DB index is out of range") != std::string_view::npos)
    return Status::Config(msg);
  return Status::Internal(msg);
}

namespace {

// The hiredis connection.
class HiredisConnection final : public Connection {
 public:
  explicit HiredisConnection(Endpoint e) : endpoint_(std::move(e)) {}
  ~HiredisConnection() override;
  HiredisConnection(const HiredisConnection&) = delete;
  HiredisConnection& operator=(const HiredisConnection&) = delete;

  Status Connect(const ConnectOptions& o);
  Status Append(const Args& args) override;
  Status SendIfOver(size_t bytes) override;
  Status Read(Reply* out) override;
  bool dead() const override { return dead_; }

 private:
  Status Dead(std::string_view what);
  // Moves the commands encoded in wbuf_ to hiredis's output buffer.
  Status Hand();
  // Sends everything queued, then `bytes`, waiting as long as the socket
  // takes them.
  Status SendAll(std::string_view bytes);

  void* ctx_ = nullptr;  // redisContext
  bool dead_ = false;
  Endpoint endpoint_;
  std::string wbuf_;  // commands encoded, not yet handed to hiredis
};

}  // namespace

Result<std::unique_ptr<Connection>> Connection::Open(const ConnectOptions& o) {
  auto conn = std::make_unique<HiredisConnection>(o.endpoint);
  CDC_RETURN_IF_ERROR(conn->Connect(o));
  return std::unique_ptr<Connection>(std::move(conn));
}

Status HiredisConnection::Connect(const ConnectOptions& o) {
  const Endpoint& e = o.endpoint;
  redisContext* c = e.is_unix()
                        ? redisConnectUnixWithTimeout(e.unix_path.c_str(),
                                                      Tv(o.connect_timeout_ms))
                        : redisConnectWithTimeout(e.host.c_str(), e.port,
                                                  Tv(o.connect_timeout_ms));
  if (c == nullptr)
    return Status::Internal("cannot allocate a Redis connection");
  ctx_ = c;
  if (c->err)
    return Status::Unavailable("cannot connect to Redis at " + e.Describe() +
                               ": " + c->errstr);
  if (redisSetTimeout(c, Tv(o.io_timeout_ms)) != REDIS_OK)
    return Dead("set timeout");
  if (!e.is_unix()) (void)redisEnableKeepAlive(c);

  Reply r;
  if (!o.password.empty() || !e.user.empty()) {
    Args a;
    a << "AUTH";
    if (!e.user.empty()) a << e.user;
    a << o.password;
    CDC_RETURN_IF_ERROR(Append(a));
    CDC_RETURN_IF_ERROR(Read(&r));
    if (r.is_error()) {
      Status s = ReplyErrorStatus(r.str, "AUTH at " + e.Describe());
      if (s.code() == Code::kInternal) s = Status::Permission(s.message());
      return s;
    }
  }
  // SELECT also proves the session may run commands: a server that needs
  // a password answers NOAUTH here.
  auto sel = Command({"SELECT", std::to_string(e.db)});
  if (!sel.ok()) return sel.status();
  if (sel->is_error())
    return ReplyErrorStatus(
        sel->str, "SELECT " + std::to_string(e.db) + " at " + e.Describe());
  return Status::OK();
}

HiredisConnection::~HiredisConnection() {
  if (ctx_ != nullptr) redisFree(Ctx(ctx_));
}

Status HiredisConnection::Dead(std::string_view what) {
  dead_ = true;
  redisContext* c = Ctx(ctx_);
  std::string why = c != nullptr && c->err ? c->errstr : "connection lost";
  if (c != nullptr && c->err == REDIS_ERR_EOF)
    why = "server closed the connection";
  if (c != nullptr && c->err == REDIS_ERR_IO &&
      why.find("Resource temporarily") != std::string::npos)
    why = "timed out";
  return Status::Unavailable("Redis at " + endpoint_.Describe() + ": " +
                             std::string(what) + ": " + why);
}

// Commands are encoded here (RESP arrays of bulk strings) rather than by
// redisAppendCommandArgv, which formats each length through sdscatfmt,
// and handed to hiredis's output buffer in large pieces.
Status HiredisConnection::Append(const Args& a) {
  if (dead_) return Status::Unavailable("Redis connection is closed");
  auto number = [this](char kind, size_t n) {
    char buf[24];
    buf[0] = kind;
    auto [end, ec] = std::to_chars(buf + 1, buf + sizeof buf - 2, n);
    (void)ec;
    *end++ = '\r';
    *end++ = '\n';
    wbuf_.append(buf, static_cast<size_t>(end - buf));
  };
  number('*', a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    number('$', a.lens()[i]);
    if (a.lens()[i] >= kSendInPlace) {
      // A long argument (a 200 MB value) goes to the socket from where it
      // is, after everything queued before it, rather than being copied
      // twice (here and into hiredis's buffer).
      CDC_RETURN_IF_ERROR(SendAll(std::string_view(a.ptrs()[i], a.lens()[i])));
    } else {
      wbuf_.append(a.ptrs()[i], a.lens()[i]);
    }
    wbuf_.append("\r\n", 2);
  }
  if (wbuf_.size() >= (256 << 10)) return Hand();
  return Status::OK();
}

Status HiredisConnection::SendAll(std::string_view bytes) {
  CDC_RETURN_IF_ERROR(Hand());
  redisContext* c = Ctx(ctx_);
  int done = 0;
  while (!done)
    if (redisBufferWrite(c, &done) != REDIS_OK) return Dead("send commands");
  // hiredis's buffer is empty: what follows on the socket is ours. The
  // socket blocks for at most the I/O timeout (SO_SNDTIMEO), as hiredis's
  // own writes do.
  while (!bytes.empty()) {
    const ssize_t n = ::write(c->fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const bool timeout = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      dead_ = true;
      return Status::Unavailable(
          "Redis at " + endpoint_.Describe() + ": send commands: " +
          (timeout ? std::string("timed out")
                   : std::string(n < 0 ? strerror(errno) : "closed")));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Status HiredisConnection::Hand() {
  if (wbuf_.empty()) return Status::OK();
  if (redisAppendFormattedCommand(Ctx(ctx_), wbuf_.data(), wbuf_.size()) !=
      REDIS_OK)
    return Dead("queue commands");
  wbuf_.clear();
  return Status::OK();
}

Status HiredisConnection::SendIfOver(size_t bytes) {
  if (dead_) return Status::Unavailable("Redis connection is closed");
  redisContext* c = Ctx(ctx_);
  if (sdslen(c->obuf) + wbuf_.size() < bytes) return Status::OK();
  CDC_RETURN_IF_ERROR(Hand());
  int done = 0;
  while (!done)
    if (redisBufferWrite(c, &done) != REDIS_OK) return Dead("send commands");
  return Status::OK();
}

Status HiredisConnection::Read(Reply* out) {
  if (dead_) return Status::Unavailable("Redis connection is closed");
  CDC_RETURN_IF_ERROR(Hand());
  void* raw = nullptr;
  if (redisGetReply(Ctx(ctx_), &raw) != REDIS_OK || raw == nullptr)
    return Dead("read a reply");
  redisReply* r = static_cast<redisReply*>(raw);
  out->elements.clear();
  Copy(r, out);
  freeReplyObject(r);
  return Status::OK();
}

Result<Reply> Connection::Command(
    std::initializer_list<std::string_view> args) {
  Args a;
  for (std::string_view s : args) a << s;
  CDC_RETURN_IF_ERROR(Append(a));
  Reply r;
  CDC_RETURN_IF_ERROR(Read(&r));
  return r;
}

}  // namespace cdc::redis
