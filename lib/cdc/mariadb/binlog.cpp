#include "cdc/mariadb/binlog.h"

#include <libdeflate.h>

#include <algorithm>

#include "cdc/base/coding.h"

namespace cdc::mariadb {

namespace {

// Types whose table-map metadata is one byte, or two.
int MetaBytes(uint8_t type) {
  switch (type) {
    case 4:    // FLOAT
    case 5:    // DOUBLE
    case 17:   // TIMESTAMP2
    case 18:   // DATETIME2
    case 19:   // TIME2
    case 245:  // JSON (MySQL)
    case 249:  // TINY_BLOB
    case 250:  // MEDIUM_BLOB
    case 251:  // LONG_BLOB
    case 252:  // BLOB
    case 255:  // GEOMETRY
      return 1;
    case 15:   // VARCHAR
    case 16:   // BIT
    case 0:    // DECIMAL (old)
    case 246:  // NEWDECIMAL
    case 247:  // ENUM
    case 248:  // SET
    case 253:  // VAR_STRING
    case 254:  // STRING
    case 140:  // BLOB_COMPRESSED (MariaDB)
    case 141:  // VARCHAR_COMPRESSED (MariaDB)
      return type == 140 ? 1 : 2;
    default:
      return 0;
  }
}

bool IsNumeric(uint8_t t) {
  switch (t) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 8:
    case 9:
    case 0:
    case 246:
      return true;
    default:
      return false;
  }
}

// Columns that carry a character set in the optional metadata (the text
// and binary string types; ENUM and SET have their own).
bool IsCharacter(uint8_t real) {
  switch (real) {
    case 15:
    case 253:
    case 254:
    case 249:
    case 250:
    case 251:
    case 252:
    case 140:
    case 141:
      return true;
    default:
      return false;
  }
}

Status Short(const char* what) {
  return Status::BadInput(std::string("binlog ") + what +
                          " event is truncated");
}

bool GetBytes(std::string_view* in, size_t n, std::string_view* out) {
  if (in->size() < n) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

uint64_t GetLe(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

bool GetPackedString(std::string_view* in, std::string* out) {
  uint64_t n;
  std::string_view s;
  if (!GetPacked(in, &n) || !GetBytes(in, n, &s)) return false;
  out->assign(s);
  return true;
}

bool GetBitmap(std::string_view* in, uint64_t n, std::vector<bool>* out) {
  std::string_view b;
  if (!GetBytes(in, (n + 7) / 8, &b)) return false;
  out->assign(n, false);
  for (uint64_t i = 0; i < n; ++i)
    (*out)[i] = (static_cast<uint8_t>(b[i / 8]) >> (i % 8)) & 1;
  return true;
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  // libdeflate's: the binlog's checksum is zlib's CRC-32, and libdeflate
  // computes it with carry-less multiplication where the CPU has it (four
  // times zlib's speed on a binlog's events; capture checks every byte).
  return libdeflate_crc32(0, data.data(), data.size());
}

bool GetPacked(std::string_view* in, uint64_t* v) {
  if (in->empty()) return false;
  const uint8_t b = static_cast<uint8_t>((*in)[0]);
  int n = 0;
  if (b < 251) {
    *v = b;
    in->remove_prefix(1);
    return true;
  }
  if (b == 252)
    n = 2;
  else if (b == 253)
    n = 3;
  else if (b == 254)
    n = 8;
  else
    return false;  // 251 is NULL, 255 undefined: not a length here
  if (in->size() < static_cast<size_t>(1 + n)) return false;
  *v = GetLe(in->data() + 1, n);
  in->remove_prefix(1 + n);
  return true;
}

Result<EventHeader> ParseHeader(std::string_view e) {
  if (e.size() < kHeaderLen)
    return Status::BadInput("binlog event shorter than its header (" +
                            std::to_string(e.size()) + " bytes)");
  EventHeader h;
  h.timestamp = GetFixed32(e.data());
  h.type = static_cast<uint8_t>(e[4]);
  h.server_id = GetFixed32(e.data() + 5);
  h.length = GetFixed32(e.data() + 9);
  h.next_pos = GetFixed32(e.data() + 13);
  h.flags = GetFixed16(e.data() + 17);
  if (h.length != e.size())
    return Status::BadInput("binlog event of type " + std::to_string(h.type) +
                            " says it is " + std::to_string(h.length) +
                            " bytes long but " + std::to_string(e.size()) +
                            " arrived");
  return h;
}

Result<std::string_view> EventBody(std::string_view e, const EventHeader& h,
                                   const Format& f) {
  std::string_view body = e.substr(kHeaderLen);
  if (!f.checksum || h.type == kFormatDescriptionEvent) return body;
  if (body.size() < 4) return Short("checksummed");
  const uint32_t want = GetFixed32(e.data() + e.size() - 4);
  const uint32_t got = Crc32(e.substr(0, e.size() - 4));
  if (want != got)
    return Status::BadInput("binlog event of type " + std::to_string(h.type) +
                            " ending at " + std::to_string(h.next_pos) +
                            " fails its CRC32 checksum");
  return body.substr(0, body.size() - 4);
}

Result<Format> ParseFormatDescription(std::string_view body) {
  // binlog version (2), server version (50), create time (4), header
  // length (1), post-header lengths, checksum algorithm (1), checksum (4).
  constexpr size_t kFixed = 2 + 50 + 4 + 1;
  if (body.size() < kFixed + 5) return Short("format description");
  if (static_cast<uint8_t>(body[kFixed - 1]) != kHeaderLen)
    return Status::BadInput(
        "binlog event header length " +
        std::to_string(static_cast<uint8_t>(body[kFixed - 1])) +
        " is not 19 (a binlog older than MySQL 5.0?)");
  Format f;
  const std::string_view lens = body.substr(kFixed, body.size() - kFixed - 5);
  f.post_header.assign(lens.begin(), lens.end());
  const uint8_t alg = static_cast<uint8_t>(body[body.size() - 5]);
  if (alg > 1)
    return Status::BadInput("unknown binlog checksum algorithm " +
                            std::to_string(alg));
  f.checksum = alg == 1;
  return f;
}

Result<Rotate> ParseRotate(std::string_view body) {
  if (body.size() < 8) return Short("rotate");
  Rotate r;
  r.position = GetFixed64(body.data());
  r.file.assign(body.substr(8));
  return r;
}

std::string Gtid::ToString() const {
  return std::to_string(domain) + "-" + std::to_string(server_id) + "-" +
         std::to_string(seqno);
}

Result<Gtid> ParseGtid(std::string_view body, uint32_t server_id) {
  if (body.size() < 13) return Short("GTID");
  Gtid g;
  g.seqno = GetFixed64(body.data());
  g.domain = GetFixed32(body.data() + 8);
  g.standalone = (static_cast<uint8_t>(body[12]) & 1) != 0;
  g.server_id = server_id;
  return g;
}

Result<Gtid> ParseGtidText(std::string_view text) {
  uint64_t part[3] = {0, 0, 0};
  int i = 0;
  bool digit = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      const uint64_t d = static_cast<uint64_t>(c - '0');
      if (part[i] > (UINT64_MAX - d) / 10)
        return Status::BadInput("GTID out of range: " + std::string(text));
      part[i] = part[i] * 10 + d;
      digit = true;
    } else if (c == '-' && digit && i < 2) {
      ++i;
      digit = false;
    } else {
      digit = false;
      i = 9;
      break;
    }
  }
  if (i != 2 || !digit || part[0] > UINT32_MAX || part[1] > UINT32_MAX)
    return Status::BadInput("not a MariaDB GTID (DOMAIN-SERVER-SEQNO): \"" +
                            std::string(text) + "\"");
  Gtid g;
  g.domain = static_cast<uint32_t>(part[0]);
  g.server_id = static_cast<uint32_t>(part[1]);
  g.seqno = part[2];
  return g;
}

Result<std::vector<Gtid>> ParseGtidList(std::string_view body) {
  if (body.size() < 4) return Short("GTID list");
  const uint32_t count = GetFixed32(body.data()) & 0x0FFFFFFF;
  if (body.size() < 4 + static_cast<size_t>(count) * 16)
    return Short("GTID list");
  std::vector<Gtid> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    const char* p = body.data() + 4 + i * 16;
    out[i].domain = GetFixed32(p);
    out[i].server_id = GetFixed32(p + 4);
    out[i].seqno = GetFixed64(p + 8);
  }
  return out;
}

