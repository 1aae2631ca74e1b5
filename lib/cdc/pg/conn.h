// A libpq connection to PostgreSQL, plain or in replication=database mode,
// with the COPY BOTH plumbing of logical replication. The only place libpq
// is used.
//
// Sessions are set up for the type renderers: DateStyle=ISO, TimeZone=UTC,
// IntervalStyle=postgres, extra_float_digits=3, bytea_output=hex,
// client_encoding=UTF8. Passwords come only from libpq's own sources
// (.pgpass, PGPASSWORD, passfile=); RedactDsn() hides one given inline.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"

struct pg_conn;
struct pg_result;

namespace cdc::pg {

// Owns a PGresult.
class PgResult {
 public:
  explicit PgResult(pg_result* r = nullptr) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult& operator=(PgResult&& o) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  int cols() const;
  // A cell outside the result reads as NULL / "" (a reply shaped otherwise
  // than expected must give an error, never a crash).
  bool is_null(int row, int col) const;
  std::string get(int row, int col) const;

 private:
  pg_result* r_;
};

// Values in PostgreSQL's replies, checked: BadInput ("unexpected reply from
// PostgreSQL: <what> is \"<text>\"") for anything but a decimal number that
// fits 32 bits (an OID, a timeline), or an LSN in X/Y form.
Result<uint32_t> ParseReplyUint32(std::string_view text,
                                  const std::string& what);
Result<Lsn> ParseReplyLsn(std::string_view text, const std::string& what);

// Whether a conninfo (keyword form or URI) gives a password in any form
// libpq reads: password=..., postgresql://user:secret@..., ?password=...
// (also percent-encoded), or in a connection string given as dbname.
// Config for a conninfo libpq cannot parse; its message never repeats
// the conninfo when that may hold a password.
Result<bool> ConninfoHasPassword(const std::string& conninfo);

// The conninfo with any password replaced by "********".
std::string RedactDsn(const std::string& conninfo);

struct SystemIdentity {
  std::string system_id;
  uint32_t timeline = 0;
  Lsn xlogpos = 0;
  std::string dbname;
};

class Connection {
 public:
  // Unavailable when the server cannot be reached, Permission when it
  // refuses our credentials, Config for a malformed conninfo. The session's
  // settings are pinned (UTF8, ISO dates in UTC, round-trip floats, hex
  // bytea, search_path pg_catalog) so no role or database setting changes
  // the text of a value; `pin_search_path` false keeps the role's
  // search_path, for resolving names a user gave without a schema.
  static Result<std::unique_ptr<Connection>> Connect(
      const std::string& conninfo, bool replication,
      bool pin_search_path = true,
      const char* application_name = "cdc-capture");
  ~Connection();

  // Runs one command; error unless it returned tuples or completed.
  Result<PgResult> Exec(const std::string& sql);
  // Runs a statement with text parameters ($1, $2, ...). Not in replication
  // mode.
  Result<PgResult> ExecParams(const std::string& sql,
                              const std::vector<std::string>& params);
  std::string QuoteIdent(const std::string& name) const;
  std::string QuoteLiteral(const std::string& text) const;

  // Pipeline mode (libpq's): statements are queued without waiting, and
  // their answers come back in order; a sync ends each group. The
  // connection stays blocking: a caller keeps what it has in flight small
  // (answers of at most a few thousand statements) so the server never
  // waits on answers unread while we still write.
  Status EnterPipeline();
  // Back to one statement at a time; nothing may be in flight.
  Status ExitPipeline();
  // Queues a statement with text parameters; a null value is SQL NULL.
  Status SendParams(const std::string& sql,
                    const std::vector<const char*>& values,
                    const std::vector<int>& lengths);
  // Queues the preparation of `sql` as statement `name`, and the
  // execution of a prepared statement (text parameters, as SendParams).
  Status SendPrepare(const std::string& name, const std::string& sql,
                     int params);
  Status SendPrepared(const std::string& name,
                      const std::vector<const char*>& values,
                      const std::vector<int>& lengths);
  // Queues a sync and sends everything queued.
  Status SendSync();
  struct Answer {
    enum Kind { kDone, kError, kAborted, kSync } kind = kDone;
    std::string sqlstate;  // kError
    std::string message;   // kError: the server's message, one line
  };
  // The next answer of the pipeline, waiting up to `wait_ms` for it;
  // nullopt when none has come (or nothing is in flight). Unavailable when
  // the connection fails.
  Result<std::optional<Answer>> NextAnswer(int wait_ms);

  Result<SystemIdentity> IdentifySystem();
  // START_REPLICATION ... LOGICAL with pgoutput; the connection is then in
  // COPY BOTH mode.
  Status StartReplication(const std::string& slot, Lsn start,
                          const std::string& publication);

  // Runs `sql`, a COPY ... TO STDOUT (text format: one CopyData message per
  // row, with its '\n'), and calls on_row with each row as it arrives;
  // memory holds one row at a time whatever the table's size. The first
  // error on_row returns cancels the copy and is returned (the connection
  // stays usable); otherwise the server's error, if the copy failed.
  Status CopyOut(const std::string& sql,
                 const std::function<Status(std::string_view row)>& on_row);
  // CopyOut reads the socket itself, into a buffer of its own, rather than
  // through libpq: the connection has no TLS or GSS encryption.
  bool ReadsCopyItself() const;
  // Lets each later read from the socket take up to about `bytes` (a bulk
  // COPY then costs the kernel one read per ~`bytes`, not per 16 KiB);
  // nothing to do when ReadsCopyItself().
  // libpq reads into its input buffer, which starts at 16 KiB, grows to
  // hold the largest message received and never shrinks; so the server is
  // asked for one reply of that size. Costs one round trip and `bytes` of
  // memory for the connection's life. Not on a replication connection.
  Status WidenReceiveBuffer(size_t bytes);

  // Reads one CopyData message: returns 1 and points `msg` at it (valid
  // until the next ReadCopy or the connection's end; no copy is made), or
  // 0 when none is available without blocking, or -1 when the server ended
  // the stream (the server's reason is then in end_reason()).
  Result<int> ReadCopy(std::string_view* msg);
  // Frees the message ReadCopy returned last (before the next ReadCopy,
  // which would do it): a large one need not outlive its decoding.
  void ReleaseCopy() { FreeCopy(); }
  // Why the server ended the stream, as one line (e.g. "terminating
  // connection due to administrator command"); empty when it ended it
  // without an error (a walsender does so when the server shuts down).
  const std::string& end_reason() const { return end_reason_; }
  // The replication stream is open: a status update can still be sent.
  bool streaming() const { return streaming_; }
  // Standby status update: write/flush/apply positions, reply request.
  Status SendStatus(Lsn write, Lsn flush, bool reply_requested);
  // Sends CopyDone (ends the stream politely before closing).
  void EndCopy();
  int socket() const;
  // The server's version as a number: 150014 for 15.14, 180004 for 18.4.
  int ServerVersion() const;
  // Inside a transaction block (open or failed), as the server last said.
  bool InTransaction() const;
  // The database's encoding, as the server reported it ("UTF8", "LATIN1").
  std::string ServerEncoding() const;
  // The last error of the connection as one line.
  std::string ErrorMessage() const;

 private:
  explicit Connection(pg_conn* c) : conn_(c) {}
  Status Error(const std::string& what) const;
  void FreeCopy();

  pg_conn* conn_;
  char* copy_ = nullptr;  // libpq's buffer of the last CopyData read
  bool streaming_ = false;
  bool separator_ = false;  // pipeline: a statement's closing NULL is due
  std::string end_reason_;
};

}  // namespace cdc::pg
