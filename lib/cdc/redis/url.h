// Where a Redis server is: redis://[user@]host[:port][/db] or
// unix:///path/to/socket[?db=N].
//
// A URL never carries a password (it would show in `ps` and in unit files):
// "redis://user:secret@host" is a usage error. The password comes from
// REDISCLI_AUTH or a file (see cdc-redis(1)). No percent-decoding: host,
// user and path are taken as written. TLS (rediss://) is not supported.
#pragma once

#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc::redis {

struct Endpoint {
  std::string host;       // TCP host (IPv6 without brackets); empty for unix
  int port = 6379;        // TCP port
  std::string unix_path;  // socket path; empty for TCP
  int db = 0;             // SELECT index, 0..INT_MAX
  std::string user;       // ACL user for AUTH user pass; empty: default user

  bool is_unix() const { return !unix_path.empty(); }
  // "host:port/db" or "unix:PATH?db=N", with the user: for messages.
  std::string Describe() const;
};

// Usage error naming what is wrong and the accepted forms.
Result<Endpoint> ParseUrl(std::string_view url);

}  // namespace cdc::redis
