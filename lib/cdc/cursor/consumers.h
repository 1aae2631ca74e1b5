// Named consumer cursors in LOG/consumers.db (SQLite, WAL mode).
//
// A cursor is the seq of the last event the consumer acknowledged; its next
// event is acked_seq + 1. Acks are cumulative and monotonic (an older ack
// never moves a cursor back) and are durable when Ack() returns
// (synchronous=FULL). Seek moves a cursor anywhere, backward included. Any
// number of processes may use the store at once (busy timeout). One
// ConsumerStore per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/status.h"

struct sqlite3;

namespace cdc::cursor {

struct Consumer {
  std::string name;
  uint64_t acked_seq = 0;
  int64_t created_us = 0;
  int64_t updated_us = 0;
};

// Names are 1-64 characters of [A-Za-z0-9._-]; Usage error otherwise.
Status ValidateConsumerName(const std::string& name);

// A cursor lies between 0 and the last seq of the log: acks and seeks
// beyond the end are refused (cdc-ack), and an ack only names an event a
// reader was handed. One beyond the log's last committed seq `last_seq`,
// or negative in the file (SQLite's integers are signed; acked_seq holds
// such a one as a value above 2^63), is damage: a reader that used it
// would skip every event up to it in silence. CursorDamaged says so;
// CheckCursor is BadInput naming the consumer and both seqs. Compare with
// a `last_seq` read after the cursor was: the log only grows meanwhile.
bool CursorDamaged(const Consumer& c, uint64_t last_seq);
Status CheckCursor(const Consumer& c, uint64_t last_seq);
// acked_seq as the file holds it, for listings: negative when it is.
int64_t StoredAckedSeq(const Consumer& c);

// Under CDC_GROUP_ACCESS, the log's writer (capture, import) makes
// LOG_DIR/consumers.db and its -wal and -shm files (which stay): the
// group's readers may write those but cannot create files in the log
// directory. Nothing to do otherwise.
Status PrepareForGroup(const std::string& log_dir);

class ConsumerStore {
 public:
  // Opens (creating if needed) LOG_DIR/consumers.db.
  static Result<std::unique_ptr<ConsumerStore>> Open(
      const std::string& log_dir);
  ~ConsumerStore();

  Result<std::optional<Consumer>> Get(const std::string& name);
  // CannotCreate if the consumer exists.
  Result<Consumer> Create(const std::string& name, uint64_t acked_seq);
  // Returns the existing consumer, or creates it at `acked_seq`.
  Result<Consumer> GetOrCreate(const std::string& name, uint64_t acked_seq,
                               bool* created);
  // Cumulative ack; returns the cursor afterwards. NotFound if absent.
  Result<uint64_t> Ack(const std::string& name, uint64_t seq);
  // Sets the cursor to `acked_seq` (either direction). NotFound if absent.
  Status Seek(const std::string& name, uint64_t acked_seq);
  // Deletes the consumer and its stored selection.
  Status Delete(const std::string& name);
  Result<std::vector<Consumer>> List();

  // The selection stored beside a consumer's cursor (a stored
  // subscription): opaque text to this store (consume::Subscription reads
  // it), "" when the consumer has none.
  Result<std::string> GetSelection(const std::string& name);
  Status SetSelection(const std::string& name, const std::string& selection);

 private:
  ConsumerStore() = default;
  Status Exec(const char* sql);
  Status Setup();  // WAL mode and the schema
  Status Error(const std::string& what);

  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace cdc::cursor
