#include "cdc/consume/source.h"

#include <charconv>

#include "cdc/consume/line_reader.h"
#include "cdc/cursor/consumers.h"
#include "cdc/event/event.h"
#include "cdc/event/json_object.h"
#include "cdc/event/json_scan.h"
#include "cdc/event/json_text.h"
#include "cdc/log/reader.h"

namespace cdc::consume {

namespace {

// A line longer than this is checked where it is (event::ScanJsonObject)
// instead of being parsed into a copy, and a buffer that held one gives
// its memory back once it is handed on: a sink reading one 200 MB event
// holds about two copies of it at a time, not six.
constexpr size_t kLongLine = 1 << 20;

void Release(std::string* s) {
  s->clear();
  if (s->capacity() > kLongLine) std::string().swap(*s);
}

class LogSource : public Source {
 public:
  LogSource(std::string dir, std::unique_ptr<Reader> r, Pieces pieces)
      : dir_(std::move(dir)),
        reader_(std::move(r)),
        pieces_(pieces),
        handed_(reader_->consumed_seq()) {}

  Result<bool> Fill(SinkBatch* b, size_t max) override {
    bool any = false;
    for (;;) {
      CDC_ASSIGN_OR_RETURN(bool got, reader_->ReadBatch(max, &in_));
      if (!got) {
        if (any && b->items.size() > 0 && !b->items.back().last)
          return Status::Corruption("log " + dir_ +
                                    ": a transaction ends early at seq " +
                                    std::to_string(b->items.back().seq));
        return any;
      }
      any = true;
      handed_ = in_.end_seq;
      for (size_t i = 0; i < in_.size(); ++i) {
        Event e = in_[i];
        b->Add(e.seq, e.stored, e.last);
      }
      // A transaction larger than the bound comes in pieces: one MULTI
      // takes it whole, unless it may be handed out in pieces.
      if (in_.ends_txn) {
        reads_only_ = true;  // of the next transaction
        return true;
      }
      if (Splits()) return true;
    }
  }

  Result<bool> Wait(int ms) override {
    CDC_RETURN_IF_ERROR(reader_->Wait(ms).status());
    return true;
  }

  Result<uint64_t> LastSeq() override {
    CDC_ASSIGN_OR_RETURN(log::LogSummary s, log::Summarize(dir_));
    return s.next_seq - 1;
  }

  Status Ack(uint64_t seq) override { return reader_->Ack(seq); }
  // After what was handed out (and the hidden events among it), not the
  // reader's position: that may be inside a transaction held back for the
  // next batch, whose events an ack up to it would skip.
  uint64_t NextSeq() const override { return handed_ + 1; }

 private:
  std::string dir_;
  std::unique_ptr<Reader> reader_;
  // Whether the open transaction, of which `in_` ends with a piece, may
  // be handed out so far.
  bool Splits() {
    if (pieces_ != Pieces::kSnapshots) return pieces_ == Pieces::kAlways;
    size_t i = in_.size();  // the open transaction's first event in in_
    while (i > 0 && !in_[i - 1].last) --i;
    if (i > 0) reads_only_ = true;  // it begins here
    for (; i < in_.size() && reads_only_; ++i)
      reads_only_ = IsSnapshotRead(in_[i].stored);
    return reads_only_;
  }

  static bool IsSnapshotRead(std::string_view stored) {
    event::HeadView v;
    if (event::ScanHead(stored, &v)) return v.op == "r" || v.op == "s";
    event::EventHead h;
    return event::ParseHead(stored, &h) && (h.op == "r" || h.op == "s");
  }

