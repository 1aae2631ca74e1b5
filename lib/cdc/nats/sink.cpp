#include "cdc/nats/sink.h"

#include <algorithm>
#include <charconv>

namespace cdc::nats {

namespace {

Result<uint64_t> ParseSeq(const std::string& text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0)
    return Status::Corruption("Cdc-Seq \"" + text + "\" is not a seq");
  return v;
}

}  // namespace

std::string SubjectToken(std::string_view name) {
  if (name.empty()) return "_";
  std::string out;
  out.reserve(name.size());
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char ch : name) {
    if (ch <= 0x20 || ch == 0x7f || ch == '.' || ch == '*' || ch == '>' ||
        ch == '%') {
      out.push_back('%');
      out.push_back(kHex[ch >> 4]);
      out.push_back(kHex[ch & 15]);
    } else {
      out.push_back(static_cast<char>(ch));
    }
  }
  return out;
}

Status CheckSubjectTemplate(const std::string& t) {
  bool table = false;
  std::string probe;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '}')
      return Status::Usage("--subject \"" + t + "\": unmatched '}'");
    if (t[i] != '{') {
      probe.push_back(t[i]);
      continue;
    }
    size_t close = t.find('}', i);
    if (close == std::string::npos)
      return Status::Usage("--subject \"" + t + "\": unmatched '{'");
    std::string_view f(t.data() + i + 1, close - i - 1);
    if (f == "table") table = true;
    if (f != "schema" && f != "table")
      return Status::Usage("--subject \"" + t + "\": unknown field {" +
                           std::string(f) + "} (use {schema}, {table})");
    probe += "x";
    i = close;
  }
  if (!table)
    return Status::Usage("--subject \"" + t + "\" must contain {table}");
  size_t start = 0;
  for (;;) {
    size_t dot = probe.find('.', start);
    std::string_view tok = std::string_view(probe).substr(
        start, dot == std::string::npos ? std::string::npos : dot - start);
    if (tok.empty() || tok == "*" || tok == ">" ||
        tok.find_first_of(" \t\r\n") != std::string_view::npos)
      return Status::Usage("--subject \"" + t +
                           "\" is not a subject: empty tokens, wildcards and "
                           "spaces are not allowed");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return Status::OK();
}

Sink::Sink(SinkOptions o, std::unique_ptr<event::Renderer> renderer)
    : o_(std::move(o)), renderer_(std::move(renderer)) {}

Status Sink::Render(const consume::Event& e, Pending* p) {
  std::string lsn, xid, op, schema, table;
  head_ = event::EventHead();  // ParseHead leaves absent members as they are
  if (!o_.native_input && event::ParseHead(e.stored, &head_)) {
    lsn = head_.lsn;
    xid = std::to_string(head_.xid);
    op = head_.op;
    schema = head_.schema;
    table = head_.table;
  } else {
    Status s = event::ParseJsonObject(e.stored, &obj_);
    if (!s.ok()) return s.Annotate("event seq " + std::to_string(e.seq));
    auto str = [&](const char* k) {
      const event::JsonMember* m = obj_.find(k);
      if (m == nullptr) return std::string();
      if (m->kind == event::JsonKind::kString) return m->string_value;
      return std::string(obj_.value(*m));
    };
    lsn = str("lsn");
    xid = str("xid");
    op = str("op");
    schema = str("schema");
    table = str("table");
  }
  OutMessage& m = p->m;
  m.seq = e.seq;
  if (o_.native_input) {
    m.payload.assign(e.stored);
  } else {
    scratch_.clear();
    CDC_RETURN_IF_ERROR(renderer_->Append(e.seq, e.stored, e.last, &scratch_)
                            .Annotate("event seq " + std::to_string(e.seq)));
    if (scratch_.empty()) {
      p->empty = true;  // e.g. a schema change in the debezium format
      return Status::OK();
    }
    if (scratch_.back() == '\n') scratch_.pop_back();
    m.payload = scratch_;
  }
  m.subject.clear();
  const std::string& t = o_.subject_template;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '{') {
      m.subject.push_back(t[i]);
      continue;
    }
    size_t close = t.find('}', i);  // CheckSubjectTemplate: always there
    std::string_view f(t.data() + i + 1, close - i - 1);
    m.subject += SubjectToken(f == "schema" ? schema : table);
    i = close;
  }
  const std::string seq = std::to_string(e.seq);
  m.headers = {{"Nats-Msg-Id", o_.log_id + ":" + seq},
               {"Nats-Expected-Stream", o_.stream},
               {"Cdc-Log", o_.log_id},
               {"Cdc-Seq", seq},
               {"Cdc-Lsn", lsn},
               {"Cdc-Xid", xid},
               {"Cdc-Op", op}};
  if (!table.empty()) m.headers.push_back({"Cdc-Table", schema + "." + table});
  if (e.last) m.headers.push_back({"Cdc-Last", "true"});
  // An empty header value does not survive nats.c's parser: leave it out.
  std::erase_if(m.headers, [](const auto& h) { return h.second.empty(); });
  return Status::OK();
}

