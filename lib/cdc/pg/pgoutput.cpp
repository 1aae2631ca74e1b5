#include "cdc/pg/pgoutput.h"

#include <cstdio>
#include <utility>

namespace cdc::pg {

std::string DescribeByte(uint8_t byte) {
  char buf[16];
  if (byte >= 0x20 && byte < 0x7f) {
    snprintf(buf, sizeof buf, "'%c' (0x%02x)", byte, byte);
  } else {
    snprintf(buf, sizeof buf, "0x%02x", byte);
  }
  return buf;
}

namespace {

constexpr std::pair<char, const char*> kMessageNames[] = {
    {'B', "Begin"},    {'C', "Commit"},  {'O', "Origin"}, {'R', "Relation"},
    {'Y', "Type"},     {'I', "Insert"},  {'U', "Update"}, {'D', "Delete"},
    {'T', "Truncate"}, {'M', "Message"},
};

// Null for a type byte pgoutput protocol version 1 does not send.
const char* MessageName(char type) {
  for (const auto& [t, name] : kMessageNames) {
    if (t == type) return name;
  }
  return nullptr;
}

// Big-endian reader over one message, starting after the type byte (so that
// offsets in errors count from the start of the message). The first failure
// sticks: later reads return zero values and consume nothing, so a decoder
// can read a whole message and check once. Loops bounded by a count from
// the wire must still check ok() or the remaining size, so that a bogus
// count costs neither time nor memory.
class Reader {
 public:
  Reader(std::string_view data, char type, Lsn wal_lsn)
      : data_(data), pos_(1), type_(type), wal_lsn_(wal_lsn) {}