Result<uint64_t> ParseXid(std::string_view body) {
  if (body.size() < 8) return Short("XID");
  return GetFixed64(body.data());
}

Result<Query> ParseQuery(std::string_view body, const Format& f) {
  const uint8_t ph = f.PostHeader(kQueryEvent, 13);
  if (ph < 13 || body.size() < ph) return Short("query");
  const uint8_t db_len = static_cast<uint8_t>(body[8]);
  const uint16_t status_len = GetFixed16(body.data() + 11);
  std::string_view rest = body.substr(ph);
  std::string_view status, db, nul;
  if (!GetBytes(&rest, status_len, &status) || !GetBytes(&rest, db_len, &db) ||
      !GetBytes(&rest, 1, &nul))
    return Short("query");
  return Query{db, rest};
}

uint8_t RealType(uint8_t type, uint16_t meta) {
  if (type != 254) return type;
  const uint8_t b0 = meta & 0xFF;
  if ((b0 & 0x30) != 0x30) return b0 | 0x30;
  return b0;
}

Result<TableMap> ParseTableMap(std::string_view body, const Format& f) {
  const uint8_t ph = f.PostHeader(kTableMapEvent, 8);
  if ((ph != 6 && ph != 8) || body.size() < ph) return Short("table map");
  TableMap t;
  t.table_id = GetLe(body.data(), ph == 6 ? 4 : 6);
  std::string_view in = body.substr(ph), s, nul;
  uint64_t n;
  if (in.empty()) return Short("table map");
  if (!GetBytes(&in, 1, &s) || !GetBytes(&in, static_cast<uint8_t>(s[0]), &s))
    return Short("table map");
  t.db.assign(s);
  if (!GetBytes(&in, 1, &nul) || !GetBytes(&in, 1, &s) ||
      !GetBytes(&in, static_cast<uint8_t>(s[0]), &s))
    return Short("table map");
  t.table.assign(s);
  if (!GetBytes(&in, 1, &nul) || !GetPacked(&in, &n) || n > 65536 ||
      !GetBytes(&in, n, &s))
    return Short("table map");
  t.types.assign(s.begin(), s.end());
  uint64_t meta_len;
  std::string_view meta;
  if (!GetPacked(&in, &meta_len) || !GetBytes(&in, meta_len, &meta))
    return Short("table map");
  t.meta.assign(n, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const int mb = MetaBytes(t.types[i]);
    std::string_view m;
    if (!GetBytes(&meta, mb, &m))
      return Status::BadInput("binlog table map of " + t.db + "." + t.table +
                              ": column metadata is truncated");
    t.meta[i] = mb == 0 ? 0
                : mb == 1
                    ? static_cast<uint8_t>(m[0])
                    : static_cast<uint16_t>(static_cast<uint8_t>(m[0]) |
                                            (static_cast<uint8_t>(m[1]) << 8));
  }
  if (!GetBitmap(&in, n, &t.nullable)) return Short("table map");
  // The optional metadata (binlog_row_metadata=MINIMAL or FULL).
  std::vector<uint32_t> numeric, character, enums, sets;
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t real = RealType(t.types[i], t.meta[i]);
    if (IsNumeric(t.types[i])) numeric.push_back(i);
    if (IsCharacter(real)) character.push_back(i);
    if (real == 247) enums.push_back(i);
    if (real == 248) sets.push_back(i);
  }
  t.is_unsigned.assign(n, false);
  t.collations.assign(n, 0);
  t.enum_values.assign(n, {});
  t.set_values.assign(n, {});
  const Status bad =
      Status::BadInput("binlog table map of " + t.db + "." + t.table +
                       ": optional metadata is malformed");
  while (!in.empty()) {
    uint8_t type = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    uint64_t len;
    std::string_view v;
    if (!GetPacked(&in, &len) || !GetBytes(&in, len, &v)) return bad;
    switch (type) {
      case 1:  // SIGNEDNESS
        for (size_t k = 0; k < numeric.size(); ++k) {
          if (k / 8 >= v.size()) return bad;
          t.is_unsigned[numeric[k]] =
              (static_cast<uint8_t>(v[k / 8]) >> (7 - k % 8)) & 1;
        }
        break;
      case 2:     // DEFAULT_CHARSET
      case 10: {  // ENUM_AND_SET_DEFAULT_CHARSET
        const auto& cols = type == 2 ? character : enums;
        uint64_t def;
        if (!GetPacked(&v, &def)) return bad;
        for (uint32_t c : cols) t.collations[c] = static_cast<uint32_t>(def);
        if (type == 10)
          for (uint32_t c : sets) t.collations[c] = static_cast<uint32_t>(def);
        while (!v.empty()) {
          uint64_t idx, coll;
          if (!GetPacked(&v, &idx) || !GetPacked(&v, &coll)) return bad;
          if (type == 2) {
            if (idx >= character.size()) return bad;
            t.collations[character[idx]] = static_cast<uint32_t>(coll);
          } else {
            // Index among the ENUM and SET columns, in column order.
            std::vector<uint32_t> es;
            for (uint32_t i = 0; i < n; ++i) {
              const uint8_t real = RealType(t.types[i], t.meta[i]);
              if (real == 247 || real == 248) es.push_back(i);
            }
            if (idx >= es.size()) return bad;
            t.collations[es[idx]] = static_cast<uint32_t>(coll);
          }
        }
        break;
      }
      case 3:     // COLUMN_CHARSET
      case 11: {  // ENUM_AND_SET_COLUMN_CHARSET
        std::vector<uint32_t> cols = character;
        if (type == 11) {
          cols.clear();
          for (uint32_t i = 0; i < n; ++i) {
            const uint8_t real = RealType(t.types[i], t.meta[i]);
            if (real == 247 || real == 248) cols.push_back(i);
          }
        }
        for (uint32_t c : cols) {
          uint64_t coll;
          if (!GetPacked(&v, &coll)) return bad;
          t.collations[c] = static_cast<uint32_t>(coll);
        }
        break;
      }
      case 4:  // COLUMN_NAME
        t.names.assign(n, "");
        for (uint64_t i = 0; i < n; ++i)
          if (!GetPackedString(&v, &t.names[i])) return bad;
        t.has_metadata = true;
        break;
      case 5:    // SET_STR_VALUE
      case 6: {  // ENUM_STR_VALUE
        const auto& cols = type == 5 ? sets : enums;
        auto& out = type == 5 ? t.set_values : t.enum_values;
        for (uint32_t c : cols) {
          uint64_t count;
          if (!GetPacked(&v, &count) || count > 65536) return bad;
          out[c].resize(count);
          for (auto& label : out[c])
            if (!GetPackedString(&v, &label)) return bad;
        }
        break;
      }
      case 8:  // SIMPLE_PRIMARY_KEY
        while (!v.empty()) {
          uint64_t idx;
          if (!GetPacked(&v, &idx) || idx >= n) return bad;
          t.primary_key.push_back(static_cast<uint32_t>(idx));
        }
        break;
      case 9:  // PRIMARY_KEY_WITH_PREFIX
        while (!v.empty()) {
          uint64_t idx, prefix;
          if (!GetPacked(&v, &idx) || !GetPacked(&v, &prefix) || idx >= n)
            return bad;
          t.primary_key.push_back(static_cast<uint32_t>(idx));
        }
        break;
      default:  // GEOMETRY_TYPE and what later servers add
        break;
    }
  }
  return t;
}

