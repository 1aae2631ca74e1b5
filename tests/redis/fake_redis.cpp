#include "redis/fake_redis.h"

#include <deque>

namespace cdc::test {

namespace {

using redis::Reply;
using Kind = FakeRedis::Value::Kind;

Reply Status(std::string s) {
  Reply r;
  r.type = Reply::Type::kStatus;
  r.str = std::move(s);
  return r;
}
Reply Error(std::string s) {
  Reply r;
  r.type = Reply::Type::kError;
  r.str = std::move(s);
  return r;
}
Reply Int(long long v) {
  Reply r;
  r.type = Reply::Type::kInteger;
  r.integer = v;
  return r;
}
Reply Str(std::string s) {
  Reply r;
  r.type = Reply::Type::kString;
  r.str = std::move(s);
  return r;
}
Reply Nil() { return Reply(); }
Reply WrongType() {
  return Error(
      "WRONGTYPE Operation against a key holding the wrong kind of value");
}

// "12-0" as a pair of numbers, for ordering stream IDs.
std::pair<uint64_t, uint64_t> Id(const std::string& id) {
  size_t dash = id.find('-');
  return {std::stoull(id.substr(0, dash)),
          dash == std::string::npos ? 0 : std::stoull(id.substr(dash + 1))};
}

class FakeConnection final : public redis::Connection {
 public:
  explicit FakeConnection(FakeRedis* server) : server_(server) {
    session_.id = server_->next_id++;
    server_->sessions[session_.id] = &session_;
  }
  ~FakeConnection() override {
    auto it = server_->sessions.find(session_.id);
    if (it != server_->sessions.end() && it->second == &session_)
      server_->sessions.erase(it);
  }

  cdc::Status Append(const redis::Args& a) override {
    if (dead_) return cdc::Status::Unavailable("Redis connection is closed");
    std::vector<std::string> cmd;
    for (size_t i = 0; i < a.size(); ++i)
      cmd.emplace_back(a.ptrs()[i], a.lens()[i]);
    unsent_.push_back(std::move(cmd));
    return cdc::Status::OK();
  }
  cdc::Status SendIfOver(size_t bytes) override {
    (void)bytes;
    return Send();
  }
  cdc::Status Read(Reply* out) override {
    CDC_RETURN_IF_ERROR(Send());
    if (replies_.empty())
      return cdc::Status::Internal("fake Redis: read with no reply due");
    *out = std::move(replies_.front());
    replies_.pop_front();
    return cdc::Status::OK();
  }
  bool dead() const override { return dead_; }

 private:
  // The server receives what is queued, in order, up to a cut.
  cdc::Status Send() {
    if (dead_)
      return cdc::Status::Unavailable("Redis: server closed the connection");
    for (auto& cmd : unsent_) {
      if (session_.killed) {
        dead_ = true;
        unsent_.clear();
        replies_.clear();
        return cdc::Status::Unavailable("Redis: server closed the connection");
      }
      ++server_->received;
      replies_.push_back(server_->Execute(&session_, cmd));
      if (server_->cut_at != 0 && server_->received == server_->cut_at) {
        dead_ = true;  // the queued transaction dies with the connection
        if (server_->stay_down) server_->refuse = 1 << 30;
        unsent_.clear();
        replies_.clear();
        return cdc::Status::Unavailable("Redis: server closed the connection");
      }
    }
    unsent_.clear();
    return cdc::Status::OK();
  }

