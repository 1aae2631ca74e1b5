#include "cdc/nats/client.h"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "cdc/base/time.h"

namespace cdc::nats {

namespace {

constexpr const char* kSeqHeader = "Cdc-Seq";

bool Contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

// nats.c keeps the detail of its last failure per thread.
std::string LastErrorText(natsStatus s) {
  natsStatus st = s;
  const char* t = nats_GetLastError(&st);
  if (t == nullptr || *t == '\0') return natsStatus_GetText(s);
  // "(jsm.c:1033): subjects overlap ...": the source position is no
  // news to the user.
  std::string_view v(t);
  if (v.size() > 2 && v[0] == '(') {
    size_t close = v.find("): ");
    if (close != std::string_view::npos) v.remove_prefix(close + 3);
  }
  return std::string(v);
}

}  // namespace

Status ErrorStatus(int s, int js_code, std::string_view text,
                   std::string_view what) {
  std::string msg =
      std::string(what) + ": " +
      (text.empty() ? natsStatus_GetText(static_cast<natsStatus>(s))
                    : std::string(text));
  if (js_code != 0) msg += " (JetStream error " + std::to_string(js_code) + ")";
  if (js_code == JSNotEnabledForAccountErr || js_code == JSNotEnabledErr ||
      s == NATS_NO_RESPONDERS)
    return Status::Config(
        what.empty()
            ? msg
            : std::string(what) +
                  ": JetStream is not enabled for "
                  "this account (" +
                  (text.empty() ? "no responders" : std::string(text)) + ")");
  if (Contains(text, "maximum bytes exceeded") ||
      Contains(text, "maximum messages exceeded") ||
      Contains(text, "resource limits exceeded") ||
      Contains(text, "insufficient resources") ||
      js_code == JSInsufficientResourcesErr)
    return Status::IOError(msg + ": the stream is full");
  if (s == NATS_NOT_PERMITTED || Contains(text, "Permissions Violation") ||
      Contains(text, "Authorization Violation") ||
      Contains(text, "authorization violation") ||
      Contains(text, "Authentication") || Contains(text, "User Authentication"))
    return Status::Permission(msg);
  if (s == NATS_SSL_ERROR) return Status::Config(msg);
  if (s == NATS_TIMEOUT || s == NATS_CONNECTION_CLOSED || s == NATS_NO_SERVER ||
      s == NATS_STALE_CONNECTION || s == NATS_IO_ERROR ||
      s == NATS_CONNECTION_DISCONNECTED || s == NATS_NOT_YET_CONNECTED ||
      Contains(text, "temporarily unavailable") ||
      Contains(text, "no suitable peers") || Contains(text, "not current") ||
      Contains(text, "no leader") || Contains(text, "stream is offline"))
    return Status::Unavailable(msg);
  if (js_code == JSStreamNotFoundErr) return Status::NotFound(msg);
  // The stream's configuration: subjects overlapping another stream's,
  // replicas the cluster cannot place, a name in use with other settings,
  // replicas asked of a single server.
  if (js_code == 10065 || js_code == 10058 || js_code == 10052 ||
      js_code == JSStreamReplicasNotSupportedErr ||
      Contains(text, "insufficient resources") || Contains(text, "overlap"))
    return Status::Config(msg);
  return Status::Internal(msg);
}

std::string RedactServerUrl(std::string_view url) {
  const size_t at = url.find('@');
  const size_t scheme = url.find("://");
  if (at == std::string_view::npos) return std::string(url);
  const size_t from = scheme == std::string_view::npos ? 0 : scheme + 3;
  return std::string(url.substr(0, from)) + "…@" +
         std::string(url.substr(at + 1));
}

void CredentialsFromEnvironment(ConnectOptions* o) {
  if (o->creds_file.empty())
    if (const char* e = std::getenv("NATS_CREDS")) o->creds_file = e;
  if (const char* e = std::getenv("NATS_USER")) o->user = e;
  if (const char* e = std::getenv("NATS_PASSWORD")) o->password = e;
  if (const char* e = std::getenv("NATS_TOKEN")) o->token = e;
}

Result<std::vector<std::string>> ParseServers(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string url(list.substr(start, comma - start));
    start = comma + 1;
    if (url.empty()) continue;
    const bool ok = url.rfind("nats://", 0) == 0 || url.rfind("tls://", 0) == 0;
    const std::string shown = RedactServerUrl(url);
    if (!ok || url.size() <= url.find("://") + 3)
      return Status::Usage("--server \"" + shown +
                           "\": expected nats://host:port or tls://host:port");
    out.push_back(std::move(url));
  }
  if (out.empty()) return Status::Usage("--server needs at least one URL");
  return out;
}

