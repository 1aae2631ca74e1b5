#include "cdc/redis/sink.h"

#include <algorithm>
#include <charconv>

#include "cdc/base/logging.h"

namespace cdc::redis {

namespace {

constexpr std::string_view kStreamTop =
    "equal or smaller than the target stream top item";

bool Escaped(unsigned char ch) {
  if (ch <= 0x20 || ch == 0x7f) return true;
  switch (ch) {
    case '%':  // the escape itself: without it, not injective
    case '.':  // between schema and table
    case ':':  // between the table and the row's key
    case '*':  // glob characters, so that SCAN MATCH cdc:public.*
    case '?':  // and a pattern built from a name match what they say
    case '[':
    case ']':
    case '\\':
    case '{':  // a hash tag ({...}) and --key-template's own syntax
    case '}':
    case '"':  // quotes: a key can be pasted into redis-cli as it is
    case '\'':
      return true;
    default:
      return false;
  }
}

}  // namespace

void AppendKeyName(std::string_view name, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char ch : name) {
    if (Escaped(ch)) {
      out->push_back('%');
      out->push_back(kHex[ch >> 4]);
      out->push_back(kHex[ch & 15]);
    } else {
      out->push_back(static_cast<char>(ch));
    }
  }
}

std::string KeyName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  AppendKeyName(name, &out);
  return out;
}

Status CheckTemplate(Mode mode, const std::string& t) {
  bool table = false, key = false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '}')
      return Status::Usage("--key-template \"" + t + "\": unmatched '}'");
    if (t[i] != '{') continue;
    size_t close = t.find('}', i);
    if (close == std::string::npos)
      return Status::Usage("--key-template \"" + t + "\": unmatched '{'");
    std::string_view f(t.data() + i + 1, close - i - 1);
    if (f == "table" || f == "table_raw") table = true;
    if (f == "key") key = true;
    if (f != "prefix" && f != "schema" && f != "table" && f != "key" &&
        f != "schema_raw" && f != "table_raw")
      return Status::Usage("--key-template \"" + t + "\": unknown field {" +
                           std::string(f) +
                           "} (use {prefix}, {schema}, {table}, {key}, "
                           "{schema_raw}, {table_raw})");
    i = close;
  }
  if (!table)
    return Status::Usage("--key-template \"" + t +
                         "\" must contain {table} or {table_raw}");
  if (mode == Mode::kHash && !key)
    return Status::Usage("--key-template \"" + t +
                         "\" must contain {key} in hash mode");
  if (mode == Mode::kStream && key)
    return Status::Usage("--key-template \"" + t +
                         "\": {key} is for hash mode (a stream is per table)");
  return Status::OK();
}

Sink::Sink(SinkOptions o) : o_(std::move(o)) {
  if (o_.key_template.empty())
    o_.key_template = o_.mode == Mode::kStream
                          ? "{prefix}{schema}.{table}"
                          : "{prefix}{schema}.{table}:{key}";
  applied_key_ = o_.prefix + "__cdc_applied:" + o_.consumer;
  unconfirmed_key_ = o_.prefix + "__cdc_unconfirmed:" + o_.consumer;
}

std::string Sink::AppliedKey() const { return applied_key_; }

std::string Sink::MembersKey(std::string_view schema,
                             std::string_view table) const {
  std::string k = o_.prefix;
  k += "__cdc_rows:";
  AppendKeyName(schema, &k);
  k += '.';
  AppendKeyName(table, &k);
  return k;
}

std::string Sink::Expand(std::string_view schema, std::string_view table,
                         std::string_view key) const {
  const std::string& t = o_.key_template;
  std::string out;
  out.reserve(t.size() + schema.size() + table.size() + key.size() + 8);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '{') {
      out.push_back(t[i]);
      continue;
    }
    size_t close = t.find('}', i);  // CheckTemplate: always there
    std::string_view f(t.data() + i + 1, close - i - 1);
    if (f == "schema") {
      AppendKeyName(schema, &out);
    } else if (f == "table") {
      AppendKeyName(table, &out);
    } else {
      out += f == "prefix"       ? std::string_view(o_.prefix)
             : f == "schema_raw" ? schema
             : f == "table_raw"  ? table
                                 : key;
    }
    i = close;
  }
  return out;
}

