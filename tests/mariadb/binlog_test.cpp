// Byte-exact tests of the binlog decoders (binlog.h) and value renderers
// (values.h) on events and row images built by hand from the format's
// documentation, including hostile ones: short, lying and bit-flipped.
#include "cdc/mariadb/binlog.h"

#include <catch2/catch.hpp>
#include <string>

#include "cdc/base/coding.h"
#include "cdc/mariadb/values.h"

namespace cdc::mariadb {

namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

// A whole event: header for `type` around `body`, with a CRC32 if asked.
std::string Event(uint8_t type, const std::string& body, bool crc,
                  uint32_t next_pos = 1000) {
  std::string e(kHeaderLen, '\0');
  PutFixed32(e.data(), 1700000000);
  e[4] = static_cast<char>(type);
  PutFixed32(e.data() + 5, 7);
  const uint32_t len = kHeaderLen + body.size() + (crc ? 4 : 0);
  PutFixed32(e.data() + 9, len);
  PutFixed32(e.data() + 13, next_pos);
  e += body;
  if (crc) {
    char c[4];
    PutFixed32(c, Crc32(e));
    e.append(c, 4);
  }
  return e;
}

Format Crc() {
  Format f;
  f.checksum = true;
  f.post_header.assign(170, 0);
  f.post_header[kQueryEvent - 1] = 13;
  f.post_header[kTableMapEvent - 1] = 8;
  f.post_header[kWriteRowsV1 - 1] = 8;
  f.post_header[kUpdateRowsV1 - 1] = 8;
  f.post_header[kDeleteRowsV1 - 1] = 8;
  f.post_header[kRotateEvent - 1] = 8;
  return f;
}

std::string Render(uint8_t type, uint16_t meta, const std::string& bytes,
                   bool is_unsigned = false, size_t* left = nullptr) {
  Column c;
  c.name = "c";
  c.type = type;
  c.meta = meta;
  c.real = RealType(type, meta);
  c.is_unsigned = is_unsigned;
  std::string_view in = bytes;
  std::string out;
  Status s = AppendValue(c, &in, &out);
  if (!s.ok()) return "<error: " + s.message() + ">";
  if (left != nullptr) *left = in.size();
  return out;
}

}  // namespace

TEST_CASE("binlog: header, checksum and body", "[mariadb]") {
  const std::string e =
      Event(kXidEvent, Bytes({42, 0, 0, 0, 0, 0, 0, 0}), true);
  auto h = ParseHeader(e);
  REQUIRE(h.ok());
  CHECK(h->type == kXidEvent);
  CHECK(h->server_id == 7);
  CHECK(h->length == e.size());
  auto body = EventBody(e, *h, Crc());
  REQUIRE(body.ok());
  CHECK(*ParseXid(*body) == 42);

  // One flipped bit anywhere fails the checksum.
  for (size_t i = kHeaderLen; i < e.size(); ++i) {
    std::string bad = e;
    bad[i] ^= 0x10;
    auto hb = ParseHeader(bad);
    REQUIRE(hb.ok());
    CHECK_FALSE(EventBody(bad, *hb, Crc()).ok());
  }
  // A length that lies, and a header cut short, are refused.
  CHECK_FALSE(ParseHeader(e.substr(0, e.size() - 1)).ok());
  CHECK_FALSE(ParseHeader(e.substr(0, 10)).ok());
  CHECK_FALSE(ParseXid(Bytes({1, 2, 3})).ok());
}

TEST_CASE("binlog: CRC32 is zlib's", "[mariadb]") {
  CHECK(Crc32("123456789") == 0xCBF43926u);
  CHECK(Crc32("") == 0);
}