Status Sink::Add(Client& c, const std::vector<consume::Event>& events) {
  for (const consume::Event& e : events) {
    if (e.seq <= acked_ || e.seq <= last_added_) continue;
    Pending p;
    CDC_RETURN_IF_ERROR(Render(e, &p));
    last_added_ = e.seq;
    pending_.push_back(std::move(p));
  }
  PopStored();
  return Pump(c);
}

Status Sink::Pump(Client& c) {
  while (!need_resync_ && next_send_ < pending_.size()) {
    Pending& p = pending_[next_send_];
    if (!p.empty) {
      Status s = c.PublishAsync(p.m, expect_last_);
      if (!s.ok()) {
        need_resync_ = true;
        if (failure_.ok()) failure_ = s;
        return Status::OK();
      }
      ++expect_last_;
    }
    p.sent = true;
    ++next_send_;
  }
  return Status::OK();
}

void Sink::PopStored() {
  while (!pending_.empty() &&
         (pending_.front().stored ||
          (pending_.front().empty && pending_.front().sent))) {
    acked_ = std::max(acked_, pending_.front().m.seq);
    pending_.pop_front();
    if (next_send_ > 0) --next_send_;
  }
}

Status Sink::Poll(Client& c, int wait_ms) {
  std::vector<PublishResult> rs;
  c.TakeResults(&rs, c.in_flight() > 0 ? wait_ms : 0);
  for (const PublishResult& r : rs) {
    auto it = std::lower_bound(
        pending_.begin(), pending_.end(), r.seq,
        [](const Pending& p, uint64_t seq) { return p.m.seq < seq; });
    // An answer to a publish made before a resync, for an event the
    // resync found stored, has nothing left to update.
    const bool known = it != pending_.end() && it->m.seq == r.seq;
    if (r.error.ok()) {
      if (r.duplicate)
        ++stats_.duplicates;
      else
        ++stats_.published;
      if (known) it->stored = true;
      continue;
    }
    need_resync_ = true;
    if (r.wrong_last_seq) {
      ++stats_.refused;
    } else if (failure_.ok()) {
      failure_ = r.error;
    }
  }
  PopStored();
  if (need_resync_) {
    // A permissions violation is reported on the side; the publish itself
    // only times out.
    std::string async = c.TakeAsyncError();
    if (!async.empty() &&
        async.find("Permissions Violation") != std::string::npos)
      failure_ = Status::Permission("publish: " + async);
    if (c.in_flight() > 0) return Status::OK();  // wait for every answer
    CDC_RETURN_IF_ERROR(Resync(c));
  }
  return Pump(c);
}

Status Sink::Resync(Client& c) {
  ++stats_.resyncs;
  bool last = false;
  CDC_ASSIGN_OR_RETURN(std::optional<uint64_t> stored, ReadEnd(c, &last));
  const uint64_t s = stored.value_or(0);
  if (s < acked_)
    return Status::Corruption(
        "stream " + o_.stream + " holds this log's events only up to seq " +
        std::to_string(s) + " but it had stored up to seq " +
        std::to_string(acked_) +
        ": messages were purged or deleted while cdc-nats ran");
  acked_ = s;
  while (!pending_.empty() && pending_.front().m.seq <= s) pending_.pop_front();
  for (Pending& p : pending_) p.sent = p.stored = false;
  next_send_ = 0;
  need_resync_ = false;
  Status f = failure_;
  failure_ = Status::OK();
  // What a retry cannot cure stops the sink, now that acked_seq() is
  // exactly what the stream holds.
  if (!f.ok() && f.code() != Code::kUnavailable) return f;
  return Status::OK();
}

Result<std::optional<uint64_t>> Sink::Resume(Client& c) {
  bool last = true;
  CDC_ASSIGN_OR_RETURN(std::optional<uint64_t> stored, ReadEnd(c, &last));
  acked_ = stored.value_or(0);
  renderer_->Restart(last);
  return stored;
}

Result<std::optional<uint64_t>> Sink::ReadEnd(Client& c, bool* last) {
  CDC_ASSIGN_OR_RETURN(StreamEnd end, c.Info(o_.stream));
  expect_last_ = end.last_seq;
  if (end.last_seq == 0) return std::optional<uint64_t>();
  CDC_ASSIGN_OR_RETURN(auto m, c.Get(o_.stream, end.last_seq));
  if (!m)
    return Status::Config("stream " + o_.stream + ": its last message (" +
                          std::to_string(end.last_seq) +
                          ") was deleted; cdc-nats resumes after the seq "
                          "that message holds");
  if (m->log_id.empty() || m->seq.empty())
    return Status::Busy("stream " + o_.stream + ": its last message (" +
                        std::to_string(end.last_seq) + ", subject " +
                        m->subject +
                        ") was not published by cdc-nats: another publisher "
                        "writes to the stream's subjects");
  if (m->log_id != o_.log_id)
    return Status::Config("stream " + o_.stream + " holds the events of log " +
                          m->log_id + ", not of log " + o_.log_id +
                          " (use another stream)");
  CDC_ASSIGN_OR_RETURN(uint64_t seq, ParseSeq(m->seq));
  *last = m->last;
  return std::optional<uint64_t>(seq);
}

}  // namespace cdc::nats
