#include "cdc/pg/replication.h"

namespace cdc::pg {

namespace {

uint64_t GetBE64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void PutBE64(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

// A server clock reading (µs since 2000-01-01) as µs since the Unix epoch;
// an absurd one saturates instead of overflowing.
int64_t FromPgTime(uint64_t raw) {
  int64_t out = 0;
  if (__builtin_add_overflow(static_cast<int64_t>(raw),
                             kPostgresEpochOffsetMicros, &out))
    return INT64_MAX;
  return out;
}

}  // namespace

Result<XLogData> ParseXLogData(std::string_view msg) {
  if (msg.size() < kXLogDataHeaderBytes || msg[0] != 'w')
    return Status::BadInput("short XLogData message (" +
                            std::to_string(msg.size()) + " bytes)");
  XLogData d;
  d.start = GetBE64(msg.data() + 1);
  d.wal_end = GetBE64(msg.data() + 9);
  d.send_time = FromPgTime(GetBE64(msg.data() + 17));
  d.payload = msg.substr(kXLogDataHeaderBytes);
  return d;
}

Result<Keepalive> ParseKeepalive(std::string_view msg) {
  if (msg.size() < kKeepaliveBytes || msg[0] != 'k')
    return Status::BadInput("short keepalive message (" +
                            std::to_string(msg.size()) + " bytes)");
  Keepalive k;
  k.wal_end = GetBE64(msg.data() + 1);
  k.send_time = FromPgTime(GetBE64(msg.data() + 9));
  k.reply_requested = msg[17] != 0;
  return k;
}

std::string EncodeStandbyStatus(const StandbyStatus& s) {
  std::string out(kStandbyStatusBytes, '\0');
  out[0] = 'r';
  PutBE64(out.data() + 1, s.write);
  PutBE64(out.data() + 9, s.flush);
  PutBE64(out.data() + 17, s.apply);
  PutBE64(out.data() + 25,
          static_cast<uint64_t>(s.client_time - kPostgresEpochOffsetMicros));
  out[33] = s.reply_requested ? 1 : 0;
  return out;
}

}  // namespace cdc::pg
