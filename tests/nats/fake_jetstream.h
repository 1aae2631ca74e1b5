// A JetStream stream in memory, for driving nats::Target through the sink
// engine deterministically. It keeps what the sink depends on:
//  - a publish is stored only when its expected last sequence is the
//    stream's (else refused: wrong last sequence);
//  - a Nats-Msg-Id already stored is answered as a duplicate, not stored
//    again (checked before the expected sequence, as the server does);
//  - answers come back in order, when the client takes them.
// Faults, each counted in publishes received on every client (1-based):
//  - drop_at: that publish never reaches the stream; its answer is a
//    timeout, after every other answer in flight;
//  - lose_answer_at: that publish is stored but its answer is lost (a
//    timeout instead);
//  - die_at: the client dies right after that publish reaches the stream:
//    nothing more is answered and every call fails (the process is killed
//    there); a new client (Connect) works again.
//  - fail_info_at: that Info call (1-based, counted on every client) and
//    the next info_failures - 1 fail (a leader election).
// dedupe false: the duplicate window has passed (a restart long after).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cdc/nats/client.h"

namespace cdc::test {

class FakeJetStream {
 public:
  struct Message {
    nats::StoredMessage head;
    std::string payload;
  };

  Result<std::unique_ptr<nats::Client>> Connect();

  // Stores a message of another publisher (no cdc headers).
  void PublishForeign(const std::string& subject, const std::string& payload);

  std::string stream_name;  // set by EnsureStream
  bool exists = false;
  std::vector<Message> messages;        // messages[i] has stream sequence i + 1
  std::map<std::string, uint64_t> ids;  // Nats-Msg-Id -> stream sequence

  uint64_t drop_at = 0, lose_answer_at = 0, die_at = 0;
  uint64_t fail_info_at = 0, info_calls = 0;
  uint64_t info_failures = 1;
  bool dedupe = true;
  uint64_t received = 0;  // publishes received, on every client
  uint64_t refused = 0;   // refused by the expected-last-sequence check
};

}  // namespace cdc::test
