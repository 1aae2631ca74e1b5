// consume::Reader: what every reader of the log shares (cdc-tail, the
// sinks): open at a position or as a named consumer, hand out the events a
// Selection takes, follow new events, and ack a consumer's cursor.
//
//   consume::Options o;
//   o.log_dir = dir; o.consumer = "redis";          // or o.from = "lsn:0/1"
//   CDC_ASSIGN_OR_RETURN(auto r, consume::Reader::Open(o));
//   consume::TxnBatch b;
//   for (;;) {
//     CDC_ASSIGN_OR_RETURN(bool got, r->ReadBatch(1000, &b));
//     if (got) { Apply(b); CDC_RETURN_IF_ERROR(r->Ack(b.end_seq)); continue; }
//     if (r->stopped()) break;                        // --to reached
//     CDC_RETURN_IF_ERROR(r->Wait(1000).status());   // follow
//   }
//
// Events come in seq order, only from committed transactions (the log
// reader's guarantee), in their stored form (event.h: no "seq"/"last";
// event::AppendNative renders the native line). Events the selection
// skips are consumed all the same: consumed_seq() and TxnBatch::end_seq
// move past them, so a consumer's acks move past filtered events.
// A Reader is not thread-safe: one per thread. Any number may run beside
// the writer and each other.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/consume/selection.h"
#include "cdc/event/renderer.h"
#include "cdc/log/reader.h"
#include "cdc/log/watch.h"

namespace cdc::cursor {
class ConsumerStore;
}

namespace cdc::consume {

struct Options {
  std::string log_dir;
  // A named consumer: reading starts after its cursor. A consumer used for
  // the first time is created at `from` (default: the earliest retained
  // event); for one that exists, `from` is a usage error (a seek moves it).
  // A consumer with a stored selection (Filter) reads what it selects,
  // keeping `selection`'s --to; a selection that also filters is a usage
  // error.
  std::string consumer;
  // Without a consumer: where to start (ParsePosition; empty: earliest).
  std::string from;
  Selection selection;
  // Follow mode: start watching the log at Open, so a change between the
  // last read and the first Wait() is not missed.
  bool follow = false;
};

// One event. `stored` points into the reader's buffer and is valid until
// the next call to Next() or ReadBatch() on the same reader.
struct Event {
  uint64_t seq = 0;
  std::string_view stored;
  bool last = false;  // the last event of its source transaction
};

// The selected events of whole source transactions (see ReadBatch). Owns
// its bytes: events stay valid until the batch is refilled.
class TxnBatch {
 public:
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  Event operator[](size_t i) const {
    const Item& it = items_[i];
    return Event{it.seq, std::string_view(text_.data() + it.off, it.len),
                 it.last};
  }

  // Every event up to here is consumed (selected or not): ack this after
  // applying the batch. 0 when nothing was read yet.
  uint64_t end_seq = 0;
  // False when the batch ends inside a transaction: one larger than the
  // bound, or the --to stop fell inside it.
  bool ends_txn = true;

 private:
  friend class Reader;
  struct Item {
    uint64_t seq;
    size_t off, len;
    bool last;
  };
  void Clear() {
    text_.clear();
    items_.clear();
  }
  std::string text_;
  std::vector<Item> items_;
};

class Reader {
 public:
  // Opens the log and places the reader (module comment; Options). Errors:
  // NotFound (no log), Usage (bad position or consumer name, --from with
  // an existing consumer), Expired ("consumer X is expired: ..." when the
  // consumer's next event was removed by retention), BadInput ("consumer
  // X is damaged: ..." when its cursor is beyond the log's end or
  // negative, cursor::CheckCursor), Corruption.
  static Result<std::unique_ptr<Reader>> Open(Options o);
  ~Reader();

  // The next selected event: true and `*e` filled, or false when there is
  // none right now (the end of the log; stopped() tells whether more can
  // ever come). Allocates nothing per event for events in the form the
  // writers store (Selection::Judge), whatever the selection.
  Result<bool> Next(Event* e);

