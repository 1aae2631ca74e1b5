// Where a sink reads events from: the log as a named consumer (through
// Reader), or NDJSON events on stdin (`cdc-tail -c X -f | SINK --stdin`).
// Both hand out whole source transactions, the unit a sink applies
// atomically. Every sink (cdc-redis, and the ones after it) reads through
// this; none re-implements it. One Source per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/consume/reader.h"

namespace cdc::consume {

// Events of whole transactions; `events` views point into `bytes`.
struct SinkBatch {
  std::string bytes;
  struct Item {
    uint64_t seq;
    size_t off, len;
    bool last;
  };
  std::vector<Item> items;
  std::vector<Event> events;  // filled by Seal()
  void clear() {
    bytes.clear();
    items.clear();
    events.clear();
  }
  void Add(uint64_t seq, std::string_view line, bool last) {
    items.push_back({seq, bytes.size(), line.size(), last});
    bytes.append(line);
  }
  void Seal() {
    events.clear();
    for (const Item& i : items)
      events.push_back(
          {i.seq, std::string_view(bytes).substr(i.off, i.len), i.last});
  }
};

// When a transaction larger than a batch is handed out in pieces.
enum class Pieces {
  kNever,  // whole, however large
  // While every event of it so far is a snapshot read (op r) or a schema
  // event (op s), as in an initial snapshot, which the log holds as one
  // transaction: a copy of tables, not a change that must land whole.
  // Once another event shows up, the rest of it is held whole.
  kSnapshots,
  kAlways,  // any transaction (for a target that applies events one by one)
};

class Source {
 public:
  virtual ~Source() = default;
  // Appends whole transactions to `b` until it holds at least `max`
  // events or no more are available now (or, from a log opened with
  // Pieces, a piece of at most `max` events of a larger one); true if it
  // added any. A bad
  // input fails only after what came before it was handed out (the
  // failure is returned by the following call).
  virtual Result<bool> Fill(SinkBatch* b, size_t max) = 0;
  // Waits up to `ms` for more input; false when there will be none (EOF).
  virtual Result<bool> Wait(int ms) = 0;
  // The log's last committed seq (0 when not reading a log).
  virtual Result<uint64_t> LastSeq() { return uint64_t{0}; }
  // The seq the next event read from the log will have at least (0 when
  // not reading a log).
  virtual uint64_t NextSeq() const { return 0; }
  // Cumulative ack of the consumer up to `seq` (log only).
  virtual Status Ack(uint64_t seq) {
    (void)seq;
    return Status::OK();
  }
};

// The log as consumer `consumer`. When the sink's target holds an applied
// seq (`applied`; `target` names the target in messages, e.g. "Redis") it wins:
// the consumer's cursor is set to it first (created there when new), so
// reading starts right after it. Otherwise reading starts after the
// consumer's cursor (a new consumer is created at the earliest retained
// event). Config when `applied` is beyond the log's end. Without
// `schema_changes`, schema-change events are consumed, not handed out.
// `pieces` says when Fill hands out a transaction larger than `max` in
// pieces of at most `max` events (the last event of a piece that does not
// end the transaction has `last` false), so that memory does not grow
// with the transaction's size.
Result<std::unique_ptr<Source>> OpenLogSource(
    const std::string& dir, const std::string& consumer,
    std::optional<uint64_t> applied, bool follow, const std::string& target,
    bool schema_changes = true, Pieces pieces = Pieces::kNever);
// NDJSON events (native form, with "seq") on fd 0. A transaction ends at
// "last":true, where the next event's lsn or xid differs, or at EOF.
std::unique_ptr<Source> OpenStdinSource();

}  // namespace cdc::consume
