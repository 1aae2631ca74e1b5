// The Redis sink's writer: applies whole source transactions to Redis,
// effectively once.
//
// Every batch is one MULTI ... EXEC that holds the commands of its events
// and a SET of the applied seq key ({prefix}__cdc_applied:{consumer}) to
// the seq of the batch's last event, so Redis has either all of a batch
// and its position or neither. Events at or below the applied seq are
// dropped before a batch is built, so a replay never reaches Redis.
//
// The shape every sink copies: the shared consume library reads whole
// transactions; this writer applies a batch; the applied position lives
// in the target, written atomically with the batch, and wins over the log
// cursor on restart. See cdc-redis(1) for the key layout.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/consume/reader.h"
#include "cdc/event/fields.h"
#include "cdc/redis/client.h"

namespace cdc::redis {

using event::Field;
using event::Fields;

enum class Mode { kStream, kHash };

struct SinkOptions {
  Mode mode = Mode::kStream;
  std::string prefix = "cdc:";
  // {prefix}, {schema}, {table} (the names as KeyName writes them),
  // {schema_raw}, {table_raw} (the names as they are) and, in hash mode,
  // {key}; empty: the mode's default ({prefix}{schema}.{table} for
  // streams, {prefix}{schema}.{table}:{key} for hashes).
  std::string key_template;
  uint64_t maxlen = 0;  // streams: XADD MAXLEN ~ maxlen; 0 keeps everything
  std::string consumer;
};

// Usage error for a template naming an unknown {field} or missing {table}
// or {table_raw} (and, in hash mode, {key}).
Status CheckTemplate(Mode mode, const std::string& key_template);

// A schema or table name as keys hold it: '%', '.', ':', the glob
// characters * ? [ ] \, the hash-tag braces { }, quotes, space, control
// bytes and DEL are written %XX (two uppercase hex digits); every other
// byte (UTF-8 included) is itself. So "public" and "orders" stay as they
// are, the mapping is injective, and an escaped name holds no '.' or ':':
// {schema}.{table} names one table, and the ':' after it ends the name.
std::string KeyName(std::string_view name);
void AppendKeyName(std::string_view name, std::string* out);

// One event (consume::Event): its seq and its line, stored or native form
// (a "seq" or "last" key in the line is ignored); `last` ends a source
// transaction.
using EventRef = consume::Event;

struct BatchResult {
  uint64_t applied_seq = 0;  // the seq Redis now holds
  uint64_t applied = 0;      // events written in this batch
  uint64_t already = 0;      // events at or below the applied seq: skipped
  uint64_t ignored = 0;      // events with no effect in this mode
  uint64_t unkeyed = 0;      // hash mode: rows of a table with no key
  uint64_t duplicates = 0;   // stream entries Redis already held
  uint64_t commands = 0;     // commands inside MULTI/EXEC
};

class Sink {
 public:
  explicit Sink(SinkOptions o);

  const SinkOptions& options() const { return o_; }
  std::string AppliedKey() const;
  // The key of a table's stream (`key` empty) or of one of its row hashes
  // (`key`: EncodeRowKey's form), from the key template.
  std::string Expand(std::string_view schema, std::string_view table,
                     std::string_view key) const;
  // Hash mode: the set naming a table's row hashes,
  // {prefix}__cdc_rows:{schema}.{table} (names as KeyName writes them).
  std::string MembersKey(std::string_view schema, std::string_view table) const;
  // The name each of this sink's connections gives itself (CLIENT
  // SETNAME): cdc-redis- and 16 hex digits of a hash of the applied key,
  // so one per prefix and consumer.
  std::string ClientName() const;
  // Fences off every earlier connection of this sink before anything is
  // read: names this one, then closes (CLIENT KILL ID) every other client
  // of that name. A connection given up on (a timeout, a silent network)
  // may still hold a batch in the server's socket or in its own kernel's
  // send queue, EXEC included; once killed, what was not executed never
  // will be, so the applied seq read next is final. Where the server
  // refuses the CLIENT commands (an ACL without them) it warns, once, that
  // a batch of a connection given up on may still land late, and goes on.
  Status Fence(Connection& c);
  // Warns, once, that Redis refused `command` (`error`); OK.
  Status WarnUnfenced(std::string_view command, std::string_view error);
  // The applied seq in Redis; nullopt when the key does not exist. When a
  // batch's EXEC was never confirmed clean (the unconfirmed key,
  // {prefix}__cdc_unconfirmed:{consumer}, holds the seq before it), that
  // lower seq: the batch is applied again, whole.
  Result<std::optional<uint64_t>> ReadApplied(Connection& c);
  // Removes the unconfirmed seq once every batch executed was confirmed
  // clean (no batch in flight): call when idle and before exiting.
  Status Confirm(Connection& c);

