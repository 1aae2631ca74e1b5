#include "cdc/consume/reader.h"

#include <algorithm>
#include <unordered_map>

#include "cdc/cursor/consumers.h"
#include "cdc/event/renderer.h"
#include "cdc/event/stored.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/schemas.h"

namespace cdc::consume {

Reader::Reader(Options o) : opts_(std::move(o)) {}
Reader::~Reader() = default;

Result<std::unique_ptr<Reader>> Reader::Open(Options o) {
  std::unique_ptr<Reader> r(new Reader(std::move(o)));
  CDC_ASSIGN_OR_RETURN(r->log_, log::LogReader::Open(r->opts_.log_dir));
  CDC_RETURN_IF_ERROR(r->Place());
  if (r->opts_.follow) {
    CDC_ASSIGN_OR_RETURN(auto w, log::ChangeWaiter::Create(r->opts_.log_dir));
    r->waiter_.emplace(std::move(w));
  }
  r->consumed_ = r->log_->next_seq() - 1;
  r->batch_end_ = r->consumed_;
  return r;
}

Status Reader::Place() {
  log::LogReader& r = *log_;
  const std::string& name = opts_.consumer;
  if (name.empty()) {
    if (opts_.from.empty()) return r.SeekEarliest();
    CDC_ASSIGN_OR_RETURN(Position p, ParsePosition(opts_.from));
    return SeekTo(r, p);
  }
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(name));
  CDC_ASSIGN_OR_RETURN(store_, cursor::ConsumerStore::Open(opts_.log_dir));
  CDC_ASSIGN_OR_RETURN(auto existing, store_->Get(name));
  if (existing && !opts_.from.empty())
    return Status::Usage("consumer " + name +
                         " exists; --from only places a new consumer (move "
                         "this one with \"cdc-ack -c " +
                         name + " --seek POS\")");
  cursor::Consumer c;
  bool created = false;
  if (existing) {
    c = *existing;
  } else {
    Position p;
    if (!opts_.from.empty()) {
      CDC_ASSIGN_OR_RETURN(p, ParsePosition(opts_.from));
    }
    CDC_ASSIGN_OR_RETURN(uint64_t first, ResolvePosition(opts_.log_dir, p));
    // Another reader may create it between Get and here: its place wins.
    CDC_ASSIGN_OR_RETURN(c, store_->GetOrCreate(name, first - 1, &created));
  }
  if (!created) {
    // A cursor beyond the end would skip every event up to it in silence.
    // The end is read after the cursor, so an ack made meanwhile by
    // another process is within it.
    CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(opts_.log_dir));
    CDC_RETURN_IF_ERROR(cursor::CheckCursor(c, sum.next_seq - 1));
  }
  const uint64_t acked = c.acked_seq;
  // A stored subscription decides which events this consumer takes.
  CDC_ASSIGN_OR_RETURN(std::string stored, store_->GetSelection(name));
  if (!stored.empty()) {
    if (opts_.selection.has_filter())
      return Status::Usage("consumer " + name +
                           " has a stored selection; --table, "
                           "--exclude-table and --op do not go with it "
                           "(read without -c to choose others)");
    CDC_ASSIGN_OR_RETURN(Filter f, Filter::FromJson(stored, name));
    CDC_RETURN_IF_ERROR(opts_.selection.ApplyFilter(f));
  }
  Status s = r.SeekSeq(acked + 1);
  if (s.code() == Code::kExpired)
    return Status::Expired(
        "consumer " + name + " is expired: its next event (seq " +
        std::to_string(acked + 1) +
        ") was removed by retention; run \"cdc-ack -c " + name +
        " --seek earliest\" (or another position) to "
        "continue from what is retained");
  return s;
}