std::string Sink::ClientName() const {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char ch : applied_key_) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "cdc-redis-";
  for (int shift = 60; shift >= 0; shift -= 4) name += kHex[(h >> shift) & 15];
  return name;
}

Status Sink::WarnUnfenced(std::string_view command, std::string_view error) {
  if (!warned_fence_)
    LogWarning("Redis refused " + std::string(command) + " (" +
               std::string(error) +
               "): earlier connections are not fenced off, so a batch of "
               "one given up on may still land late; grant +client|setname "
               "+client|id +client|list +client|kill (cdc-redis(1))");
  warned_fence_ = true;
  return Status::OK();
}

Status Sink::Fence(Connection& c) {
  const std::string name = ClientName();
  Args a;
  a << "CLIENT"
    << "SETNAME" << name;
  CDC_RETURN_IF_ERROR(c.Append(a));
  a.clear();
  a << "CLIENT"
    << "ID";
  CDC_RETURN_IF_ERROR(c.Append(a));
  a.clear();
  a << "CLIENT"
    << "LIST"
    << "TYPE"
    << "normal";
  CDC_RETURN_IF_ERROR(c.Append(a));
  Reply r[3];
  for (Reply& x : r) CDC_RETURN_IF_ERROR(c.Read(&x));
  static constexpr const char* kSent[3] = {"CLIENT SETNAME", "CLIENT ID",
                                           "CLIENT LIST"};
  for (int i = 0; i < 3; ++i)
    if (r[i].is_error()) return WarnUnfenced(kSent[i], r[i].str);
  if (r[1].type != Reply::Type::kInteger || r[2].type != Reply::Type::kString)
    return Status::Internal("Redis answered CLIENT ID or CLIENT LIST oddly");
  // One client a line, its id first: "id=7 addr=... name=cdc-redis-... ...".
  const std::string own = std::to_string(r[1].integer);
  const std::string named = " name=" + name + " ";
  std::vector<std::string> stale;
  std::string_view list = r[2].str;
  while (!list.empty()) {
    const size_t nl = std::min(list.find('\n'), list.size());
    const std::string_view line = list.substr(0, nl);
    list.remove_prefix(std::min(nl + 1, list.size()));
    if (line.rfind("id=", 0) != 0 || line.find(named) == std::string_view::npos)
      continue;
    const std::string_view id = line.substr(3, line.find(' ') - 3);
    if (id != own) stale.emplace_back(id);
  }
  for (const std::string& id : stale) {
    a.clear();
    a << "CLIENT"
      << "KILL"
      << "ID" << id;
    CDC_RETURN_IF_ERROR(c.Append(a));
  }
  for (size_t i = 0; i < stale.size(); ++i) {
    Reply k;
    CDC_RETURN_IF_ERROR(c.Read(&k));
    // "No such client": it closed between the list and the kill.
    if (k.is_error() && k.str.rfind("ERR No such client", 0) != 0)
      CDC_RETURN_IF_ERROR(WarnUnfenced("CLIENT KILL", k.str));
  }
  if (!stale.empty())
    LogInfo("closed " + std::to_string(stale.size()) +
            " earlier connection(s) of this sink before reading its position");
  return Status::OK();
}

