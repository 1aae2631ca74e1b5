// The envelope of PostgreSQL's streaming replication protocol: the CopyData
// messages of a START_REPLICATION stream ("Streaming Replication Protocol"
// in PostgreSQL's documentation). The server sends XLogData ('w', carrying
// a pgoutput message, see pgoutput.h) and primary keepalives ('k'); the
// client sends standby status updates ('r').
//
// Pure: no network, no libpq. A parsed XLogData's payload points into the
// message it was parsed from. Malformed input (a short message, a wrong
// type byte) fails with Status::BadInput and a one-line message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"

namespace cdc::pg {

// Microseconds from the Unix epoch to PostgreSQL's epoch (2000-01-01 UTC):
// the protocol's clocks count from the latter.
inline constexpr int64_t kPostgresEpochOffsetMicros = 946684800000000;

// 'w': WAL data, here one pgoutput message.
struct XLogData {
  Lsn start = 0;          // WAL position of the data
  Lsn wal_end = 0;        // the server's current end of WAL
  int64_t send_time = 0;  // µs since the Unix epoch
  std::string_view payload;
};

// 'k': primary keepalive.
struct Keepalive {
  Lsn wal_end = 0;               // the server's current end of WAL
  int64_t send_time = 0;         // µs since the Unix epoch
  bool reply_requested = false;  // reply at once or be disconnected
};

// 'r': standby status update. Positions are those of the last byte + 1.
struct StandbyStatus {
  Lsn write = 0;
  Lsn flush = 0;
  Lsn apply = 0;
  int64_t client_time = 0;  // µs since the Unix epoch
  bool reply_requested = false;
};

inline constexpr size_t kXLogDataHeaderBytes = 25;
inline constexpr size_t kKeepaliveBytes = 18;
inline constexpr size_t kStandbyStatusBytes = 34;

// Parse one whole CopyData message whose first byte is 'w' / 'k'.
Result<XLogData> ParseXLogData(std::string_view msg);
Result<Keepalive> ParseKeepalive(std::string_view msg);

// The 34 bytes of a standby status update.
std::string EncodeStandbyStatus(const StandbyStatus& status);

}  // namespace cdc::pg
