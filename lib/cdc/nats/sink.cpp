#include "cdc/nats/sink.h"

#include <algorithm>
#include <charconv>

namespace cdc::nats {

namespace {

Result<uint64_t> ParseSeq(const std::string& text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0)
    return Status::Corruption("Nats-Msg-Id ends in \"" + text +
                              "\", not a seq");
  return v;
}

}  // namespace

void AppendSubjectToken(std::string_view name, std::string* out) {
  if (name.empty()) {
    out->push_back('_');
    return;
  }
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char ch : name) {
    if (ch <= 0x20 || ch == 0x7f || ch == '.' || ch == '*' || ch == '>' ||
        ch == '%') {
      out->push_back('%');
      out->push_back(kHex[ch >> 4]);
      out->push_back(kHex[ch & 15]);
    } else {
      out->push_back(static_cast<char>(ch));
    }
  }
}

std::string SubjectToken(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  AppendSubjectToken(name, &out);
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

Result<std::vector<std::string>> StreamSubjectsFor(const std::string& t) {
  size_t brace = t.find('{');
  size_t dot = t.rfind('.', brace);
  if (dot == std::string::npos || brace == std::string::npos)
    return Status::Usage("--subject \"" + t +
                         "\" starts with a field: name the stream's "
                         "subjects with --stream-subjects");
  return std::vector<std::string>{t.substr(0, dot + 1) + ">"};
}

Sink::Sink(SinkOptions o, std::unique_ptr<event::Renderer> renderer)
    : o_(std::move(o)), renderer_(std::move(renderer)) {
  size_t n = 16;
  // Add takes whole batches beyond max_pending: room for one more.
  while (n < 2 * o_.max_pending + 1) n *= 2;
  ring_.resize(n);
}

Sink::Pending& Sink::PushBack() {
  if (count_ == ring_.size()) {
    // A transaction larger than the ring: grow it, oldest first.
    std::vector<Pending> bigger(ring_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(at(i));
    ring_.swap(bigger);
    head_ = 0;
  }
  Pending& p = at(count_++);
  p.m.clear();
  p.sent = p.stored = p.empty = false;
  return p;
}

void Sink::PopFront() {
  head_ = (head_ + 1) & (ring_.size() - 1);
  --count_;
  if (next_send_ > 0) --next_send_;
}

size_t Sink::Find(uint64_t seq) {
  size_t lo = 0, hi = count_;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (at(mid).m.seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < count_ && at(lo).m.seq == seq ? lo : count_;
}

Status Sink::Render(const consume::Event& e, Pending* p) {
  std::string_view lsn, op, schema, table;
  std::optional<uint64_t> xid;  // else xid_text
  std::string xid_text;
  head_fields_ = event::EventHead();  // ParseHead leaves absent members
  if (!o_.native_input && event::ParseHead(e.stored, &head_fields_)) {
    lsn = head_fields_.lsn;
    xid = head_fields_.xid;
    op = head_fields_.op;
    schema = head_fields_.schema;
    table = head_fields_.table;
  } else {
    Status s = event::ParseJsonObject(e.stored, &obj_);
    if (!s.ok()) return s.Annotate("event seq " + std::to_string(e.seq));
    auto str = [&](const char* k) -> std::string_view {
      const event::JsonMember* m = obj_.find(k);
      if (m == nullptr) return {};
      if (m->kind == event::JsonKind::kString) return m->string_value;
      return obj_.value(*m);
    };
    lsn = str("lsn");
    xid_text = std::string(str("xid"));
    op = str("op");
    schema = str("schema");
    table = str("table");
  }
  OutMessage& m = p->m;
  m.seq = e.seq;
  if (o_.native_input) {
    m.payload.assign(e.stored);
  } else {
    CDC_RETURN_IF_ERROR(renderer_->Append(e.seq, e.stored, e.last, &m.payload)
                            .Annotate("event seq " + std::to_string(e.seq)));
    if (m.payload.empty()) {
      p->empty = true;  // e.g. a schema change in the debezium format
      return Status::OK();
    }
    if (m.payload.back() == '\n') m.payload.pop_back();
  }
  const std::string& t = o_.subject_template;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '{') {
      m.subject.push_back(t[i]);
      continue;
    }
    size_t close = t.find('}', i);  // CheckSubjectTemplate: always there
    std::string_view f(t.data() + i + 1, close - i - 1);
    AppendSubjectToken(f == "schema" ? schema : table, &m.subject);
    i = close;
  }
  char num[24];
  auto text = [&num](uint64_t v) {
    auto r = std::to_chars(num, num + sizeof num, v);
    return std::string_view(num, static_cast<size_t>(r.ptr - num));
  };
  m.headers.append("Nats-Msg-Id");
  m.headers.push_back('\0');
  m.headers.append(o_.log_id);
  m.headers.push_back(':');
  m.headers.append(text(e.seq));
  m.headers.push_back('\0');
  m.AddHeader("Nats-Expected-Stream", o_.stream);
  m.AddHeader("Cdc-Seq", text(e.seq));
  m.AddHeader("Cdc-Lsn", lsn);
  m.AddHeader("Cdc-Xid", xid ? text(*xid) : std::string_view(xid_text));
  m.AddHeader("Cdc-Op", op);
  if (!table.empty()) {
    scratch_.assign(schema);
    scratch_.push_back('.');
    scratch_.append(table);
    m.AddHeader("Cdc-Table", scratch_);
  }
  if (e.last) m.AddHeader("Cdc-Last", "true");
  return Status::OK();
}

Status Sink::Add(Client& c, const std::vector<consume::Event>& events) {
  for (const consume::Event& e : events) {
    if (e.seq <= acked_ || e.seq <= last_added_) continue;
    Pending& p = PushBack();
    Status s = Render(e, &p);
    if (!s.ok()) {
      --count_;  // the slot just taken
      return s;
    }
    last_added_ = e.seq;
  }
  PopStored();
  return Pump(c);
}

Status Sink::Pump(Client& c) {
  while (!need_resync_ && next_send_ < count_) {
    Pending& p = at(next_send_);
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
  while (count_ > 0 && (at(0).stored || (at(0).empty && at(0).sent))) {
    acked_ = std::max(acked_, at(0).m.seq);
    PopFront();
  }
}

Status Sink::Poll(Client& c, int wait_ms) {
  results_.clear();
  c.TakeResults(&results_, c.in_flight() > 0 ? wait_ms : 0);
  for (const PublishResult& r : results_) {
    // An answer to a publish made before a resync, for an event the
    // resync found stored, has nothing left to update.
    const size_t i = Find(r.seq);
    if (r.error.ok()) {
      if (r.duplicate)
        ++stats_.duplicates;
      else
        ++stats_.published;
      if (i < count_) at(i).stored = true;
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
  while (count_ > 0 && at(0).m.seq <= s) PopFront();
  for (size_t i = 0; i < count_; ++i) at(i).sent = at(i).stored = false;
  next_send_ = 0;
  need_resync_ = false;
  Status f = failure_;
  failure_ = Status::OK();
  if (f.ok() && stats_.refused > refused_at_resync_) {
    ++stats_.moved;
    stats_.moved_refused = stats_.refused - refused_at_resync_;
  }
  refused_at_resync_ = stats_.refused;
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
  // A message of another publisher may carry a Nats-Msg-Id of its own.
  if (m->log_id.empty() || m->seq.empty() || m->seq_header != m->seq)
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