  Pieces pieces_;
  bool reads_only_ = true;  // every event of the open transaction so far
  TxnBatch in_;
  uint64_t handed_;  // the seq up to which events were handed out
};

class StdinSource : public Source {
 public:
  Result<bool> Fill(SinkBatch* b, size_t max) override {
    bool any = false;
    if (!bad_.ok()) return bad_;
    while (b->items.size() < max) {
      if (!ready_.empty()) {
        if (b->items.empty()) {
          // Hand the bytes over rather than copy them.
          b->bytes.swap(ready_bytes_);
          for (const Line& l : ready_)
            b->items.push_back({l.seq, l.off, l.len, l.last});
        } else {
          for (const Line& l : ready_)
            b->Add(l.seq, std::string_view(ready_bytes_).substr(l.off, l.len),
                   l.last);
        }
        ready_.clear();
        Release(&ready_bytes_);
        any = true;
        continue;
      }
      if (eof_) break;
      std::string_view line;
      auto got = lines_.Next(0, &line);
      if (!got.ok()) {
        bad_ = got.status();
        break;
      }
      if (*got == LineReader::Got::kTimeout) break;
      if (*got == LineReader::Got::kEof) {
        eof_ = true;
        Close();
        continue;
      }
      Status s = Take(line);
      if (!s.ok()) {
        bad_ = lines_.LineError(s.message());
        break;
      }
    }
    if (!any && !bad_.ok()) return bad_;
    return any;
  }

  Result<bool> Wait(int ms) override {
    if (eof_ && ready_.empty()) return false;
    if (!bad_.ok()) return bad_;
    std::string_view line;
    CDC_ASSIGN_OR_RETURN(auto got, lines_.Next(ms, &line));
    if (got == LineReader::Got::kEof) {
      eof_ = true;
      Close();
    } else if (got == LineReader::Got::kLine) {
      Status s = Take(line);
      if (!s.ok()) bad_ = lines_.LineError(s.message());
    }
    return true;
  }

 private:
  struct Line {
    uint64_t seq;
    size_t off, len;
    bool last;
  };

  // What Take needs of a line.
  struct Head {
    bool has_seq = false;  // "seq" is a positive integer
    uint64_t seq = 0;
    bool has_op = false;  // "op" is a string
    std::string id;       // the transaction: "lsn" and "xid" as JSON text
    bool last = false;
  };

  Status HeadOf(std::string_view line, Head* h) {
    CDC_RETURN_IF_ERROR(event::ParseJsonObject(line, &obj_));
    if (const event::JsonMember* seq = obj_.find("seq");
        seq != nullptr && seq->kind == event::JsonKind::kUnsigned) {
      h->seq = seq->unsigned_value;
      h->has_seq = h->seq != 0;
    }
    const event::JsonMember* op = obj_.find("op");
    h->has_op = op != nullptr && op->kind == event::JsonKind::kString;
    for (const char* k : {"lsn", "xid"})
      if (const event::JsonMember* m = obj_.find(k))
        h->id.append(obj_.value(*m)).push_back(' ');
    const event::JsonMember* last = obj_.find("last");
    h->last = last != nullptr && obj_.value(*last) == "true";
    return Status::OK();
  }

  // The same for a long line, which is not copied: its members' text is
  // rendered as ParseJsonObject renders it only for the small ones used.
  Status HeadOfLong(std::string_view line, Head* h) {
    CDC_RETURN_IF_ERROR(event::ScanJsonObject(line, &views_));
    for (const char* k : {"seq", "op", "lsn", "xid", "last"}) {
      const event::JsonMemberView* m = nullptr;
      for (const event::JsonMemberView& v : views_)
        if (v.key == k) m = &v;
      if (m == nullptr) continue;
      const std::string_view key(k);
      if (key == "seq") {
        h->seq = m->kind == event::JsonKind::kUnsigned ? m->unsigned_value : 0;
        h->has_seq = h->seq != 0;
      } else if (key == "op") {
        h->has_op = m->kind == event::JsonKind::kString;
      } else if (key == "last") {
        h->last = m->kind == event::JsonKind::kBool && m->text == "true";
      } else {
        AppendRendered(*m, &h->id);
        h->id.push_back(' ');
      }
    }
    return Status::OK();
  }