Result<std::optional<uint64_t>> Sink::ReadApplied(Connection& c) {
  CDC_RETURN_IF_ERROR(Fence(c));
  // GET, not MGET: MGET answers nil for a key of another type, as for a
  // missing one, and the batch's SET would then replace whatever is there
  // (someone's hash, list, stream ...). GET answers WRONGTYPE instead.
  const std::string* keys[2] = {&applied_key_, &unconfirmed_key_};
  Args a;
  for (const std::string* k : keys) {
    a.clear();
    a << "GET" << *k;
    CDC_RETURN_IF_ERROR(c.Append(a));
  }
  Reply r[2];
  for (Reply& x : r) CDC_RETURN_IF_ERROR(c.Read(&x));
  std::optional<uint64_t> seqs[2];
  for (size_t i = 0; i < 2; ++i) {
    const Reply& e = r[i];
    const std::string& key = *keys[i];
    if (e.type == Reply::Type::kNil) continue;
    if (e.is_error() && e.str.rfind("WRONGTYPE", 0) != 0)
      return ReplyErrorStatus(e.str, "GET " + key);
    std::string held = "a value that is not a seq (a decimal number)";
    if (e.is_error()) {
      auto t = c.Command({"TYPE", key});
      if (!t.ok()) return t.status();
      held = "a " +
             (t->type == Reply::Type::kStatus ? t->str : std::string("value")) +
             ", not a seq (a string of a decimal number)";
    } else {
      uint64_t v = 0;
      const char* b = e.str.data();
      const char* end = b + e.str.size();
      auto res = std::from_chars(b, end, v);
      if (e.type == Reply::Type::kString && res.ec == std::errc() &&
          res.ptr == end && b != end) {
        seqs[i] = v;
        continue;
      }
    }
    return Status::Corruption(
        "Redis key " + key + " holds " + held +
        "; the key belongs to this sink: nothing was written (remove the "
        "key, or choose another --prefix or consumer name)");
  }
  unconfirmed_ = seqs[1].has_value();
  // A batch whose EXEC answer was never read as clean (the sink died
  // first) is applied again, whole, from just after where it began.
  if (seqs[1] && (!seqs[0] || *seqs[1] < *seqs[0])) return seqs[1];
  return seqs[0];
}

Status Sink::Confirm(Connection& c) {
  if (!pending_.empty())
    return Status::Internal("Confirm with batches in flight");
  if (!unconfirmed_) return Status::OK();
  CDC_ASSIGN_OR_RETURN(Reply r, c.Command({"DEL", unconfirmed_key_}));
  if (r.is_error()) return ReplyErrorStatus(r.str, "DEL " + unconfirmed_key_);
  unconfirmed_ = false;
  return Status::OK();
}

Status Sink::Queue(Connection& c, uint64_t seq, const std::string& key) {
  CDC_RETURN_IF_ERROR(c.Append(args_));
  queued_->push_back(Queued{seq, args_.ptrs()[0], key});
  args_.clear();
  scratch_.clear();
  // Redis queues the first commands of a batch while the rest is built.
  return c.SendIfOver(64 << 10);
}

Status Sink::FlushMembership(Connection& c, const std::string& set_key) {
  auto it = members_.find(set_key);
  if (it == members_.end()) return Status::OK();
  for (bool add : {true, false}) {
    args_ << (add ? "SADD" : "SREM") << set_key;
    for (const auto& [member, added] : it->second)
      if (added == add) args_ << member;
    if (args_.size() > 2) {
      CDC_RETURN_IF_ERROR(Queue(c, 0, set_key));
    } else {
      args_.clear();
    }
  }
  members_.erase(it);
  return Status::OK();
}

Status Sink::FlushAllMembership(Connection& c) {
  while (!members_.empty()) {
    std::string k = members_.begin()->first;
    CDC_RETURN_IF_ERROR(FlushMembership(c, k));
  }
  return Status::OK();
}

Status Sink::AppendEvent(Connection& c, const EventRef& ev, BatchResult* r) {
  Status s = obj_.Parse(ev.stored);
  if (!s.ok()) return s.Annotate("event seq " + std::to_string(ev.seq));
  const Field* op = obj_.find("op");
  if (op == nullptr || op->kind != event::JsonKind::kString)
    return Status::BadInput("event seq " + std::to_string(ev.seq) +
                            " has no \"op\"");
  if (o_.mode == Mode::kStream) return AppendStream(c, ev, op->str, obj_);
  return AppendHash(c, ev, op->str, obj_, r);
}

Result<BatchResult> Sink::Apply(Connection& c,
                                const std::vector<EventRef>& events,
                                std::optional<uint64_t> applied) {
  if (!pending_.empty())
    return Status::Internal("Apply with batches in flight");
  Status s = Begin(c, events, applied);
  if (s.ok()) s = Exec(c);
  if (!s.ok()) {
    Status a = Abandon(c);
    if (!a.ok() || !pending_.empty()) Reset();  // the connection is dead
    return s;
  }
  return Finish(c);
}

