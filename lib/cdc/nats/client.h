// A connection to a NATS cluster with JetStream (nats.c), for cdc-nats.
//
// One Client owns one natsConnection and its JetStream context (RAII, as a
// PGconn is owned in pg/). nats.c reconnects by itself across the servers
// it was given (and those the cluster announces) with the backoff set in
// ConnectOptions; publishes made while it reconnects are buffered.
//
// Asynchronous publishing: PublishAsync hands a message to nats.c and
// returns at once; the server's answer (a stored sequence, or an error)
// arrives on nats.c's own thread and is queued here; TakeResults hands the
// queued answers to the caller's thread. When no answer at all arrived for
// publish_timeout_ms while publishes were in flight, TakeResults takes
// every unanswered message back from nats.c and answers each with a
// timeout. Every message published gets exactly one result. Apart from that
// queue (guarded by a mutex) a Client is used from one thread.
//
// Errors become Status kinds here, where they happen (ErrorStatus): no
// nats.c type or code appears in this header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::nats {

struct ConnectOptions {
  // nats://host:port or tls://host:port, at least one (ParseServers).
  std::vector<std::string> servers;
  std::string creds_file;  // a .creds file (JWT and NKey seed)
  std::string user, password, token;
  std::string ca_file;              // trusted CAs for TLS
  std::string cert_file, key_file;  // a client certificate for TLS
  std::string name = "cdc-nats";    // the connection's name on the server
  int connect_timeout_ms = 5000;
  // Between reconnect attempts: doubling from reconnect_min_ms up to
  // reconnect_max_ms. nats.c keeps trying for ever; the caller decides
  // when a failure has lasted too long.
  int reconnect_min_ms = 100;
  int reconnect_max_ms = 5000;
  int request_timeout_ms = 5000;  // JetStream API requests
  // Publishes in flight with no answer for this long (none stored, none
  // refused) are taken back from nats.c and answered as Unavailable.
  int publish_timeout_ms = 10000;
  int max_in_flight = 1024;  // asynchronous publishes without answer
};

// Fills what the environment gives and `o` lacks: the credentials file
// from NATS_CREDS (when o->creds_file is empty), NATS_USER, NATS_PASSWORD
// and NATS_TOKEN (passwords never on the command line).
void CredentialsFromEnvironment(ConnectOptions* o);

// Splits "nats://a:4222,tls://b:4222" and checks each URL; Usage error for
// an empty list or a URL of another scheme. A URL may hold user:password@
// (nats.c uses it); the error never repeats a password.
Result<std::vector<std::string>> ParseServers(std::string_view list);
// `url` with any user:password@ shown as "…@", for messages.
std::string RedactServerUrl(std::string_view url);

struct StreamOptions {
  std::string name;
  std::vector<std::string> subjects = {"cdc.>"};
  int replicas = 1;
  int64_t duplicate_window_us = 120 * 1000000LL;
  int64_t max_bytes = -1;  // -1: unlimited
  bool discard_new = false;
};

// What the stream holds at its end.
struct StreamEnd {
  uint64_t last_seq = 0;  // the stream's last sequence (0: never written)
  uint64_t msgs = 0;
  bool created = false;  // EnsureStream created it
};

// The headers of one stored message (those cdc-nats reads back).
struct StoredMessage {
  uint64_t stream_seq = 0;
  std::string subject;
  std::string msg_id;      // Nats-Msg-Id
  std::string log_id;      // Nats-Msg-Id's part before its last ':'
  std::string seq;         // and the part after it: the seq, as text
  std::string seq_header;  // Cdc-Seq (the same seq, on cdc-nats's messages)
  bool last = false;       // Cdc-Last: true
};

// One message to publish. Its headers are kept in one buffer, each name
// and each value ended by a NUL ("Name\0value\0Name\0value\0"), so that
// building a message allocates nothing once its buffers have grown.
struct OutMessage {
  uint64_t seq = 0;  // the caller's key for its result
  std::string subject;
  std::string payload;
  std::string headers;

  void clear() {
    seq = 0;
    subject.clear();
    payload.clear();
    headers.clear();
  }
  // An empty value is left out (nats.c's parser drops it on the way back).
  void AddHeader(std::string_view name, std::string_view value) {
    if (value.empty()) return;
    headers.append(name);
    headers.push_back('\0');
    headers.append(value);
    headers.push_back('\0');
  }
};

// The server's answer to one asynchronous publish.
struct PublishResult {
  uint64_t seq = 0;             // OutMessage::seq
  uint64_t stream_seq = 0;      // where the stream stored it
  bool duplicate = false;       // the server already held this Nats-Msg-Id
  Status error;                 // not OK: not stored (or unknown: a timeout)
  bool wrong_last_seq = false;  // refused by the expected-last-seq check
};

// A JetStream connection as the sink uses it. Client::Open gives the real
// one (nats.c); tests drive the sink through a fake stream
// (tests/nats/fake_jetstream.h) that answers, loses answers and refuses
// publishes where a test says.
class Client {
 public:
  // Connects (trying every server). Unavailable when none answers within
  // connect_timeout_ms; Permission for refused credentials; Config for a
  // TLS or credentials file that cannot be used.
  static Result<std::unique_ptr<Client>> Open(const ConnectOptions& o);
  virtual ~Client() = default;

  // The stream as it is, or created with `o` when it does not exist.
  // Config when JetStream is not enabled for the account.
  virtual Result<StreamEnd> EnsureStream(const StreamOptions& o) = 0;
  virtual Result<StreamEnd> Info(const std::string& stream) = 0;
  // The message at `stream_seq`; nullopt when there is none (deleted).
  virtual Result<std::optional<StoredMessage>> Get(const std::string& stream,
                                                   uint64_t stream_seq) = 0;

  // Publishes without waiting. With `expect_last` set the server stores
  // the message only if the stream's last sequence is exactly that (0: an
  // empty stream). Blocks while max_in_flight publishes await an answer.
  virtual Status PublishAsync(const OutMessage& m,
                              std::optional<uint64_t> expect_last) = 0;
  // Moves the answers that arrived to `out` (appended), waiting up to
  // `wait_ms` for at least one when none is there yet.
  virtual void TakeResults(std::vector<PublishResult>* out, int wait_ms) = 0;
  // Publishes handed over whose result was not taken yet.
  virtual size_t in_flight() const = 0;
  // True while there is a connection to a server.
  virtual bool connected() const = 0;
  // Reconnections since Open.
  virtual uint64_t reconnects() const = 0;
  // The last asynchronous error the server sent (e.g. a permissions
  // violation), empty if none; cleared by reading it.
  virtual std::string TakeAsyncError() = 0;
};

// The Status for a nats.c failure `s` (a natsStatus) with JetStream error
// code `js_code` (0: none) and the server's text: no responders or
// JetStream not enabled -> Config; authorization and permission violations
// -> Permission; maximum bytes/messages exceeded -> IOError (a full stream
// is a full disk); a timeout, closed or no server -> Unavailable.
Status ErrorStatus(int s, int js_code, std::string_view text,
                   std::string_view what);

}  // namespace cdc::nats
