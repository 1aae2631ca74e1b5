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

struct st_mysql;

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

class Connection {
 public:
  ~Connection();
  static Result<std::unique_ptr<Connection>> Connect(const Dsn& dsn);

  Status Exec(const std::string& sql);
  Result<std::vector<Row>> Query(const std::string& sql);
  // A query expected to return one value (NotFound when no row).
  Result<std::string> Value(const std::string& sql);
  // Quotes a string for SQL in this connection's charset.
  std::string Quote(std::string_view s);

  // Asks for the binlog from `gtid_state` ("D-S-N", empty: the server's
  // current position) as replica `server_id`, with heartbeats every
  // `heartbeat_s` seconds. The connection then only reads events.
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
