// A Redis server in memory, for driving redis::Sink and redis::Target
// deterministically: the commands the sink sends (MULTI/EXEC/DISCARD,
// GET/SET/DEL/TYPE, XADD/XRANGE, HSET/HDEL, SADD/SREM, COPY, the truncate
// EVAL), with Redis's semantics where the sink depends on them:
//  - commands between MULTI and EXEC are queued and run together at EXEC;
//    a connection that dies before EXEC loses them;
//  - inside EXEC a command on a key of another type fails on its own
//    (WRONGTYPE) and the others still run: no rollback;
//  - XADD with an ID at or below the stream's top fails;
//  - CLIENT SETNAME, ID, LIST and KILL ID over the open connections: a
//    killed connection loses what it queued and dies at its next command.
// Faults: the server cuts the connection right after it has received a
// given number of commands (the last one is run; no reply after it
// reaches the client), or refuses connections.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cdc/redis/client.h"

namespace cdc::test {

class FakeRedis {
 public:
  struct Value {
    enum class Kind { kString, kHash, kSet, kStream } kind = Kind::kString;
    std::string str;
    std::map<std::string, std::string> hash;
    std::set<std::string> set;
    // Entries: ID and field/value pairs, in order.
    std::vector<std::pair<std::string, std::vector<std::string>>> stream;
  };

  // A new connection (as Connection::Open), or Unavailable when down.
  Result<std::unique_ptr<redis::Connection>> Connect();

  // Runs one command outside any connection (a test's own writes).
  redis::Reply Run(const std::vector<std::string>& args);

  // Every key and value in a canonical text, one key per line.
  std::string Dump() const;

  // The connection that receives the command making `received` reach this
  // number dies after running it (0: never).
  uint64_t cut_at = 0;
  // Connections are refused while this is above 0 (each refusal counts
  // one down).
  int refuse = 0;
  // After the cut, refuse every connection (the process dies with it):
  // set `refuse` back to 0 to let a new one in.
  bool stay_down = false;
  // A read-only replica: writes are refused (READONLY), a transaction
  // holding one is aborted at EXEC (EXECABORT).
  bool readonly = false;
  uint64_t received = 0;  // commands received, on every connection
  int connects = 0;
  std::map<std::string, Value> keys;

  // Runs a command of connection state `multi` (queued when inside
  // MULTI); the reply, or none (nullptr) when the connection is cut.
  struct Session {
    bool in_multi = false;
    bool aborted = false;  // a command was refused while queued
    std::vector<std::vector<std::string>> queued;
    long long id = 0;     // CLIENT ID
    std::string name;     // CLIENT SETNAME
    bool killed = false;  // CLIENT KILL: what is queued is lost
  };
  // The sessions of open connections (CLIENT LIST and KILL see them).
  std::map<long long, Session*> sessions;
  long long next_id = 1;
  // CLIENT commands answer NOPERM (an ACL without them).
  bool deny_client = false;
  redis::Reply Execute(Session* s, const std::vector<std::string>& args);

 private:
  redis::Reply RunOne(const std::vector<std::string>& args);
};

}  // namespace cdc::test