Status Sink::Begin(Connection& c, const std::vector<EventRef>& events,
                   std::optional<uint64_t> applied) {
  if (pending_.size() >= 2)
    return Status::Internal("more than two batches in flight");
  Pending& p = pending_.emplace_back();
  p.r.applied_seq = applied.value_or(0);
  size_t first = 0;
  while (first < events.size() && events[first].seq <= p.r.applied_seq) ++first;
  p.r.already = first;
  p.events = events.size() - first;
  if (first == events.size()) {
    p.empty = true;
    return Status::OK();
  }
  p.prev = applied;
  p.last = events.back().seq;
  queued_ = &p.queued;
  members_.clear();
  args_.clear();
  scratch_.clear();
  args_ << "MULTI";
  CDC_RETURN_IF_ERROR(c.Append(args_));
  args_.clear();
  Status built;
  for (size_t i = first; i < events.size() && built.ok(); ++i) {
    if (i > first && events[i].seq <= events[i - 1].seq)
      built = Status::BadInput(
          "event seq " + std::to_string(events[i].seq) + " follows seq " +
          std::to_string(events[i - 1].seq) + ": seqs must increase");
    else
      built = AppendEvent(c, events[i], &p.r);
  }
  if (built.ok()) built = FlushAllMembership(c);
  if (!built.ok()) {
    // The buffer holds an open MULTI: Abandon closes it with DISCARD.
    args_.clear();
    scratch_.clear();
    return built;
  }
  // The batch and its applied seq are one transaction. Beside it, the
  // seq just before the batch is kept as unconfirmed until the sink has
  // read EXEC's answer as clean (the next batch's transaction, which is
  // executed only then, moves it; Confirm removes it): a command that
  // fails inside EXEC (WRONGTYPE) does not undo the applied seq, and a
  // sink killed before it could put it back would otherwise go on after
  // a batch that failed. ReadApplied takes the lower of the two.
  std::string seq_text = std::to_string(p.last);
  std::string before_text = std::to_string(events[first].seq - 1);
  args_ << "SET" << unconfirmed_key_ << before_text;
  CDC_RETURN_IF_ERROR(Queue(c, 0, unconfirmed_key_));
  args_ << "SET" << applied_key_ << seq_text;
  CDC_RETURN_IF_ERROR(Queue(c, 0, applied_key_));
  unconfirmed_ = true;
  p.r.commands = p.queued.size();
  return Status::OK();
}

Status Sink::Exec(Connection& c) {
  for (Pending& p : pending_) {
    if (p.executed) continue;
    p.executed = true;
    if (p.empty) return Status::OK();
    args_.clear();
    args_ << "EXEC";
    Status s = c.Append(args_);
    args_.clear();
    return s;
  }
  return Status::Internal("Exec without a batch begun");
}

Status Sink::Abandon(Connection& c) {
  Status s;
  while (!pending_.empty() && !pending_.back().executed) {
    Pending p = std::move(pending_.back());
    pending_.pop_back();
    if (p.empty) continue;
    if (!c.dead() && s.ok()) {
      args_.clear();
      scratch_.clear();
      args_ << "DISCARD";
      s = c.Append(args_);
      args_.clear();
      discarded_ += p.queued.size() + 2;  // MULTI, QUEUED..., DISCARD
    }
  }
  if (s.ok()) s = DrainDiscarded(c);
  return s;
}

// The replies of discarded batches come after those of every batch
// executed before them: read them once no executed batch is left.
Status Sink::DrainDiscarded(Connection& c) {
  if (!pending_.empty()) return Status::OK();
  Reply ignore;
  for (; discarded_ > 0; --discarded_) CDC_RETURN_IF_ERROR(c.Read(&ignore));
  return Status::OK();
}

void Sink::Reset() {
  pending_.clear();
  discarded_ = 0;
  queued_ = nullptr;
}

