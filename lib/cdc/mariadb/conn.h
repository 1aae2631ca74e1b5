// A MariaDB client connection that can become a binlog reader.
//
// Why the client library and then the protocol by hand: libmariadb does
// the parts that are hard to get right and easy to get subtly wrong
// (authentication plugins, TLS, option files), while its replication API
// (mariadb_rpl_*) decodes events into its own structures, copies row data
// and fails on event types it does not know. So the connection is
// libmariadb's, COM_BINLOG_DUMP is sent through it, each packet is read
// with mysql_net_read_packet, and every byte of every event is decoded by
// binlog.h and values.h, where tests can check it byte for byte.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/mariadb/values.h"

struct st_mysql;
struct st_mysql_stmt;
struct st_mysql_bind;
struct st_mysql_time;

namespace cdc::mariadb {

// mariadb://USER@HOST[:PORT]/DB[?socket=PATH&ssl-ca=FILE&...] (mysql://
// the same). A password in it is refused: it comes from MYSQL_PWD, the
// option files' [client] group, or a password file.
struct Dsn {
  std::string user;
  std::string host = "localhost";
  unsigned port = 3306;
  std::string database;
  std::string socket;
  std::string ssl_ca, ssl_cert, ssl_key;
  bool ssl_verify = false;  // ssl-verify=1: check the server's name too
  std::string password;     // filled by the caller, never from the URI
  // The URI as a log line shows it.
  std::string Redacted() const;
};
// Usage for a malformed URI, an unknown parameter or a password in it.
Result<Dsn> ParseDsn(std::string_view uri);

using Row = std::vector<std::optional<std::string>>;

// A SELECT read row by row over the binary protocol (a prepared statement,
// its result not buffered): numbers and times arrive in their binary form,
// exact, and a table of any size takes one row's memory. Each column is
// fetched as its Kind says; the connection does nothing else until the
// stream is destroyed.
class RowStream {
 public:
  enum class Kind { kSigned, kUnsigned, kFloat, kDouble, kTime, kBytes };
  ~RowStream();

  // The next row: false after the last. An error says which statement.
  Result<bool> Next();
  bool null(size_t i) const { return cols_[i].is_null != 0; }
  int64_t i64(size_t i) const { return cols_[i].i64; }
  uint64_t u64(size_t i) const { return static_cast<uint64_t>(cols_[i].i64); }
  float f32(size_t i) const { return cols_[i].f32; }
  double f64(size_t i) const { return cols_[i].f64; }
  const WireTime& time(size_t i) const { return cols_[i].time; }
  std::string_view bytes(size_t i) const {
    return std::string_view(cols_[i].buf.data(), cols_[i].length);
  }
  size_t size() const { return cols_.size(); }

 private:
  friend class Connection;
  struct Col {
    Kind kind = Kind::kBytes;
    int64_t i64 = 0;
    float f32 = 0;
    double f64 = 0;
    WireTime time;
    std::string buf;
    unsigned long length = 0;
    char is_null = 0, error = 0;
  };
  RowStream();  // in conn.cpp, where the libmariadb types are complete
  Status Bind();
  Status Error(const std::string& what) const;

  st_mysql_stmt* st_ = nullptr;
  std::string sql_;
  std::vector<Col> cols_;
  std::vector<st_mysql_bind> binds_;
  std::vector<st_mysql_time> times_;  // what kTime binds fill
};

class Connection {
 public:
  ~Connection();
  // `io_timeout_s`: a read or write waiting longer fails (libmariadb takes
  // it at connect only; a binlog reader passes its heartbeat's bound).
  static Result<std::unique_ptr<Connection>> Connect(
      const Dsn& dsn, unsigned io_timeout_s = 30);

  Status Exec(const std::string& sql);
  Result<std::vector<Row>> Query(const std::string& sql);
  // A query expected to return one value (NotFound when no row).
  Result<std::string> Value(const std::string& sql);
  // Quotes a string for SQL in this connection's charset.
  std::string Quote(std::string_view s);
  // Runs a SELECT as a prepared statement and streams its rows; `kinds`
  // has one entry per column of the result.
  Result<std::unique_ptr<RowStream>> Stream(const std::string& sql,
                                            std::vector<RowStream::Kind> kinds);

  // Asks for the binlog from `gtid_state` ("D-S-N", empty: the server's
  // current position) as replica `server_id`, with heartbeats every
  // `heartbeat_s` seconds. The connection then only reads events; connect
  // it with an io timeout of a few heartbeats, so a dead peer is noticed.
  Status StartDump(uint32_t server_id, const std::string& gtid_state,
                   double heartbeat_s);
  // The next event of the dump, without the packet's leading OK byte;
  // valid until the next call. Blocks. Unavailable when the connection
  // ended; the server's error (say, a purged binlog) with its code.
  Result<std::string_view> ReadEvent();
  // Unblocks ReadEvent from another thread (it then fails).
  void Shutdown();
  std::string server_version() const;
  // The server's id of this connection (as KILL takes).
  uint64_t thread_id() const;

 private:
  explicit Connection(st_mysql* m) : m_(m) {}
  Status Error(const std::string& what) const;
  st_mysql* m_;
};

}  // namespace cdc::mariadb