Result<bool> Reader::NextAny(Event* e, bool* selected) {
  for (;;) {
    if (stopped_) return false;
    const log::FrameHeader& h = frame_.header;
    // The log reader found each line's end (log::Batch::Line).
    while (index_ < h.event_count) {
      const uint32_t i = index_++;
      if (i < frame_.skip) continue;
      const std::string_view line = frame_.Line(i);
      const uint64_t seq = h.first_seq + i;
      const Selection::Verdict v = opts_.selection.Judge(seq, line);
      if (v == Selection::Verdict::kStop) {
        stopped_ = true;
        return false;
      }
      consumed_ = seq;
      if (opts_.selection.EndsAt(seq)) stopped_ = true;
      e->seq = seq;
      e->stored = line;
      e->last = h.txn_end() && i + 1 == h.event_count;
      mid_txn_ = !e->last;
      *selected = v == Selection::Verdict::kTake;
      return true;
    }
    CDC_ASSIGN_OR_RETURN(bool got, log_->Next(&frame_));
    if (!got) return false;
    if (frame_.ends.size() != frame_.header.event_count)
      return Status::Internal("a frame's lines were not split");
    index_ = 0;
  }
}

Result<bool> Reader::Next(Event* e) {
  bool selected = false;
  for (;;) {
    CDC_ASSIGN_OR_RETURN(bool got, NextAny(e, &selected));
    if (!got || selected) return got;
  }
}

Result<bool> Reader::ReadBatch(size_t max_events, TxnBatch* b) {
  if (max_events == 0) return Status::Internal("ReadBatch: a bound of 0");
  // Start with the open transaction the last batch had no room for.
  b->Clear();
  std::swap(b->text_, carry_.text_);
  std::swap(b->items_, carry_.items_);
  auto& items = b->items_;
  size_t boundary = 0;        // items up to the last transaction end
  uint64_t boundary_seq = 0;  // that end's seq
  Event e;
  bool selected = false;
  for (;;) {
    CDC_ASSIGN_OR_RETURN(bool got, NextAny(&e, &selected));
    if (!got) break;
    if (selected) {
      items.push_back(
          TxnBatch::Item{e.seq, b->text_.size(), e.stored.size(), e.last});
      b->text_.append(e.stored);
    }
    if (e.last) {
      boundary = items.size();
      boundary_seq = e.seq;
      if (boundary >= max_events) break;
      continue;
    }
    if (!selected || items.size() < max_events) continue;
    if (boundary == 0) {
      // One transaction holds more than the bound (what ended before it in
      // this batch was all filtered out): hand out part of it.
      b->end_seq = batch_end_ = consumed_;
      b->ends_txn = false;
      return true;
    }
    // The open transaction waits for the next batch, whole.
    const size_t cut = items[boundary].off;
    carry_.text_.assign(b->text_, cut, std::string::npos);
    for (size_t k = boundary; k < items.size(); ++k) {
      carry_.items_.push_back(items[k]);
      carry_.items_.back().off -= cut;
    }
    b->text_.resize(cut);
    items.resize(boundary);
    b->end_seq = batch_end_ = boundary_seq;
    b->ends_txn = true;
    return true;
  }
  // The end of what is committed (always a transaction's end) or the stop.
  b->end_seq = consumed_;
  b->ends_txn = !mid_txn_;
  if (consumed_ == batch_end_) return false;
  batch_end_ = consumed_;
  return true;
}

Result<bool> Reader::StartsTransaction() const {
  const uint64_t next = consumed_ + 1;
  if (next <= 1) return true;
  // Whether the event before it ended a transaction; a fresh reader, so
  // this one's place is not disturbed.
  CDC_ASSIGN_OR_RETURN(auto r, log::LogReader::Open(opts_.log_dir));
  Status s = r->SeekSeq(next - 1);
  if (s.code() == Code::kExpired) return true;  // `next` is the earliest
  CDC_RETURN_IF_ERROR(s);
  log::Batch b;
  CDC_ASSIGN_OR_RETURN(bool got, r->Next(&b));
  if (!got) return true;
  bool last = true;
  bool seen = false;
  b.ForEach([&](uint64_t seq, std::string_view, bool l) {
    if (seq == next - 1) {
      last = l;
      seen = true;
    }
  });
  return !seen || last;
}