TEST_CASE("binlog: GTID events and text", "[mariadb]") {
  std::string body(13, '\0');
  PutFixed64(body.data(), 100);
  PutFixed32(body.data() + 8, 3);
  body[12] = 1;  // standalone
  auto g = ParseGtid(body, 9);
  REQUIRE(g.ok());
  CHECK(g->ToString() == "3-9-100");
  CHECK(g->standalone);
  auto t = ParseGtidText("0-1-18446744073709551615");
  REQUIRE(t.ok());
  CHECK(t->seqno == 18446744073709551615ull);
  for (const char* bad : {"", "0-1", "0-1-", "-1-2", "a-b-c", "0-1-2-3",
                          "0-1-184467440737095516150", "4294967296-1-1"})
    CHECK_FALSE(ParseGtidText(bad).ok());
}

TEST_CASE("binlog: packed integers", "[mariadb]") {
  std::string_view in;
  uint64_t v;
  std::string s = Bytes({250});
  in = s;
  CHECK((GetPacked(&in, &v) && v == 250 && in.empty()));
  s = Bytes({252, 0x34, 0x12});
  in = s;
  CHECK((GetPacked(&in, &v) && v == 0x1234));
  s = Bytes({253, 1, 2, 3});
  in = s;
  CHECK((GetPacked(&in, &v) && v == 0x030201));
  s = Bytes({254, 1, 0, 0, 0, 0, 0, 0});  // one byte short
  in = s;
  CHECK_FALSE(GetPacked(&in, &v));
  s = Bytes({251});
  in = s;
  CHECK_FALSE(GetPacked(&in, &v));
}

TEST_CASE("binlog: a table map with full metadata", "[mariadb]") {
  // shop.t (id INT UNSIGNED PK, name VARCHAR(20) utf8mb4, e ENUM('a','b'))
  std::string b = Bytes({5, 0, 0, 0, 0, 0, 1, 0});  // table id 5, flags
  b += Bytes({4}) + "shop" + Bytes({0});
  b += Bytes({1}) + "t" + Bytes({0});
  b += Bytes({3, 3, 15, 254});     // INT, VARCHAR, STRING
  b += Bytes({4, 80, 0, 247, 1});  // meta: varchar 80, enum size 1
  b += Bytes({6});                 // nullable: name, e
  b += Bytes({1, 1, 0x80});        // SIGNEDNESS: first numeric unsigned
  b += Bytes({2, 1, 45});          // DEFAULT_CHARSET utf8mb4
  b += Bytes({4, 10, 2}) + "id" + Bytes({4}) + "name" + Bytes({1}) + "e";
  b += Bytes({6, 5, 2, 1}) + "a" + Bytes({1}) + "b";  // ENUM_STR_VALUE
  b += Bytes({8, 1, 0});                              // SIMPLE_PRIMARY_KEY
  auto t = ParseTableMap(b, Crc());
  INFO(t.status().message());
  REQUIRE(t.ok());
  CHECK(t->table_id == 5);
  CHECK(t->db == "shop");
  CHECK(t->table == "t");
  CHECK(t->names == std::vector<std::string>{"id", "name", "e"});
  CHECK(t->is_unsigned[0]);
  CHECK(t->collations[1] == 45);
  CHECK(t->enum_values[2] == std::vector<std::string>{"a", "b"});
  CHECK(t->primary_key == std::vector<uint32_t>{0});
  CHECK(RealType(t->types[2], t->meta[2]) == 247);
  CHECK(t->nullable == std::vector<bool>{false, true, true});
  // Every truncation of it is an error, never a read past the end.
  for (size_t n = 8; n + 1 < b.size(); ++n) {
    auto cut = ParseTableMap(b.substr(0, n), Crc());
    if (cut.ok()) CHECK(n >= 27);  // only whole optional-metadata fields
  }
}

TEST_CASE("binlog: rows events", "[mariadb]") {
  std::string b = Bytes({5, 0, 0, 0, 0, 0, 1, 0});
  b += Bytes({2, 3, 3});  // 2 columns, before and after both full
  b += Bytes({0, 1, 0, 0, 0, 0, 2, 0, 0, 0});
  auto r = ParseRows(kUpdateRowsV1, b, Crc());
  REQUIRE(r.ok());
  CHECK(r->kind == 'u');
  CHECK(r->table_id == 5);
  CHECK(r->present == std::vector<bool>{true, true});
  CHECK(r->rows.size() == 10);
  CHECK(ParseRows(kWriteRowsCompressedV1, b, Crc()).status().code() ==
        Code::kConfig);
  CHECK_FALSE(ParseRows(kUpdateRowsV1, b.substr(0, 9), Crc()).ok());
}