struct ClientImpl {
  natsOptions* opts = nullptr;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  ConnectOptions o;
  int servers = 1;

  mutable std::mutex mu;
  std::condition_variable cv;
  // What the caller's thread waits on cv for (only then is it notified):
  // room in the window down to low_water, or take_want answers. Waking it
  // for every answer would cost two context switches a message; a quarter
  // of the window at a time keeps the pipe full with few.
  bool publish_waiting = false;
  bool take_waiting = false;
  size_t low_water = 0;
  size_t take_want = 1;
  std::vector<PublishResult> results;
  size_t in_flight = 0;
  // When the last answer arrived, or the first publish after none were in
  // flight: the publishes in flight have had no answer since then.
  int64_t quiet_since_us = 0;
  std::string async_error;
  std::atomic<uint64_t> reconnects{0};
  // The stream this client created or read last (see Info).
  std::string seen_stream;

  ~ClientImpl() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) {
      natsConnection_Close(nc);
      natsConnection_Destroy(nc);
    }
    if (opts != nullptr) natsOptions_Destroy(opts);
  }
};

// The nats.c client.
class NatsClient final : public Client {
 public:
  NatsClient() : impl_(std::make_unique<ClientImpl>()) {}
  ~NatsClient() override;
  Result<StreamEnd> EnsureStream(const StreamOptions& o) override;
  Result<StreamEnd> Info(const std::string& stream) override;
  Result<std::optional<StoredMessage>> Get(const std::string& stream,
                                           uint64_t stream_seq) override;
  Status PublishAsync(const OutMessage& m,
                      std::optional<uint64_t> expect_last) override;
  void TakeResults(std::vector<PublishResult>* out, int wait_ms) override;
  size_t in_flight() const override;
  bool connected() const override;
  uint64_t reconnects() const override;
  std::string TakeAsyncError() override;

  std::unique_ptr<ClientImpl> impl_;
};

namespace {

// The Cdc-Seq of a message cdc-nats published (0 if none).
uint64_t MessageSeq(natsMsg* msg) {
  uint64_t seq = 0;
  const char* v = nullptr;
  if (msg != nullptr && natsMsgHeader_Get(msg, kSeqHeader, &v) == NATS_OK &&
      v != nullptr)
    std::from_chars(v, v + strlen(v), seq);
  return seq;
}

void OnAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae,
           void* closure) {
  auto* im = static_cast<ClientImpl*>(closure);
  PublishResult r;
  r.seq = MessageSeq(msg);
  if (pa != nullptr) {
    r.stream_seq = pa->Sequence;
    r.duplicate = pa->Duplicate;
  } else if (pae != nullptr && pae->Err == NATS_NO_RESPONDERS) {
    // No stream took the subject: one being created or moving after a
    // node restart, or a stream whose subjects do not cover it (retried
    // until --reconnect-max says so).
    r.error = Status::Unavailable(
        "publish: no stream answered for subject " +
        std::string(natsMsg_GetSubject(msg) ? natsMsg_GetSubject(msg) : "") +
        " (do the stream's subjects cover it?)");
  } else if (pae != nullptr) {
    r.wrong_last_seq = pae->ErrCode == JSStreamWrongLastSequenceErr;
    r.error = ErrorStatus(pae->Err, pae->ErrCode,
                          pae->ErrText ? pae->ErrText : "", "publish");
  } else {
    r.error = Status::Internal("publish: no answer and no error");
  }
  natsMsg_Destroy(msg);
  bool wake;
  {
    std::lock_guard<std::mutex> l(im->mu);
    im->results.push_back(std::move(r));
    if (im->in_flight > 0) --im->in_flight;
    im->quiet_since_us = MonoMicros();
    wake = (im->publish_waiting && im->in_flight <= im->low_water) ||
           (im->take_waiting &&
            (im->results.size() >= im->take_want || im->in_flight == 0));
  }
  if (wake) im->cv.notify_all();
}