  // A value's text as ParseJsonObject renders it (an object or array
  // compacted, its strings as written).
  static void AppendRendered(const event::JsonMemberView& m, std::string* out) {
    char buf[24];
    switch (m.kind) {
      case event::JsonKind::kString: {
        std::string s;
        event::AppendDecodedJsonString(m.text, &s);
        event::AppendJsonStringUnchecked(s, out);
        return;
      }
      case event::JsonKind::kUnsigned:
        out->append(buf,
                    std::to_chars(buf, buf + sizeof buf, m.unsigned_value).ptr);
        return;
      case event::JsonKind::kInteger: {
        int64_t v = 0;
        std::from_chars(m.text.data(), m.text.data() + m.text.size(), v);
        out->append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
        return;
      }
      case event::JsonKind::kObject:
      case event::JsonKind::kArray:
        (void)event::AppendCompactJson(m.text, out);
        return;
      default:
        out->append(m.text);
        return;
    }
  }

  // Checks one line and adds it to the transaction being read.
  Status Take(std::string_view line) {
    Head h;
    CDC_RETURN_IF_ERROR(line.size() > kLongLine ? HeadOfLong(line, &h)
                                                : HeadOf(line, &h));
    if (!h.has_seq)
      return Status::BadInput("an event needs \"seq\", a positive integer");
    if (h.seq <= last_seq_)
      return Status::BadInput("seq " + std::to_string(h.seq) + " after seq " +
                              std::to_string(last_seq_) +
                              ": seqs must increase");
    if (!h.has_op) return Status::BadInput("an event needs \"op\", a string");
    // A new transaction begins: the open one is complete (a --table or
    // --op filter upstream may have dropped its "last" event).
    if (!open_.empty() && h.id != open_id_) Close();
    last_seq_ = h.seq;
    open_.push_back({last_seq_, open_bytes_.size(), line.size(), h.last});
    open_bytes_.append(line);
    open_id_ = std::move(h.id);
    if (h.last) Close();
    return Status::OK();
  }

  void Close() {
    if (open_.empty()) return;
    open_.back().last = true;
    if (ready_.empty()) {
      // Nothing waits to be handed out: move the bytes, do not copy them.
      ready_bytes_.swap(open_bytes_);
      ready_.swap(open_);
    } else {
      for (Line l : open_) {
        l.off += ready_bytes_.size();
        ready_.push_back(l);
      }
      ready_bytes_.append(open_bytes_);
    }
    open_.clear();
    Release(&open_bytes_);
  }

  LineReader lines_{0};
  std::vector<Line> ready_;  // complete transactions
  std::string ready_bytes_;
  std::vector<Line> open_;  // the transaction being read
  std::string open_bytes_;
  std::string open_id_;
  uint64_t last_seq_ = 0;
  bool eof_ = false;
  Status bad_;
  event::JsonObject obj_;
  std::vector<event::JsonMemberView> views_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenLogSource(
    const std::string& dir, const std::string& consumer,
    std::optional<uint64_t> applied, bool follow, const std::string& target,
    bool schema_changes, Pieces pieces) {
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(consumer));
  if (applied) {
    CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
    if (*applied >= sum.next_seq)
      return Status::Config(
          target + " says consumer " + consumer + " applied up to seq " +
          std::to_string(*applied) + " but the log ends at seq " +
          std::to_string(sum.next_seq - 1) +
          ": it was fed from another log (use another consumer name, or "
          "remove the applied position there)");
    CDC_ASSIGN_OR_RETURN(auto store, cursor::ConsumerStore::Open(dir));
    bool created;
    CDC_ASSIGN_OR_RETURN(cursor::Consumer c,
                         store->GetOrCreate(consumer, *applied, &created));
    if (c.acked_seq != *applied)
      CDC_RETURN_IF_ERROR(store->Seek(consumer, *applied));
  }
  Options o;
  o.log_dir = dir;
  o.consumer = consumer;
  o.follow = follow;
  if (!schema_changes) {
    CDC_ASSIGN_OR_RETURN(o.selection,
                         Selection::Make(dir, {}, "", "", {}, false));
  }
  CDC_ASSIGN_OR_RETURN(auto reader, Reader::Open(std::move(o)));
  return std::unique_ptr<Source>(new LogSource(dir, std::move(reader), pieces));
}

std::unique_ptr<Source> OpenStdinSource() {
  return std::unique_ptr<Source>(new StdinSource());
}

}  // namespace cdc::consume