Result<log::ChangeWaiter::Wake> Reader::Wait(int timeout_ms, int watch_fd,
                                             bool watch_readable) {
  if (!waiter_) {
    CDC_ASSIGN_OR_RETURN(auto w, log::ChangeWaiter::Create(opts_.log_dir));
    waiter_.emplace(std::move(w));
  }
  return waiter_->Wait(timeout_ms, watch_fd, watch_readable);
}

Status Reader::Ack(uint64_t seq) {
  if (!store_) return Status::Usage("no consumer to acknowledge for");
  return store_->Ack(opts_.consumer, seq).status();
}

namespace {

// The log's event at each of `seqs` (ascending) against its line in the
// schema file, where retention kept it.
Status CheckSchemaLines(const std::string& dir,
                        const std::vector<log::SchemaEntry>& lines,
                        const std::vector<size_t>& used) {
  if (used.empty()) return Status::OK();
  auto damaged = [&](uint64_t seq) {
    return Status::Corruption(log::SchemasPath(dir) + ": the line of seq " +
                              std::to_string(seq) +
                              " is not the log's event at that seq (see "
                              "cdc-log verify)");
  };
  CDC_ASSIGN_OR_RETURN(auto r, log::LogReader::Open(dir));
  log::Batch b;
  for (size_t i : used) {
    const log::SchemaEntry& line = lines[i];
    Status s = r->SeekSeq(line.seq);
    if (s.code() == Code::kExpired) continue;  // only its form is left
    CDC_RETURN_IF_ERROR(s);
    CDC_ASSIGN_OR_RETURN(bool got, r->Next(&b));
    bool same = false;
    if (got)
      b.ForEach([&](uint64_t seq, std::string_view stored, bool) {
        if (seq == line.seq) same = stored == line.stored;
      });
    if (!same) return damaged(line.seq);
  }
  return Status::OK();
}

}  // namespace

Status LearnSchemas(const std::string& dir, uint64_t next_seq,
                    const std::function<void(std::string_view)>& learn) {
  CDC_ASSIGN_OR_RETURN(std::vector<log::SchemaEntry> lines,
                       log::ReadSchemas(dir));
  // A relation's values follow its last schema event before next_seq.
  std::unordered_map<std::string, size_t> latest;
  size_t n = 0;
  event::StoredFields f;
  for (; n < lines.size() && lines[n].seq < next_seq; ++n) {
    if (!log::IsSchemaEvent(lines[n].stored) ||
        !event::ScanStored(lines[n].stored, &f).ok())
      return Status::Corruption(log::SchemasPath(dir) + ": the line of seq " +
                                std::to_string(lines[n].seq) +
                                " is not a schema event");
    std::string key(f.schema);
    key.push_back('\0');
    key.append(f.table);
    latest[std::move(key)] = n;
  }
  std::vector<size_t> used;
  for (const auto& [key, i] : latest) used.push_back(i);
  std::sort(used.begin(), used.end());
  CDC_RETURN_IF_ERROR(CheckSchemaLines(dir, lines, used));
  for (size_t i = 0; i < n; ++i) learn(lines[i].stored);
  return Status::OK();
}

Status LearnSchemas(const std::string& dir, uint64_t next_seq,
                    event::Renderer* r) {
  return LearnSchemas(dir, next_seq,
                      [r](std::string_view stored) { r->LearnSchema(stored); });
}

Result<LogSourceInfo> ReadLogSourceInfo(const std::string& dir) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(dir));
  LogSourceInfo r;
  r.info.log_id = id.log_id;
  r.captured = id.source.has_value();
  if (id.source) {
    r.info.system_id = id.source->system_id;
    r.info.database = id.source->database;
    r.info.slot = id.source->slot;
    r.info.kind = id.source->kind;
  }
  return r;
}

}  // namespace cdc::consume
