// Decoding MariaDB's (and MySQL's) binary log events, as a replica receives
// them after COM_BINLOG_DUMP. Pure functions over bytes: no server, no
// allocation beyond what the results hold, every length checked against the
// event's end (a short or lying event is BadInput, never a read past it).
//
// Event layout (MariaDB's "binary log format" and MySQL's
// libbinlogevents): a 19-byte header (timestamp, type, server id, event
// length, next position, flags), a post-header whose length per type the
// FORMAT_DESCRIPTION event gives, a body, and, when the server checksums
// events (binlog_checksum=CRC32), a trailing CRC32 of everything before it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::mariadb {

// Event type codes (the ones a reader acts on or must recognise).
enum EventType : uint8_t {
  kQueryEvent = 2,
  kStopEvent = 3,
  kRotateEvent = 4,
  kFormatDescriptionEvent = 15,
  kXidEvent = 16,
  kTableMapEvent = 19,
  kWriteRowsV1 = 23,
  kUpdateRowsV1 = 24,
  kDeleteRowsV1 = 25,
  kHeartbeatEvent = 27,
  kWriteRowsV2 = 30,  // MySQL 5.6+
  kUpdateRowsV2 = 31,
  kDeleteRowsV2 = 32,
  kMysqlGtidEvent = 33,  // MySQL's GTID: unsupported
  kAnnotateRowsEvent = 160,
  kBinlogCheckpointEvent = 161,
  kGtidEvent = 162,
  kGtidListEvent = 163,
  kStartEncryptionEvent = 164,
  kQueryCompressedEvent = 165,
  kWriteRowsCompressedV1 = 169,
  kUpdateRowsCompressedV1 = 170,
  kDeleteRowsCompressedV1 = 171,
};

struct EventHeader {
  uint32_t timestamp = 0;  // seconds since the epoch, UTC
  uint8_t type = 0;
  uint32_t server_id = 0;
  uint32_t length = 0;    // of the whole event, header and checksum included
  uint32_t next_pos = 0;  // offset after this event in its binlog file
  uint16_t flags = 0;
};

constexpr size_t kHeaderLen = 19;
constexpr uint16_t kLogEventArtificialFlag = 0x20;

// What the stream's FORMAT_DESCRIPTION said; needed to find bodies.
struct Format {
  bool checksum = false;  // events end in 4 CRC32 bytes
  // Post-header length per event type (index: type - 1).
  std::vector<uint8_t> post_header;
  uint8_t PostHeader(uint8_t type, uint8_t fallback) const {
    return type >= 1 && type <= post_header.size() ? post_header[type - 1]
                                                   : fallback;
  }
};

// Parses the 19-byte header; checks `event` is as long as it says.
Result<EventHeader> ParseHeader(std::string_view event);
// The event's data after the header, without the checksum; with
// f.checksum, checks the CRC32 first (BadInput naming the event on a
// mismatch).
Result<std::string_view> EventBody(std::string_view event, const EventHeader& h,
                                   const Format& f);

// A FORMAT_DESCRIPTION event (its body): the post-header lengths and
// whether the events that follow carry checksums.
Result<Format> ParseFormatDescription(std::string_view body);

struct Rotate {
  uint64_t position = 0;
  std::string file;
};
Result<Rotate> ParseRotate(std::string_view body);

struct Gtid {
  uint32_t domain = 0;
  uint32_t server_id = 0;
  uint64_t seqno = 0;
  bool standalone = false;  // FL_STANDALONE: no XID or COMMIT follows
  std::string ToString() const;
};
// A MariaDB GTID event (server id from the event header).
Result<Gtid> ParseGtid(std::string_view body, uint32_t server_id);
// "D-S-N"; BadInput otherwise.
Result<Gtid> ParseGtidText(std::string_view text);

Result<uint64_t> ParseXid(std::string_view body);

// A GTID_LIST event: the binlog state (last GTID per domain and server).
Result<std::vector<Gtid>> ParseGtidList(std::string_view body);

struct Query {
  std::string_view db;     // the default database of the statement
  std::string_view query;  // the statement text
};
Result<Query> ParseQuery(std::string_view body, const Format& f);

// A TABLE_MAP event with binlog_row_metadata=FULL's optional metadata.
struct TableMap {
  uint64_t table_id = 0;
  std::string db;
  std::string table;
  std::vector<uint8_t> types;  // column types as logged
  std::vector<uint16_t> meta;  // per-column metadata (see values.h)
  std::vector<bool> nullable;
  // From the optional metadata (empty when the server sent none).
  std::vector<std::string> names;
  std::vector<bool> is_unsigned;     // per column; numeric columns only
  std::vector<uint32_t> collations;  // per column; 0 where not text
  std::vector<std::vector<std::string>> enum_values;  // per column
  std::vector<std::vector<std::string>> set_values;   // per column
  std::vector<uint32_t> primary_key;                  // column indexes
  bool has_metadata = false;                          // column names arrived
};
Result<TableMap> ParseTableMap(std::string_view body, const Format& f);

// The real type of a column: a STRING column's metadata hides CHAR, ENUM
// and SET apart; every other type is itself.
uint8_t RealType(uint8_t type, uint16_t meta);

// A rows event's header; the rows stay as bytes for DecodeRow.
struct RowsEvent {
  uint8_t kind = 0;  // 'c' write, 'u' update, 'd' delete
  uint64_t table_id = 0;
  uint16_t flags = 0;  // STMT_END_F = 1
  uint64_t columns = 0;
  std::vector<bool> present;        // columns in the (before) image
  std::vector<bool> present_after;  // updates: columns in the after image
  std::string_view rows;            // the row images
};
// Rows events of both versions; compressed rows events are refused
// (Config: log_bin_compress is documented as unsupported).
Result<RowsEvent> ParseRows(uint8_t type, std::string_view body,
                            const Format& f);

// Reads a packed (length-encoded) integer.
bool GetPacked(std::string_view* in, uint64_t* v);

// CRC32 (IEEE, as zlib's crc32) of `data`, as the binlog's checksum.
uint32_t Crc32(std::string_view data);

}  // namespace cdc::mariadb