  bool ok() const { return error_.ok(); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

  uint8_t U8() {
    const char* p = Take(1);
    return p ? static_cast<uint8_t>(*p) : 0;
  }
  int16_t I16() { return static_cast<int16_t>(Unsigned(2)); }
  int32_t I32() { return static_cast<int32_t>(Unsigned(4)); }
  uint32_t U32() { return static_cast<uint32_t>(Unsigned(4)); }
  uint64_t U64() { return Unsigned(8); }

  // A TimestampTz, converted to µs since the Unix epoch.
  int64_t Timestamp() {
    int64_t pg = static_cast<int64_t>(Unsigned(8));
    int64_t unix_us = 0;
    if (__builtin_add_overflow(pg, kPostgresEpochOffsetMicros, &unix_us)) {
      Fail("timestamp out of range at offset " + std::to_string(pos_ - 8));
      return 0;
    }
    return unix_us;
  }

  // A NUL-terminated string (the terminator is consumed, not returned).
  std::string CString() {
    if (!ok()) return {};
    size_t nul = data_.find('\0', pos_);
    if (nul == std::string_view::npos) {
      Truncated("unterminated string at offset " + std::to_string(pos_));
      return {};
    }
    std::string s(data_.substr(pos_, nul - pos_));
    pos_ = nul + 1;
    return s;
  }

  std::string Bytes(size_t n) {
    const char* p = Take(n);
    return p ? std::string(p, n) : std::string();
  }

  // Records `what` as the error (if none yet), naming message and position.
  void Fail(const std::string& what) {
    if (!ok()) return;
    error_ = Status::BadInput(what + " in pgoutput " + MessageName(type_) +
                              " message at " + FormatLsn(wal_lsn_));
  }

  // The error if any, else an error if bytes are left over.
  Status Finish() {
    if (ok() && pos_ != data_.size()) {
      size_t extra = data_.size() - pos_;
      Fail(std::to_string(extra) +
           (extra == 1 ? " trailing byte" : " trailing bytes") +
           " after offset " + std::to_string(pos_));
    }
    return error_;
  }

 private:
  const char* Take(size_t n) {
    if (!ok()) return nullptr;
    if (n > remaining()) {
      Truncated("need " + std::to_string(n) + " bytes at offset " +
                std::to_string(pos_) + " of " + std::to_string(data_.size()));
      return nullptr;
    }
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }

  uint64_t Unsigned(size_t n) {
    const char* p = Take(n);
    if (p == nullptr) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
  }

  void Truncated(const std::string& detail) {
    error_ = Status::BadInput(std::string("truncated pgoutput ") +
                              MessageName(type_) + " message at " +
                              FormatLsn(wal_lsn_) + ": " + detail);
  }

  std::string_view data_;
  size_t pos_;
  char type_;
  Lsn wal_lsn_;
  Status error_;
};

// Rejects flag bits outside `known`.
void CheckFlags(Reader* r, uint8_t flags, uint8_t known) {
  if ((flags & ~known) != 0) {
    char buf[8];
    snprintf(buf, sizeof buf, "0x%02x", flags);
    r->Fail(std::string("unrecognized flags ") + buf);
  }
}

// Flags (none defined), commit LSN, end LSN and commit time.
void ReadCommitFields(Reader* r, Commit* m) {
  m->flags = r->U8();
  CheckFlags(r, m->flags, 0);
  m->commit_lsn = r->U64();
  m->end_lsn = r->U64();
  m->commit_time = r->Timestamp();
}

TupleData ReadTupleData(Reader* r) {
  TupleData tuple;
  int16_t ncols = r->I16();
  if (ncols < 0) {
    r->Fail("negative column count " + std::to_string(ncols));
    return tuple;
  }
  // Each column takes at least its kind byte, so a bogus count fails on
  // the first missing byte instead of allocating.
  if (static_cast<size_t>(ncols) <= r->remaining()) tuple.reserve(ncols);
  for (int i = 0; i < ncols && r->ok(); ++i) {
    TupleColumn col;
    size_t at = r->pos();
    uint8_t kind = r->U8();
    if (!r->ok()) break;
    switch (kind) {
      case 'n':
      case 'u':
        col.kind = static_cast<TupleColumn::Kind>(kind);
        break;
      case 't':
      case 'b': {
        col.kind = static_cast<TupleColumn::Kind>(kind);
        int32_t len = r->I32();
        if (len < 0) {
          r->Fail("negative value length " + std::to_string(len) +
                  " at offset " + std::to_string(r->pos() - 4));
          break;
        }
        col.value = r->Bytes(static_cast<size_t>(len));
        break;
      }
      default:
        r->Fail("unrecognized tuple data kind " + DescribeByte(kind) +
                " at offset " + std::to_string(at));
    }
    tuple.push_back(std::move(col));
  }
  return tuple;
}

// Reads a 'K' or 'O' marker and its tuple (Delete, and Update's optional
// old tuple).
char ReadOldTuple(Reader* r, uint8_t marker, TupleData* tuple) {
  if (marker != 'K' && marker != 'O') {
    r->Fail("unrecognized tuple marker " + DescribeByte(marker) +
            " at offset " + std::to_string(r->pos() - 1));
    return 0;
  }
  *tuple = ReadTupleData(r);
  return static_cast<char>(marker);
}

void ExpectNewTupleMarker(Reader* r, uint8_t marker) {
  if (r->ok() && marker != 'N') {
    r->Fail("unrecognized tuple marker " + DescribeByte(marker) +
            " at offset " + std::to_string(r->pos() - 1) + " (expected 'N')");
  }
}

Message ReadRelation(Reader* r) {
  Relation m;
  m.oid = r->U32();
  m.nspname = r->CString();
  m.relname = r->CString();
  uint8_t identity = r->U8();
  if (r->ok() && identity != 'd' && identity != 'n' && identity != 'f' &&
      identity != 'i') {
    r->Fail("unrecognized replica identity " + DescribeByte(identity));
  }
  m.replica_identity = static_cast<char>(identity);
  int16_t ncols = r->I16();
  if (ncols < 0) r->Fail("negative column count " + std::to_string(ncols));
  for (int i = 0; i < ncols && r->ok(); ++i) {
    RelationColumn col;
    col.flags = r->U8();
    CheckFlags(r, col.flags, 1);
    col.name = r->CString();
    col.type_oid = r->U32();
    col.type_modifier = r->I32();
    m.columns.push_back(std::move(col));
  }
  return m;
}

Message ReadUpdate(Reader* r) {
  Update m;
  m.relation_oid = r->U32();
  uint8_t marker = r->U8();
  if (r->ok() && marker != 'N') {
    m.old_kind = ReadOldTuple(r, marker, &m.old_tuple);
    marker = r->U8();
  }
  ExpectNewTupleMarker(r, marker);
  m.new_tuple = ReadTupleData(r);
  return m;
}

Message ReadTruncate(Reader* r) {
  Truncate m;
  int32_t nrels = r->I32();
  m.options = r->U8();
  CheckFlags(r, m.options, Truncate::kCascade | Truncate::kRestartIdentity);
  if (r->ok() && nrels < 0) {
    r->Fail("negative relation count " + std::to_string(nrels));
  }
  if (r->ok() && static_cast<size_t>(nrels) * 4 <= r->remaining()) {
    m.relation_oids.reserve(static_cast<size_t>(nrels));
  }
  for (int32_t i = 0; i < nrels && r->ok(); ++i) {
    m.relation_oids.push_back(r->U32());
  }
  return m;
}

Message ReadLogicalMessage(Reader* r) {
  LogicalMessage m;
  m.flags = r->U8();
  CheckFlags(r, m.flags, LogicalMessage::kTransactional);
  m.lsn = r->U64();
  m.prefix = r->CString();
  int32_t len = r->I32();
  if (r->ok() && len < 0) {
    r->Fail("negative content length " + std::to_string(len));
  }
  if (r->ok()) m.content = r->Bytes(static_cast<size_t>(len));
  return m;
}

Message ReadBody(Reader* r, char type) {
  switch (type) {
    case 'B': {
      Begin m;
      m.final_lsn = r->U64();
      m.commit_time = r->Timestamp();
      m.xid = r->U32();
      return m;
    }
    case 'C': {
      Commit m;
      ReadCommitFields(r, &m);
      return m;
    }
    case 'O': {
      Origin m;
      m.origin_lsn = r->U64();
      m.name = r->CString();
      return m;
    }
    case 'R':
      return ReadRelation(r);
    case 'Y': {
      Type m;
      m.oid = r->U32();
      m.nspname = r->CString();
      m.name = r->CString();
      return m;
    }
    case 'I': {
      Insert m;
      m.relation_oid = r->U32();
      ExpectNewTupleMarker(r, r->U8());
      m.new_tuple = ReadTupleData(r);
      return m;
    }
    case 'U':
      return ReadUpdate(r);
    case 'D': {
      Delete m;
      m.relation_oid = r->U32();
      uint8_t marker = r->U8();
      if (r->ok()) m.old_kind = ReadOldTuple(r, marker, &m.old_tuple);
      return m;
    }
    case 'T':
      return ReadTruncate(r);
    case 'M':
      return ReadLogicalMessage(r);
  }
  return Origin{};  // not reached: DecodeMessage checks the type first
}

}  // namespace

Result<Message> DecodeMessage(std::string_view data, Lsn wal_lsn) {
  if (data.empty()) {
    return Status::BadInput("empty pgoutput message at " + FormatLsn(wal_lsn));
  }
  char type = data[0];
  if (MessageName(type) == nullptr) {
    return Status::BadInput("unrecognized pgoutput message type " +
                            DescribeByte(static_cast<uint8_t>(type)) + " at " +
                            FormatLsn(wal_lsn));
  }
  Reader r(data, type, wal_lsn);
  Message m = ReadBody(&r, type);
  CDC_RETURN_IF_ERROR(r.Finish());
  return m;
}

char MessageType(const Message& message) {
  static constexpr char kTypes[] = {'B', 'C', 'O', 'R', 'Y',
                                    'I', 'U', 'D', 'T', 'M'};
  static_assert(sizeof kTypes == std::variant_size_v<Message>);
  return kTypes[message.index()];
}

}  // namespace cdc::pg