  // Applies `events` (whole transactions in seq order) above `applied`
  // (what ReadApplied said, or the last Apply's applied_seq) in one
  // MULTI/EXEC: Begin, Exec and Finish in a row.
  // On a transport error (Unavailable) the outcome is unknown:
  // reconnect, ReadApplied again and call Apply with the same events.
  // A command that fails inside EXEC (a key of another type) leaves the
  // others applied; the applied seq is then put back to `applied` (and,
  // should the sink die first, the unconfirmed seq written with the batch
  // says the same), so the whole batch is applied again once the key is
  // fixed (every command a batch sends may be repeated; see cdc-redis(1)),
  // and the error is returned.
  Result<BatchResult> Apply(Connection& c, const std::vector<EventRef>& events,
                            std::optional<uint64_t> applied);

  // The same in steps, so that a batch is built while the one before it
  // runs in Redis. At most two batches are begun and not finished; they
  // finish in the order they began:
  //   Begin(A) Exec() Begin(B) Finish() -> A's result; Exec() Finish() -> B
  // Begin queues MULTI, the batch's commands and its applied seq (Redis
  // holds them, unexecuted); Exec queues EXEC for the oldest batch not yet
  // executed; Finish reads the replies of the oldest batch begun. A batch
  // whose predecessor failed must not be executed: Abandon() discards it
  // (DISCARD) instead. `applied` for a batch begun while another is in
  // flight is the other's last seq (what Redis will hold if it succeeds).
  // After any error, drop the connection or call Abandon() for what is
  // left before beginning again.
  Status Begin(Connection& c, const std::vector<EventRef>& events,
               std::optional<uint64_t> applied);
  Status Exec(Connection& c);
  Result<BatchResult> Finish(Connection& c);
  // Discards every batch begun and not executed, and reads what Redis
  // answers for them. Batches executed and not finished are left.
  Status Abandon(Connection& c);
  size_t in_flight() const { return pending_.size(); }
  // Forgets every batch in flight: call it when dropping the connection.
  void Reset();

 private:
  struct Queued {
    uint64_t seq;      // 0: not an event's command
    const char* verb;  // for messages
    std::string key;
  };
  // A batch begun and not finished.
  struct Pending {
    std::vector<Queued> queued;  // commands inside MULTI, in order
    BatchResult r;
    std::optional<uint64_t> prev;  // the applied seq before the batch
    uint64_t last = 0;
    size_t events = 0;   // events above the applied seq
    bool empty = false;  // nothing to apply: no MULTI was sent
    bool executed = false;
  };

  // Builds the commands of one event into the connection's buffer.
  Status AppendEvent(Connection& c, const EventRef& ev, BatchResult* r);
  Status AppendStream(Connection& c, const EventRef& ev, std::string_view op,
                      const Fields& obj);
  Status AppendHash(Connection& c, const EventRef& ev, std::string_view op,
                    const Fields& obj, BatchResult* r);
  Status FlushMembership(Connection& c, const std::string& set_key);
  Status FlushAllMembership(Connection& c);
  // Queues the command in args_ (its verb a string literal) for `seq`.
  Status Queue(Connection& c, uint64_t seq, const std::string& key);
  Status Settle(Connection& c, const Reply& exec, const Pending& p,
                uint64_t* duplicates);
  Status PutBack(Connection& c, std::optional<uint64_t> prev);
  Status DrainDiscarded(Connection& c);

  SinkOptions o_;
  std::string applied_key_;
  bool warned_fence_ = false;
  Args args_;
  std::deque<std::string> scratch_;  // argument bytes of the command built
  std::deque<Pending> pending_;      // begun, oldest first
  size_t discarded_ = 0;  // replies of discarded batches still to read
  std::vector<Queued>* queued_ = nullptr;  // the batch being built
  std::string unconfirmed_key_;
  bool unconfirmed_ = false;  // Redis may hold an unconfirmed seq
  // Hash mode: membership changes per set key, member -> added (true) or
  // removed, flushed as one SADD and one SREM before a truncate of the
  // table and at the end of the batch.
  std::unordered_map<std::string, std::unordered_map<std::string, bool>>
      members_;
  Fields obj_, key_, after_;  // parsed event, reused
};

// Hash mode's row key part: the key object's values, in its order, as a
// compact JSON array ([7], [1,"a b"]): unambiguous whatever the values
// hold. `key_object` is the compact JSON text of the "key" member.
Result<std::string> EncodeRowKey(std::string_view key_object);

}  // namespace cdc::redis