  // The next event consumed, selected or not (`*selected` tells), for a
  // reader that must see what the selection skips, e.g. a renderer that
  // numbers the events of a transaction. Same contract as Next() otherwise.
  Result<bool> NextConsumed(Event* e, bool* selected) {
    return NextAny(e, selected);
  }

  // True when the next event to be read is the first of its source
  // transaction (also at the earliest retained event); false when the
  // reader was placed inside a transaction (a SEQ, or a consumer whose
  // ack fell inside one). Call before reading.
  Result<bool> StartsTransaction() const;

  // Reads the selected events of whole transactions into `b` (replacing
  // its contents): up to `max_events`, ending at a transaction's end
  // unless one transaction alone holds more than `max_events` (then the
  // batch is its first `max_events` and ends_txn is false). A transaction
  // that does not fit in the rest of the bound waits for the next batch.
  // Returns true when the batch moved end_seq (it may hold no event when
  // all it consumed was filtered out), false when nothing was read.
  // Use either Next() or ReadBatch() on a reader, not both.
  Result<bool> ReadBatch(size_t max_events, TxnBatch* b);

  // True once the selection's --to was reached: no event will come.
  bool stopped() const { return stopped_; }
  // Seq of the last event consumed (handed out or filtered out); the one
  // before the first event when none was.
  uint64_t consumed_seq() const { return consumed_; }

  // Sleeps until the log may have changed, up to `timeout_ms`
  // (-1: no limit), without busy looping (log::ChangeWaiter: inotify).
  // kWatchedFd when `watch_fd` (>= 0) reports an error or hang-up, e.g.
  // stdout's reader went away, or with `watch_readable`, is readable.
  Result<log::ChangeWaiter::Wake> Wait(int timeout_ms, int watch_fd = -1,
                                       bool watch_readable = false);

  // Cumulative ack of every event up to `seq` for the consumer (never moves
  // it back); durable when it returns. Usage error without a consumer.
  Status Ack(uint64_t seq);

  const std::string& consumer() const { return opts_.consumer; }

 private:
  explicit Reader(Options o);
  Status Place();
  // The next event, selected or not; false at the end or at the stop.
  Result<bool> NextAny(Event* e, bool* selected);

  Options opts_;
  std::unique_ptr<log::LogReader> log_;
  std::unique_ptr<cursor::ConsumerStore> store_;
  std::optional<log::ChangeWaiter> waiter_;
  log::Batch frame_;
  uint32_t index_ = 0;  // next line in frame_
  uint64_t consumed_ = 0;
  uint64_t batch_end_ = 0;  // end_seq of the last batch
  bool mid_txn_ = false;    // the last event consumed was not a txn's last
  bool stopped_ = false;
  TxnBatch carry_;  // events of a transaction the last batch had no room for
};

// Tells `r` the schema events the log at `dir` recorded before seq
// `next_seq` (log/schemas.h), so that a read starting there renders the
// values of every relation by its column types. The line each relation's
// values will follow (its last before `next_seq`) must be the log's event
// at its seq, where retention kept that: Corruption naming the line
// otherwise, as for a line that is not a schema event. (Whether a line is
// missing only the whole log tells: cdc-log verify; a renderer with
// RenderOptions::schemas_required fails on the first change it cannot
// type.)
Status LearnSchemas(const std::string& dir, uint64_t next_seq,
                    event::Renderer* r);
// The same, handing each schema event to `learn`.
Status LearnSchemas(const std::string& dir, uint64_t next_seq,
                    const std::function<void(std::string_view)>& learn);

// What a renderer says of the log's source, from the log's identity
// (log.json), and whether cdc-capture writes the log (then a schema event
// precedes every relation's first change: RenderOptions::schemas_required).
struct LogSourceInfo {
  event::SourceInfo info;
  bool captured = false;
};
Result<LogSourceInfo> ReadLogSourceInfo(const std::string& dir);

}  // namespace cdc::consume