Result<BatchResult> Sink::Finish(Connection& c) {
  if (pending_.empty() || !pending_.front().executed)
    return Status::Internal("Finish without a batch executed");
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  BatchResult r = p.r;
  if (p.empty) return r;
  // Replies: MULTI, one per queued command, EXEC.
  Reply reply;
  CDC_RETURN_IF_ERROR(c.Read(&reply));
  Status queue_error;
  if (reply.is_error()) queue_error = ReplyErrorStatus(reply.str, "MULTI");
  for (const Queued& q : p.queued) {
    CDC_RETURN_IF_ERROR(c.Read(&reply));
    if (reply.is_error() && queue_error.ok())
      queue_error = ReplyErrorStatus(
          reply.str, std::string(q.verb) + " " + q.key +
                         (q.seq ? " (event seq " + std::to_string(q.seq) + ")"
                                : std::string()));
  }
  CDC_RETURN_IF_ERROR(c.Read(&reply));
  if (reply.is_error()) {
    // EXECABORT: a command was refused while queued (OOM, READONLY, NOAUTH
    // ...); nothing of the batch was applied.
    if (!queue_error.ok()) return queue_error;
    return ReplyErrorStatus(reply.str, "EXEC");
  }
  if (!queue_error.ok()) return queue_error;
  if (reply.type != Reply::Type::kArray ||
      reply.elements.size() != p.queued.size())
    return Status::Internal(
        "EXEC answered " + std::to_string(reply.elements.size()) +
        " replies for " + std::to_string(p.queued.size()) + " commands");
  CDC_RETURN_IF_ERROR(DrainDiscarded(c));
  for (const Reply& e : reply.elements) {
    if (!e.is_error()) continue;
    // Settle sends commands of its own: not inside the next batch's open
    // MULTI. The next batch is discarded (the caller begins it again).
    CDC_RETURN_IF_ERROR(Abandon(c));
    break;
  }
  CDC_RETURN_IF_ERROR(Settle(c, reply, p, &r.duplicates));
  r.applied = p.events;
  r.applied_seq = p.last;
  return r;
}

// EXEC ran every command; some may have failed on their own (MULTI has no
// rollback). A stream entry that is already there is what a replay looks
// like when the applied seq was lost (a flushed or evicted key): the entry
// with exactly that ID must exist, or something else wrote to the stream.
// Anything else failed: put the applied seq back so the batch is applied
// again, whole, once the cause is fixed.
Status Sink::Settle(Connection& c, const Reply& exec, const Pending& p,
                    uint64_t* duplicates) {
  Status first;
  for (size_t i = 0; i < exec.elements.size(); ++i) {
    const Reply& e = exec.elements[i];
    if (!e.is_error()) continue;
    const Queued& q = p.queued[i];
    std::string where =
        std::string(q.verb) + " " + q.key +
        (q.seq ? " (event seq " + std::to_string(q.seq) + ")" : std::string());
    if (std::string_view(q.verb) == "XADD" &&
        e.str.find(kStreamTop) != std::string::npos) {
      const std::string id = std::to_string(q.seq) + "-0";
      CDC_ASSIGN_OR_RETURN(Reply x, c.Command({"XRANGE", q.key, id, id}));
      if (!x.is_error() && x.type == Reply::Type::kArray &&
          x.elements.size() == 1) {
        ++*duplicates;
        continue;
      }
      if (first.ok())
        first = Status::Corruption(
            where + ": stream " + q.key + " is past entry " + id +
            " but does not hold it: something other than this sink (" +
            AppliedKey() + ") writes to it");
      continue;
    }
    if (first.ok()) first = ReplyErrorStatus(e.str, where);
  }
  if (first.ok()) return first;
  const bool marked = !exec.elements.back().is_error();
  if (marked) {
    Status put = PutBack(c, p.prev);
    if (!put.ok())
      return first.Annotate(
          "(and the applied seq could not be put back: " + put.message() + ")");
  }
  std::string msg = first.message() +
                    " (the batch is not applied: it is applied again, "
                    "whole, from seq " +
                    std::to_string(p.prev.value_or(0) + 1) +
                    " on the next run)";
  // Not a transport failure: never retried in a loop.
  return Status(IsRetryable(first) ? Code::kInternal : first.code(), msg);
}

Status Sink::PutBack(Connection& c, std::optional<uint64_t> prev) {
  Result<Reply> r =
      prev ? c.Command({"SET", AppliedKey(), std::to_string(*prev)})
           : c.Command({"DEL", AppliedKey()});
  if (!r.ok()) return r.status();
  if (r->is_error()) return ReplyErrorStatus(r->str, "restore " + AppliedKey());
  return Status::OK();
}

}  // namespace cdc::redis