TEST_CASE("values: integers of every width and sign", "[mariadb]") {
  CHECK(Render(1, 0, Bytes({0x80})) == "-128");
  CHECK(Render(1, 0, Bytes({0x80}), true) == "128");
  CHECK(Render(2, 0, Bytes({0xFF, 0xFF})) == "-1");
  CHECK(Render(9, 0, Bytes({0, 0, 0x80})) == "-8388608");
  CHECK(Render(9, 0, Bytes({0xFF, 0xFF, 0xFF}), true) == "16777215");
  CHECK(Render(3, 0, Bytes({0xFF, 0xFF, 0xFF, 0xFF}), true) == "4294967295");
  CHECK(Render(8, 0, std::string(8, '\xFF'), true) == "18446744073709551615");
  CHECK(Render(8, 0, Bytes({0, 0, 0, 0, 0, 0, 0, 0x80})) ==
        "-9223372036854775808");
  CHECK(Render(3, 0, Bytes({1, 2})).starts_with("<error"));
}

TEST_CASE("values: DECIMAL exactly", "[mariadb]") {
  size_t used;
  // DECIMAL(10,2) 1234.56 and -1234.56 (MySQL's documented example form).
  auto p = DecodeDecimal(Bytes({0x80, 0x00, 0x04, 0xD2, 0x38}), 10, 2, &used);
  REQUIRE(p.ok());
  CHECK(*p == "1234.56");
  CHECK(used == 5);
  auto n = DecodeDecimal(Bytes({0x7F, 0xFF, 0xFB, 0x2D, 0xC7}), 10, 2, &used);
  REQUIRE(n.ok());
  CHECK(*n == "-1234.56");
  auto z = DecodeDecimal(Bytes({0x80, 0, 0, 0, 0}), 10, 2, &used);
  CHECK(*z == "0.00");
  CHECK_FALSE(DecodeDecimal(Bytes({0x80, 0}), 10, 2, &used).ok());
  CHECK_FALSE(DecodeDecimal("", 66, 0, &used).ok());
  // A group above 999999999 is not a decimal.
  CHECK_FALSE(DecodeDecimal(Bytes({0xFF, 0xFF, 0xFF, 0xFF}), 9, 0, &used).ok());
}