Result<RowsEvent> ParseRows(uint8_t type, std::string_view body,
                            const Format& f) {
  RowsEvent r;
  bool v2 = false;
  switch (type) {
    case kWriteRowsV2:
      v2 = true;
      [[fallthrough]];
    case kWriteRowsV1:
      r.kind = 'c';
      break;
    case kUpdateRowsV2:
      v2 = true;
      [[fallthrough]];
    case kUpdateRowsV1:
      r.kind = 'u';
      break;
    case kDeleteRowsV2:
      v2 = true;
      [[fallthrough]];
    case kDeleteRowsV1:
      r.kind = 'd';
      break;
    case kWriteRowsCompressedV1:
    case kUpdateRowsCompressedV1:
    case kDeleteRowsCompressedV1:
      return Status::Config(
          "the server compresses binlog events (log_bin_compress=ON), which "
          "cdc-capture does not read; turn it off");
    default:
      return Status::BadInput("not a rows event: type " + std::to_string(type));
  }
  const uint8_t ph = f.PostHeader(type, v2 ? 10 : 8);
  if (ph < 6 || body.size() < ph) return Short("rows");
  r.table_id = GetLe(body.data(), ph == 6 ? 4 : 6);
  if (ph >= 8) r.flags = GetFixed16(body.data() + 6);
  std::string_view in = body.substr(ph), s;
  if (v2) {
    if (ph < 10) return Short("rows");
    const uint16_t extra = GetFixed16(body.data() + 8);
    if (extra < 2 || !GetBytes(&in, extra - 2u, &s)) return Short("rows");
  }
  if (!GetPacked(&in, &r.columns) || r.columns > 65536 ||
      !GetBitmap(&in, r.columns, &r.present))
    return Short("rows");
  if (r.kind == 'u' && !GetBitmap(&in, r.columns, &r.present_after))
    return Short("rows");
  r.rows = in;
  return r;
}

}  // namespace cdc::mariadb
