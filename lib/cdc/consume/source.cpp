#include "cdc/consume/source.h"

#include "cdc/consume/line_reader.h"
#include "cdc/cursor/consumers.h"
#include "cdc/event/json_object.h"
#include "cdc/log/reader.h"

namespace cdc::consume {

namespace {

class LogSource : public Source {
 public:
  LogSource(std::string dir, std::unique_ptr<Reader> r)
      : dir_(std::move(dir)), reader_(std::move(r)) {}

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
      for (size_t i = 0; i < in_.size(); ++i) {
        Event e = in_[i];
        b->Add(e.seq, e.stored, e.last);
      }
      // A transaction larger than the bound comes in pieces: one MULTI
      // takes it whole.
      if (in_.ends_txn) return true;
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
  uint64_t NextSeq() const override { return reader_->consumed_seq() + 1; }

 private:
  std::string dir_;
  std::unique_ptr<Reader> reader_;
  TxnBatch in_;
};

class StdinSource : public Source {
 public:
  Result<bool> Fill(SinkBatch* b, size_t max) override {
    bool any = false;
    if (!bad_.ok()) return bad_;
    while (b->items.size() < max) {
      if (!ready_.empty()) {
        for (const Line& l : ready_)
          b->Add(l.seq, std::string_view(ready_bytes_).substr(l.off, l.len),
                 l.last);
        ready_.clear();
        ready_bytes_.clear();
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

  // Checks one line and adds it to the transaction being read.
  Status Take(std::string_view line) {
    CDC_RETURN_IF_ERROR(event::ParseJsonObject(line, &obj_));
    const event::JsonMember* seq = obj_.find("seq");
    if (seq == nullptr || seq->kind != event::JsonKind::kUnsigned ||
        seq->unsigned_value == 0)
      return Status::BadInput("an event needs \"seq\", a positive integer");
    if (seq->unsigned_value <= last_seq_)
      return Status::BadInput("seq " + std::to_string(seq->unsigned_value) +
                              " after seq " + std::to_string(last_seq_) +
                              ": seqs must increase");
    const event::JsonMember* op = obj_.find("op");
    if (op == nullptr || op->kind != event::JsonKind::kString)
      return Status::BadInput("an event needs \"op\", a string");
    std::string id;
    for (const char* k : {"lsn", "xid"})
      if (const event::JsonMember* m = obj_.find(k))
        id.append(obj_.value(*m)).push_back(' ');
    // A new transaction begins: the open one is complete (a --table or
    // --op filter upstream may have dropped its "last" event).
    if (!open_.empty() && id != open_id_) Close();
    last_seq_ = seq->unsigned_value;
    const event::JsonMember* last = obj_.find("last");
    const bool is_last = last != nullptr && obj_.value(*last) == "true";
    open_.push_back({last_seq_, open_bytes_.size(), line.size(), is_last});
    open_bytes_.append(line);
    open_id_ = id;
    if (is_last) Close();
    return Status::OK();
  }

  void Close() {
    if (open_.empty()) return;
    open_.back().last = true;
    for (Line l : open_) {
      l.off += ready_bytes_.size();
      ready_.push_back(l);
    }
    ready_bytes_.append(open_bytes_);
    open_.clear();
    open_bytes_.clear();
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
};

}  // namespace

Result<std::unique_ptr<Source>> OpenLogSource(const std::string& dir,
                                              const std::string& consumer,
                                              std::optional<uint64_t> applied,
                                              bool follow,
                                              const std::string& target) {
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
  CDC_ASSIGN_OR_RETURN(auto reader, Reader::Open(std::move(o)));
  return std::unique_ptr<Source>(new LogSource(dir, std::move(reader)));
}

std::unique_ptr<Source> OpenStdinSource() {
  return std::unique_ptr<Source>(new StdinSource());
}

}  // namespace cdc::consume