  FakeRedis* server_;
  FakeRedis::Session session_;
  std::vector<std::vector<std::string>> unsent_;
  std::deque<Reply> replies_;
  bool dead_ = false;
};

}  // namespace

Result<std::unique_ptr<redis::Connection>> FakeRedis::Connect() {
  if (refuse > 0) {
    --refuse;
    return cdc::Status::Unavailable("cannot connect to Redis at fake");
  }
  ++connects;
  return std::unique_ptr<redis::Connection>(new FakeConnection(this));
}

Reply FakeRedis::Run(const std::vector<std::string>& args) {
  return RunOne(args);
}

Reply FakeRedis::Execute(Session* s, const std::vector<std::string>& args) {
  const std::string& verb = args.at(0);
  if (verb == "CLIENT" && !s->in_multi) {
    if (deny_client)
      return Error(
          "NOPERM User default has no permissions to run the 'client|" +
          args.at(1) + "' command");
    const std::string& sub = args.at(1);
    if (sub == "SETNAME") {
      s->name = args.at(2);
      return Status("OK");
    }
    if (sub == "ID") return Int(s->id);
    if (sub == "LIST") {
      std::string out;
      for (const auto& [id, other] : sessions)
        out += "id=" + std::to_string(id) +
               " addr=127.0.0.1:1 name=" + other->name + " db=0 multi=" +
               (other->in_multi ? std::to_string(other->queued.size()) : "-1") +
               " cmd=client|list\n";
      return Str(out);
    }
    if (sub == "KILL" && args.size() == 4 && args[2] == "ID") {
      auto it = sessions.find(std::stoll(args[3]));
      if (it == sessions.end()) return Error("ERR No such client");
      it->second->killed = true;
      it->second->in_multi = false;
      it->second->queued.clear();
      sessions.erase(it);
      return Status("OK");
    }
    return Error("ERR unknown subcommand '" + sub + "'");
  }
  if (verb == "MULTI") {
    if (s->in_multi) return Error("ERR MULTI calls can not be nested");
    s->in_multi = true;
    s->aborted = false;
    s->queued.clear();
    return Status("OK");
  }
  if (verb == "DISCARD") {
    if (!s->in_multi) return Error("ERR DISCARD without MULTI");
    s->in_multi = false;
    s->queued.clear();
    return Status("OK");
  }
  if (verb == "EXEC") {
    if (!s->in_multi) return Error("ERR EXEC without MULTI");
    s->in_multi = false;
    if (s->aborted) {
      s->queued.clear();
      return Error(
          "EXECABORT Transaction discarded because of previous errors.");
    }
    Reply r;
    r.type = Reply::Type::kArray;
    for (const auto& q : s->queued) r.elements.push_back(RunOne(q));
    s->queued.clear();
    return r;
  }
  const bool write = verb != "GET" && verb != "TYPE" && verb != "XRANGE" &&
                     verb != "SELECT" && verb != "AUTH";
  if (readonly && write) {
    if (s->in_multi) s->aborted = true;
    return Error("READONLY You can't write against a read only replica.");
  }
  if (s->in_multi) {
    s->queued.push_back(args);
    return Status("QUEUED");
  }
  return RunOne(args);
}

Reply FakeRedis::RunOne(const std::vector<std::string>& a) {
  const std::string& verb = a.at(0);
  auto find = [this](const std::string& k) -> Value* {
    auto it = keys.find(k);
    return it == keys.end() ? nullptr : &it->second;
  };
  auto typed = [&](const std::string& k, Kind kind, Value** out) -> bool {
    Value* v = find(k);
    if (v != nullptr && v->kind != kind) return false;
    if (v == nullptr) {
      v = &keys[k];
      v->kind = kind;
    }
    *out = v;
    return true;
  };
  if (verb == "SELECT" || verb == "AUTH") return Status("OK");
  if (verb == "GET") {
    Value* v = find(a.at(1));
    if (v == nullptr) return Nil();
    if (v->kind != Kind::kString) return WrongType();
    return Str(v->str);
  }
  if (verb == "SET") {
    Value& v = keys[a.at(1)];
    v = Value();
    v.str = a.at(2);
    return Status("OK");
  }
  if (verb == "DEL") {
    long long n = 0;
    for (size_t i = 1; i < a.size(); ++i) n += keys.erase(a[i]);
    return Int(n);
  }
  if (verb == "TYPE") {
    Value* v = find(a.at(1));
    if (v == nullptr) return Status("none");
    static const char* names[] = {"string", "hash", "set", "stream"};
    return Status(names[static_cast<int>(v->kind)]);
  }
  if (verb == "XADD") {
    size_t i = 2;
    if (a.at(i) == "MAXLEN") i += 3;  // MAXLEN ~ N: trimming not modelled
    const std::string& id = a.at(i);
    Value* v = find(a[1]);
    if (v != nullptr && v->kind != Kind::kStream) return WrongType();
    if (v != nullptr && !v->stream.empty() &&
        Id(id) <= Id(v->stream.back().first))
      return Error(
          "ERR The ID specified in XADD is equal or smaller than the target "
          "stream top item");
    typed(a[1], Kind::kStream, &v);
    v->stream.emplace_back(
        id, std::vector<std::string>(a.begin() + static_cast<long>(i) + 1,
                                     a.end()));
    return Str(id);
  }
  if (verb == "XRANGE") {
    Value* v = find(a.at(1));
    Reply r;
    r.type = Reply::Type::kArray;
    if (v == nullptr) return r;
    if (v->kind != Kind::kStream) return WrongType();
    for (const auto& [id, fields] : v->stream) {
      if (Id(id) < Id(a.at(2)) || Id(a.at(3)) < Id(id)) continue;
      Reply e;
      e.type = Reply::Type::kArray;
      e.elements.push_back(Str(id));
      r.elements.push_back(e);
    }
    return r;
  }
  if (verb == "HSET" || verb == "HDEL") {
    Value* v = nullptr;
    if (!typed(a.at(1), Kind::kHash, &v)) return WrongType();
    long long n = 0;
    if (verb == "HSET") {
      for (size_t i = 2; i + 1 < a.size(); i += 2)
        n += v->hash.insert_or_assign(a[i], a[i + 1]).second ? 1 : 0;
    } else {
      for (size_t i = 2; i < a.size(); ++i) n += v->hash.erase(a[i]);
    }
    if (v->hash.empty()) keys.erase(a[1]);
    return Int(n);
  }
  if (verb == "SADD" || verb == "SREM") {
    Value* v = nullptr;
    if (!typed(a.at(1), Kind::kSet, &v)) return WrongType();
    long long n = 0;
    for (size_t i = 2; i < a.size(); ++i)
      n += verb == "SADD" ? v->set.insert(a[i]).second : v->set.erase(a[i]);
    if (v->set.empty()) keys.erase(a[1]);
    return Int(n);
  }
  if (verb == "COPY") {
    Value* from = find(a.at(1));
    if (from == nullptr) return Int(0);
    keys[a.at(2)] = *from;
    return Int(1);
  }
  if (verb == "EVAL") {  // the truncate script: the set's members, the set
    const std::string& set_key = a.at(3);
    Value* v = find(set_key);
    if (v != nullptr && v->kind != Kind::kSet) return WrongType();
    if (v != nullptr)
      for (const std::string& m : std::set<std::string>(v->set)) keys.erase(m);
    keys.erase(set_key);
    return Int(0);
  }
  return Error("ERR unknown command '" + verb + "'");
}

std::string FakeRedis::Dump() const {
  std::string o;
  for (const auto& [k, v] : keys) {
    o += k + " = ";
    switch (v.kind) {
      case Kind::kString:
        o += "\"" + v.str + "\"";
        break;
      case Kind::kHash:
        for (const auto& [f, x] : v.hash) o += f + ":" + x + " ";
        break;
      case Kind::kSet:
        for (const auto& m : v.set) o += m + " ";
        break;
      case Kind::kStream:
        for (const auto& [id, fields] : v.stream) {
          o += id + "{";
          for (const auto& f : fields) o += f + ",";
          o += "} ";
        }
        break;
    }
    o += "\n";
  }
  return o;
}

}  // namespace cdc::test
