// Decoder of pgoutput logical replication messages (protocol version 1),
// the payload of the replication protocol's XLogData ('w') messages (see
// replication.h). Transactions arrive whole, after they commit: capture does
// not ask for streaming of in-progress transactions (version 2).
//
// Pure: no network, no libpq. Decoding copies what it keeps, so a decoded
// Message does not refer to the input buffer. Every read is bounds-checked:
// a truncated message, trailing bytes, an unknown message type, tuple kind,
// tuple marker or flag bit fails with Status::BadInput and a one-line
// message naming the byte and the WAL position, e.g.
//   unrecognized pgoutput message type 'Z' (0x5a) at 0/16B3748
// Field names follow PostgreSQL's protocol documentation ("Logical
// Replication Message Formats") and proto.c.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/pg/replication.h"

namespace cdc::pg {

// One column of a TupleData.
struct TupleColumn {
  enum class Kind : char {
    kNull = 'n',            // NULL (in a 'K' tuple: also "not sent")
    kUnchangedToast = 'u',  // unchanged TOASTed value; no value is sent
    kText = 't',            // value in PostgreSQL's text output form
    kBinary = 'b',          // value in the type's binary send form
  };
  Kind kind = Kind::kNull;
  std::string value;  // only for kText and kBinary
  // Set instead of `value` by a decoder that keeps the value's text where
  // it already lies (CopyBinaryReader: in the message for text, varchar,
  // json..., in its own buffer for numbers and uuids): valid as long as
  // that decoder says. Copying a 256-byte text value row by row cost a
  // seventh of capture's CPU in an initial snapshot.
  std::string_view view;

  bool has_value() const {
    return kind == Kind::kText || kind == Kind::kBinary;
  }
  // The value's bytes, wherever they lie.
  std::string_view text() const {
    return view.data() != nullptr ? view : std::string_view(value);
  }
};
using TupleData = std::vector<TupleColumn>;

// Transaction ids are 32-bit on the wire.
using Xid = uint32_t;
using Oid = uint32_t;

struct Begin {              // 'B'
  Lsn final_lsn = 0;        // LSN of the commit record
  int64_t commit_time = 0;  // µs since the Unix epoch
  Xid xid = 0;
};

struct Commit {       // 'C'
  uint8_t flags = 0;  // always 0 (anything else is rejected)
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;
  int64_t commit_time = 0;  // µs since the Unix epoch
};

struct Origin {        // 'O'
  Lsn origin_lsn = 0;  // commit LSN on the origin server
  std::string name;
};

struct RelationColumn {
  uint8_t flags = 0;  // bit 1: part of the replica identity
  std::string name;
  Oid type_oid = 0;
  int32_t type_modifier = -1;

  bool is_key() const { return (flags & 1) != 0; }
  bool operator==(const RelationColumn&) const = default;
};

struct Relation {  // 'R'
  Oid oid = 0;
  std::string nspname;
  std::string relname;
  char replica_identity = 'd';  // 'd' default, 'n' nothing, 'f' full, 'i' index
  std::vector<RelationColumn> columns;
};

struct Type {  // 'Y'
  Oid oid = 0;
  std::string nspname;
  std::string name;
};

struct Insert {  // 'I'
  Oid relation_oid = 0;
  TupleData new_tuple;
};

struct Update {  // 'U'
  Oid relation_oid = 0;
  char old_kind = 0;    // 0 (no old tuple), 'K' (old key) or 'O' (old row)
  TupleData old_tuple;  // empty when old_kind is 0
  TupleData new_tuple;
};

struct Delete {  // 'D'
  Oid relation_oid = 0;
  char old_kind = 'K';  // 'K' (old key) or 'O' (old row)
  TupleData old_tuple;
};

struct Truncate {  // 'T'
  static constexpr uint8_t kCascade = 1;
  static constexpr uint8_t kRestartIdentity = 2;

  uint8_t options = 0;
  std::vector<Oid> relation_oids;

  bool cascade() const { return (options & kCascade) != 0; }
  bool restart_identity() const { return (options & kRestartIdentity) != 0; }
};

// A logical decoding message (pg_logical_emit_message).
struct LogicalMessage {  // 'M'
  static constexpr uint8_t kTransactional = 1;

  uint8_t flags = 0;
  Lsn lsn = 0;
  std::string prefix;
  std::string content;  // arbitrary bytes

  bool transactional() const { return (flags & kTransactional) != 0; }
};

using Message = std::variant<Begin, Commit, Origin, Relation, Type, Insert,
                             Update, Delete, Truncate, LogicalMessage>;

// Decodes one pgoutput message. `wal_lsn` (the XLogData start position) is
// used only in error messages. The whole of `data` must be one message; a
// protocol version 2 message (Stream Start 'S', ...) is an unknown type.
Result<Message> DecodeMessage(std::string_view data, Lsn wal_lsn);

// The message type byte of a decoded message ('B', 'C', ...).
char MessageType(const Message& message);

// "'Z' (0x5a)" for a printable byte, "0x01" otherwise: how errors name bytes.
std::string DescribeByte(uint8_t byte);

}  // namespace cdc::pg
