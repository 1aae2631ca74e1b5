// The pgoutput decoder and the event builder on arbitrary messages: the
// input is a sequence of messages, each a 2-byte length then its bytes,
// decoded and applied in order, as the replication stream would feed them.
#include <cstring>

#include "cdc/pg/event_builder.h"
#include "cdc/pg/pgoutput.h"
#include "cdc/pg/replication.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cdc::pg::EventBuilder builder(nullptr, [] { return int64_t{0}; });
  cdc::pg::EventLines lines;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // The replication envelope first, on the whole input.
  (void)cdc::pg::ParseXLogData(in);
  (void)cdc::pg::ParseKeepalive(in);
  while (in.size() >= 2) {
    size_t n = (static_cast<unsigned char>(in[0]) << 8) |
               static_cast<unsigned char>(in[1]);
    in.remove_prefix(2);
    n = std::min(n, in.size());
    auto m = cdc::pg::DecodeMessage(in.substr(0, n), 0x1000);
    in.remove_prefix(n);
    if (!m.ok()) continue;
    lines.clear();
    (void)builder.Apply(*m, &lines);
  }
  return 0;
}