TEST_CASE("values: temporal types", "[mariadb]") {
  // DATE 2024-02-29: 2024 << 9 | 2 << 5 | 29.
  const uint32_t d = 2024u << 9 | 2u << 5 | 29u;
  CHECK(
      Render(10, 0, Bytes({int(d & 0xFF), int(d >> 8 & 0xFF), int(d >> 16)})) ==
      "\"2024-02-29\"");
  CHECK(Render(10, 0, Bytes({0, 0, 0})) == "\"0000-00-00\"");
  // TIME2(0) -838:59:59 and 838:59:59.
  const int64_t hms = (838 << 12) | (59 << 6) | 59;
  const uint32_t pos = 0x800000 + hms, neg = 0x800000 - hms;
  CHECK(Render(19, 0,
               Bytes({int(pos >> 16), int(pos >> 8 & 0xFF),
                      int(pos & 0xFF)})) == "\"838:59:59\"");
  CHECK(Render(19, 0,
               Bytes({int(neg >> 16), int(neg >> 8 & 0xFF),
                      int(neg & 0xFF)})) == "\"-838:59:59\"");
  // TIME2(3) -00:00:01.5: integer part -2 (floored) and 0x10000 - 5000
  // ten-thousandths, as MySQL stores negative fractions.
  const uint32_t ip = 0x800000 - 2;
  const int frac = 0x10000 - 5000;
  CHECK(Render(19, 3,
               Bytes({int(ip >> 16), int(ip >> 8 & 0xFF), int(ip & 0xFF),
                      frac >> 8, frac & 0xFF})) == "\"-00:00:01.5\"");
  // DATETIME2(6) 9999-12-31 23:59:59.999999.
  const uint64_t ym = 9999 * 13 + 12;
  const uint64_t v =
      0x8000000000ull | (((ym << 5 | 31) << 17) | (23 << 12 | 59 << 6 | 59));
  std::string b;
  for (int i = 4; i >= 0; --i) b.push_back(static_cast<char>(v >> (8 * i)));
  b += Bytes({0x0F, 0x42, 0x3F});  // 999999
  size_t left = 99;
  CHECK(Render(18, 6, b + "x", false, &left) ==
        "\"9999-12-31T23:59:59.999999\"");
  CHECK(left == 1);
  // TIMESTAMP2(0): seconds big-endian, UTC.
  CHECK(Render(17, 0, Bytes({0x7F, 0xFF, 0xFF, 0xFF})) ==
        "\"2038-01-19T03:14:07Z\"");
  CHECK(Render(17, 0, Bytes({0, 0, 0, 0})) == "\"0000-00-00T00:00:00Z\"");
  CHECK(Render(13, 0, Bytes({124})) == "2024");
  CHECK(Render(13, 0, Bytes({0})) == "0");
}

TEST_CASE("values: strings, BIT, ENUM, SET and charsets", "[mariadb]") {
  Column c;
  c.name = "s";
  c.type = c.real = 15;
  c.meta = 40;
  auto latin1 = Charset::ForName("latin1");
  REQUIRE(latin1.ok());
  c.charset = &*latin1;
  std::string in = Bytes({4, 'c', 'a', 'f', 0xE9});
  std::string_view v = in;
  std::string out;
  REQUIRE(AppendValue(c, &v, &out).ok());
  CHECK(out == "\"caf\xC3\xA9\"");
  // 0x80 is the euro sign in MariaDB's latin1, 0x81 the C1 control.
  in = Bytes({2, 0x80, 0x81});
  v = in;
  out.clear();
  REQUIRE(AppendValue(c, &v, &out).ok());
  CHECK(out == "\"\xE2\x82\xAC\xC2\x81\"");
  // Invalid UTF-8 in a utf8mb4 column is an error, not a guess.
  auto utf8 = Charset::ForName("utf8mb4");
  c.charset = &*utf8;
  in = Bytes({2, 0xC3, 0x28});
  v = in;
  out.clear();
  CHECK(AppendValue(c, &v, &out).code() == Code::kBadInput);
  CHECK(Charset::ForName("klingon").status().code() == Code::kConfig);
  // A length beyond the image.
  c.charset = nullptr;
  in = Bytes({9, 'a'});
  v = in;
  CHECK_FALSE(AppendValue(c, &v, &out).ok());

  CHECK(Render(16, 0x0105, Bytes({0x15, 0x55})) == "\"1010101010101\"");
  CHECK(Render(16, 0x0001, Bytes({1})) == "\"1\"");

  std::vector<std::string> labels = {"a", "b", "c"};
  Column e;
  e.name = "e";
  e.type = 254;
  e.meta = 247 | (1 << 8);
  e.real = 247;
  e.labels = &labels;
  std::string one = Bytes({2});
  std::string_view ev = one;
  out.clear();
  REQUIRE(AppendValue(e, &ev, &out).ok());
  CHECK(out == "\"b\"");
  std::string four = Bytes({4});
  ev = four;
  CHECK_FALSE(AppendValue(e, &ev, &out).ok());
  Column s = e;
  s.meta = 248 | (1 << 8);
  s.real = 248;
  std::string bits = Bytes({5});
  ev = bits;
  out.clear();
  REQUIRE(AppendValue(s, &ev, &out).ok());
  CHECK(out == "\"a,c\"");
}

}  // namespace cdc::mariadb