void OnAsyncError(natsConnection* nc, natsSubscription*, natsStatus err,
                  void* closure) {
  auto* im = static_cast<ClientImpl*>(closure);
  const char* text = nullptr;
  natsConnection_GetLastError(nc, &text);
  std::lock_guard<std::mutex> l(im->mu);
  im->async_error =
      text != nullptr && *text != '\0' ? text : natsStatus_GetText(err);
}

void OnReconnected(natsConnection*, void* closure) {
  ++static_cast<ClientImpl*>(closure)->reconnects;
}

int64_t ReconnectDelay(natsConnection*, int attempts, void* closure) {
  auto* im = static_cast<ClientImpl*>(closure);
  // One round over every server per step of the backoff.
  int round = attempts / (im->servers > 0 ? im->servers : 1);
  int64_t d = im->o.reconnect_min_ms;
  for (int i = 0; i < round && d < im->o.reconnect_max_ms; ++i) d *= 2;
  return std::min<int64_t>(d, im->o.reconnect_max_ms);
}

}  // namespace

Result<std::unique_ptr<Client>> Client::Open(const ConnectOptions& o) {
  auto c = std::make_unique<NatsClient>();
  ClientImpl& im = *c->impl_;
  im.o = o;
  im.servers = static_cast<int>(o.servers.size());
  natsStatus s = natsOptions_Create(&im.opts);
  auto fail = [&](std::string_view what) {
    return ErrorStatus(s, 0, LastErrorText(s), what);
  };
  if (s != NATS_OK) return fail("nats options");
  std::vector<const char*> urls;
  bool tls = false;
  for (const std::string& u : o.servers) {
    urls.push_back(u.c_str());
    if (u.rfind("tls://", 0) == 0) tls = true;
  }
  s = natsOptions_SetServers(im.opts, urls.data(),
                             static_cast<int>(urls.size()));
  if (s == NATS_OK) s = natsOptions_SetName(im.opts, o.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(im.opts, o.connect_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(im.opts, -1);
  if (s == NATS_OK)
    s = natsOptions_SetCustomReconnectDelay(im.opts, ReconnectDelay, &im);
  if (s == NATS_OK)
    s = natsOptions_SetReconnectedCB(im.opts, OnReconnected, &im);
  if (s == NATS_OK) s = natsOptions_SetErrorHandler(im.opts, OnAsyncError, &im);
  if (s == NATS_OK) s = natsOptions_SetFailRequestsOnDisconnect(im.opts, true);
  if (s == NATS_OK) s = natsOptions_SetReconnectBufSize(im.opts, 64 << 20);
  // A server that stops answering without a word (a dead host, a network
  // that drops every packet) must not hold the connection: without a write
  // deadline nats.c's flusher blocks in send(2) with the connection's lock
  // held once the socket buffer fills, and every publish waits behind it
  // until TCP gives up (about 15 minutes). A write blocked for the publish
  // timeout fails the connection, which nats.c then replaces; an idle one
  // is pinged every 10 s and taken for dead after two unanswered pings.
  if (s == NATS_OK)
    s = natsOptions_SetWriteDeadline(im.opts, o.publish_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(im.opts, 10000);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(im.opts, 2);
  if (s != NATS_OK) return fail("nats options");
  if (!o.creds_file.empty()) {
    // nats.c reads the file only when it connects, and reports a missing
    // one as any other failure: a file that cannot be read is said here.
    FILE* f = fopen(o.creds_file.c_str(), "r");
    if (f == nullptr)
      return Status::Config("credentials file " + o.creds_file + ": " +
                            strerror(errno));
    fclose(f);
    s = natsOptions_SetUserCredentialsFromFiles(im.opts, o.creds_file.c_str(),
                                                nullptr);
    if (s != NATS_OK)
      return Status::Config("credentials file " + o.creds_file + ": " +
                            LastErrorText(s));
  }
  if (!o.user.empty())
    s = natsOptions_SetUserInfo(im.opts, o.user.c_str(), o.password.c_str());
  if (s == NATS_OK && !o.token.empty())
    s = natsOptions_SetToken(im.opts, o.token.c_str());
  if (s != NATS_OK) return fail("nats credentials");
  if (tls || !o.ca_file.empty() || !o.cert_file.empty()) {
    s = natsOptions_SetSecure(im.opts, true);
    if (s == NATS_OK && !o.ca_file.empty())
      s = natsOptions_LoadCATrustedCertificates(im.opts, o.ca_file.c_str());
    if (s != NATS_OK)
      return Status::Config("--tls-ca " + o.ca_file + ": " + LastErrorText(s));
    if (!o.cert_file.empty()) {
      s = natsOptions_LoadCertificatesChain(im.opts, o.cert_file.c_str(),
                                            o.key_file.c_str());
      if (s != NATS_OK)
        return Status::Config("--tls-cert " + o.cert_file + ": " +
                              LastErrorText(s));
    }
  }
  s = natsConnection_Connect(&im.nc, im.opts);
  if (s != NATS_OK) {
    im.nc = nullptr;
    // "no nkey user seed found in 'FILE'", "no user JWT found in ...".
    const std::string text = LastErrorText(s);
    if (!o.creds_file.empty() && Contains(text, "'" + o.creds_file + "'"))
      return Status::Config("credentials file " + o.creds_file + ": " + text);
    return fail("connect to " + RedactServerUrl(o.servers[0]) +
                (o.servers.size() > 1 ? " (and the other servers)" : ""));
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = o.request_timeout_ms;
  jo.PublishAsync.MaxPending = o.max_in_flight + 16;
  jo.PublishAsync.AckHandler = OnAck;
  jo.PublishAsync.AckHandlerClosure = &im;
  s = natsConnection_JetStream(&im.js, im.nc, &jo);
  if (s != NATS_OK) return fail("JetStream context");
  return std::unique_ptr<Client>(std::move(c));
}

NatsClient::~NatsClient() {
  if (impl_ == nullptr) return;
  // nats.c's thread may still deliver answers: stop it before Impl goes.
  if (impl_->nc != nullptr) natsConnection_Close(impl_->nc);
}

namespace {

StreamEnd EndOf(const jsStreamInfo* si) {
  StreamEnd e;
  e.last_seq = si->State.LastSeq;
  e.msgs = si->State.Msgs;
  return e;
}

}  // namespace

// In a cluster, a server may answer "stream not found" for a stream that
// exists: for a moment after it was created (the create is answered before
// every server has applied it) or while its replicas elect a leader. So a
// stream this client created or has read before is asked for again for up
// to kSeenStreamGraceUs before "not found" is believed.
constexpr int64_t kSeenStreamGraceUs = 5'000'000;

Result<StreamEnd> NatsClient::Info(const std::string& stream) {
  const bool seen = stream == impl_->seen_stream;
  const int64_t give_up = MonoMicros() + kSeenStreamGraceUs;
  for (;;) {
    jsStreamInfo* si = nullptr;
    jsErrCode ec = static_cast<jsErrCode>(0);
    natsStatus s =
        js_GetStreamInfo(&si, impl_->js, stream.c_str(), nullptr, &ec);
    if (s == NATS_OK) {
      StreamEnd e = EndOf(si);
      jsStreamInfo_Destroy(si);
      impl_->seen_stream = stream;
      return e;
    }
    Status st = ErrorStatus(s, ec, LastErrorText(s), "stream " + stream);
    if (!seen || st.code() != Code::kNotFound || MonoMicros() >= give_up)
      return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Result<StreamEnd> NatsClient::EnsureStream(const StreamOptions& o) {
  auto e = Info(o.name);
  if (e.ok() || e.status().code() != Code::kNotFound) return e;
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = o.name.c_str();
  std::vector<const char*> subjects;
  for (const std::string& s : o.subjects) subjects.push_back(s.c_str());
  cfg.Subjects = subjects.data();
  cfg.SubjectsLen = static_cast<int>(subjects.size());
  cfg.Storage = js_FileStorage;
  cfg.Replicas = o.replicas;
  cfg.Duplicates = o.duplicate_window_us * 1000;  // nanoseconds
  cfg.MaxBytes = o.max_bytes;
  cfg.Discard = o.discard_new ? js_DiscardNew : js_DiscardOld;
  jsStreamInfo* si = nullptr;
  jsErrCode ec = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, impl_->js, &cfg, nullptr, &ec);
  // Another cdc-nats created it at the same moment.
  if (s != NATS_OK && ec == JSStreamNameExistErr) {
    impl_->seen_stream = o.name;
    return Info(o.name);
  }
  if (s != NATS_OK)
    return ErrorStatus(s, ec, LastErrorText(s), "create stream " + o.name);
  StreamEnd r = EndOf(si);
  r.created = true;
  jsStreamInfo_Destroy(si);
  impl_->seen_stream = o.name;
  return r;
}

Result<std::optional<StoredMessage>> NatsClient::Get(const std::string& stream,
                                                     uint64_t stream_seq) {
  natsMsg* m = nullptr;
  jsErrCode ec = static_cast<jsErrCode>(0);
  natsStatus s =
      js_GetMsg(&m, impl_->js, stream.c_str(), stream_seq, nullptr, &ec);
  if (s == NATS_NOT_FOUND || ec == JSNoMessageFoundErr)
    return std::optional<StoredMessage>();
  if (s != NATS_OK)
    return ErrorStatus(
        s, ec, LastErrorText(s),
        "read message " + std::to_string(stream_seq) + " of stream " + stream);
  StoredMessage out;
  out.stream_seq = stream_seq;
  out.subject = natsMsg_GetSubject(m) ? natsMsg_GetSubject(m) : "";
  auto header = [&](const char* k, std::string* v) {
    const char* t = nullptr;
    if (natsMsgHeader_Get(m, k, &t) == NATS_OK && t != nullptr) *v = t;
  };
  header("Nats-Msg-Id", &out.msg_id);
  // cdc-nats's Nats-Msg-Id is "<log id>:<seq>"; a log id given with
  // --log-id may hold ':' itself, a seq never does.
  const size_t colon = out.msg_id.rfind(':');
  if (colon != std::string::npos && colon > 0) {
    out.log_id = out.msg_id.substr(0, colon);
    out.seq = out.msg_id.substr(colon + 1);
  }
  header(kSeqHeader, &out.seq_header);
  std::string last;
  header("Cdc-Last", &last);
  out.last = last == "true";
  natsMsg_Destroy(m);
  return std::optional<StoredMessage>(std::move(out));
}

Status NatsClient::PublishAsync(const OutMessage& m,
                                std::optional<uint64_t> expect_last) {
  ClientImpl& im = *impl_;
  {
    std::unique_lock<std::mutex> l(im.mu);
    // A full window drains within publish_timeout_ms: answers arrive, or
    // TakeResults times the window out.
    const size_t max = static_cast<size_t>(im.o.max_in_flight);
    if (im.in_flight >= max) {
      im.publish_waiting = true;
      im.low_water = max - std::max<size_t>(1, max / 4);
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(im.o.publish_timeout_ms);
      // Answers that only trickle in (a degraded cluster) still make room
      // one at a time: after a short wait any room will do.
      while (im.in_flight > im.low_water &&
             std::chrono::steady_clock::now() < deadline) {
        im.cv.wait_for(l, std::chrono::milliseconds(20));
        if (im.in_flight < max) break;
      }
      im.publish_waiting = false;
      if (im.in_flight >= max)
        return Status::Unavailable("publish: " + std::to_string(im.in_flight) +
                                   " publishes unanswered");
    }
    if (im.in_flight++ == 0) im.quiet_since_us = MonoMicros();
  }
  auto undo = [&] {
    std::lock_guard<std::mutex> l(im.mu);
    --im.in_flight;
  };
  natsMsg* msg = nullptr;
  natsStatus s =
      natsMsg_Create(&msg, m.subject.c_str(), nullptr, m.payload.data(),
                     static_cast<int>(m.payload.size()));
  // OutMessage::headers: NUL-ended names and values, one after another.
  for (size_t at = 0; s == NATS_OK && at < m.headers.size();) {
    const char* name = m.headers.c_str() + at;
    const size_t name_len = strlen(name);
    const char* value = name + name_len + 1;
    s = natsMsgHeader_Set(msg, name, value);
    at += name_len + 1 + strlen(value) + 1;
  }
  // nats.c leaves an expected sequence of 0 out; the server takes the
  // header as it is, so an empty stream can be asked for too.
  if (s == NATS_OK && expect_last && *expect_last == 0)
    s = natsMsgHeader_Set(msg, "Nats-Expected-Last-Sequence", "0");
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);
    undo();
    return ErrorStatus(s, 0, LastErrorText(s), "build message");
  }
  // No MaxWait: nats.c would keep a timer record for every message for
  // that long, answered or not. The window's timeout is TakeResults'.
  jsPubOptions po;
  jsPubOptions_Init(&po);
  if (expect_last && *expect_last > 0) po.ExpectLastSeq = *expect_last;
  s = js_PublishMsgAsync(im.js, &msg, &po);
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);  // no effect when nats.c took it
    undo();
    return ErrorStatus(s, 0, LastErrorText(s), "publish to " + m.subject);
  }
  return Status::OK();
}

void NatsClient::TakeResults(std::vector<PublishResult>* out, int wait_ms) {
  ClientImpl& im = *impl_;
  std::unique_lock<std::mutex> l(im.mu);
  if (im.results.empty() && wait_ms > 0 && im.in_flight > 0) {
    im.take_waiting = true;
    im.take_want = std::clamp<size_t>(
        im.in_flight, 1,
        std::max<size_t>(1, static_cast<size_t>(im.o.max_in_flight) / 4));
    im.cv.wait_for(l, std::chrono::milliseconds(wait_ms), [&] {
      return im.results.size() >= im.take_want || im.in_flight == 0;
    });
    im.take_waiting = false;
  }
  for (PublishResult& r : im.results) out->push_back(std::move(r));
  im.results.clear();
  if (im.in_flight == 0 || MonoMicros() - im.quiet_since_us <
                               int64_t{im.o.publish_timeout_ms} * 1000)
    return;
  l.unlock();
  // Nothing answered for publish_timeout_ms: take the unanswered messages
  // back (an answer that still comes for one finds nothing and is dropped)
  // and answer each here.
  natsMsgList pending{};
  if (js_PublishAsyncGetPendingList(&pending, im.js) != NATS_OK) return;
  const std::string why = "publish: no answer within " +
                          std::to_string(im.o.publish_timeout_ms / 1000) + " s";
  for (int i = 0; i < pending.Count; ++i) {
    PublishResult r;
    r.seq = MessageSeq(pending.Msgs[i]);
    r.error = Status::Unavailable(why);
    out->push_back(std::move(r));
  }
  l.lock();
  im.in_flight -= std::min<size_t>(im.in_flight, pending.Count);
  im.quiet_since_us = MonoMicros();
  l.unlock();
  natsMsgList_Destroy(&pending);
}

size_t NatsClient::in_flight() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->in_flight;
}

bool NatsClient::connected() const {
  return natsConnection_Status(impl_->nc) == NATS_CONN_STATUS_CONNECTED;
}

uint64_t NatsClient::reconnects() const { return impl_->reconnects.load(); }

std::string NatsClient::TakeAsyncError() {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::string e;
  e.swap(impl_->async_error);
  return e;
}

}  // namespace cdc::nats
