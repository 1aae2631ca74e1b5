#include "nats/fake_jetstream.h"

#include <deque>
#include <string_view>

namespace cdc::test {

namespace {

// OutMessage's headers ("Name\0value\0...") as a name -> value map.
std::map<std::string, std::string> Headers(const std::string& h) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < h.size()) {
    size_t a = h.find('\0', i);
    size_t b = h.find('\0', a + 1);
    out[h.substr(i, a - i)] = h.substr(a + 1, b - a - 1);
    i = b + 1;
  }
  return out;
}

class FakeClient final : public nats::Client {
 public:
  explicit FakeClient(FakeJetStream* s) : s_(s) {}

  Result<nats::StreamEnd> EnsureStream(const nats::StreamOptions& o) override {
    if (dead_) return Dead();
    nats::StreamEnd end;
    if (!s_->exists) {
      s_->exists = true;
      s_->stream_name = o.name;
      end.created = true;
    }
    end.last_seq = end.msgs = s_->messages.size();
    return end;
  }
  Result<nats::StreamEnd> Info(const std::string& stream) override {
    if (dead_) return Dead();
    const uint64_t call = ++s_->info_calls;
    if (s_->fail_info_at != 0 && call >= s_->fail_info_at &&
        call < s_->fail_info_at + s_->info_failures) {
      return Status::Unavailable("stream info: timeout (leader election)");
    }
    if (!s_->exists || stream != s_->stream_name)
      return Status::Config("stream " + stream + " not found");
    nats::StreamEnd end;
    end.last_seq = end.msgs = s_->messages.size();
    return end;
  }
  Result<std::optional<nats::StoredMessage>> Get(const std::string& stream,
                                                 uint64_t seq) override {
    if (dead_) return Dead();
    if (stream != s_->stream_name || seq == 0 || seq > s_->messages.size())
      return std::optional<nats::StoredMessage>();
    return std::optional<nats::StoredMessage>(s_->messages[seq - 1].head);
  }

  Status PublishAsync(const nats::OutMessage& m,
                      std::optional<uint64_t> expect_last) override {
    if (dead_) return Dead();
    const uint64_t n = ++s_->received;
    ++in_flight_;
    nats::PublishResult r;
    r.seq = m.seq;
    if (n == s_->drop_at) {
      r.error = Timeout();
      late_.push_back(r);
      return Status::OK();
    }
    auto h = Headers(m.headers);
    const std::string id = h["Nats-Msg-Id"];
    if (auto it = s_->ids.find(id);
        s_->dedupe && !id.empty() && it != s_->ids.end()) {
      r.duplicate = true;
      r.stream_seq = it->second;
    } else if (expect_last && *expect_last != s_->messages.size()) {
      ++s_->refused;
      r.wrong_last_seq = true;
      r.error = Status::Internal("publish: wrong last sequence: " +
                                 std::to_string(s_->messages.size()));
    } else {
      FakeJetStream::Message stored;
      stored.head.stream_seq = s_->messages.size() + 1;
      stored.head.subject = m.subject;
      stored.head.msg_id = id;
      size_t colon = id.rfind(':');
      if (colon != std::string::npos) {
        stored.head.log_id = id.substr(0, colon);
        stored.head.seq = id.substr(colon + 1);
      }
      stored.head.seq_header = h["Cdc-Seq"];
      stored.head.last = h["Cdc-Last"] == "true";
      stored.payload = m.payload;
      s_->messages.push_back(std::move(stored));
      if (!id.empty()) s_->ids[id] = s_->messages.size();
      r.stream_seq = s_->messages.size();
    }
    if (n == s_->lose_answer_at) {
      r = nats::PublishResult{m.seq, 0, false, Timeout(), false};
      late_.push_back(r);
    } else {
      answers_.push_back(r);
    }
    if (n == s_->die_at) dead_ = true;
    return Status::OK();
  }
  void TakeResults(std::vector<nats::PublishResult>* out, int) override {
    if (dead_) return;
    // Timeouts come once every other answer is in.
    std::deque<nats::PublishResult>& q = answers_.empty() ? late_ : answers_;
    for (auto& r : q) out->push_back(std::move(r));
    in_flight_ -= q.size();
    q.clear();
  }
  size_t in_flight() const override { return in_flight_; }
  bool connected() const override { return !dead_; }
  uint64_t reconnects() const override { return 0; }
  std::string TakeAsyncError() override { return ""; }

 private:
  static Status Dead() { return Status::Unavailable("connection closed"); }
  static Status Timeout() {
    return Status::Unavailable("publish: no answer for 10 s");
  }

  FakeJetStream* s_;
  std::deque<nats::PublishResult> answers_, late_;
  size_t in_flight_ = 0;
  bool dead_ = false;
};

}  // namespace

Result<std::unique_ptr<nats::Client>> FakeJetStream::Connect() {
  return std::unique_ptr<nats::Client>(new FakeClient(this));
}

void FakeJetStream::PublishForeign(const std::string& subject,
                                   const std::string& payload) {
  Message m;
  m.head.stream_seq = messages.size() + 1;
  m.head.subject = subject;
  m.payload = payload;
  messages.push_back(std::move(m));
}

}  // namespace cdc::test
