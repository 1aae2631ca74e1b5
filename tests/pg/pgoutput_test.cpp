#include "cdc/pg/pgoutput.h"

#include <catch2/catch.hpp>
#include <random>

#include "pg/wire.h"

namespace cdc::pg {
namespace {

using test::Wire;

constexpr Lsn kWal = 0x16B3748;  // "0/16B3748" in errors
// 2026-11-29T07:41:02.123456Z, in µs since 2000-01-01 and since 1970.
constexpr int64_t kPgTime = 849339662123456;
constexpr int64_t kUnixTime = kPgTime + 946684800000000;

template <typename T>
T Decode(const Wire& w) {
  auto r = DecodeMessage(w.data(), kWal);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<T>(*r));
  return std::get<T>(*r);
}

std::string Error(std::string_view data) {
  auto r = DecodeMessage(data, kWal);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kBadInput);
  return r.status().message();
}

TEST_CASE("Begin and Commit decode with timestamps moved to the Unix epoch",
          "[pg]") {
  auto b = Decode<Begin>(Wire('B').U64(0x1634F28).U64(kPgTime).U32(750));
  CHECK(b.final_lsn == 0x1634F28);
  CHECK(b.commit_time == kUnixTime);
  CHECK(b.xid == 750);

  auto zero = Decode<Begin>(Wire('B').U64(1).U64(0).U32(1));
  CHECK(zero.commit_time == kPostgresEpochOffsetMicros);

  auto c = Decode<Commit>(
      Wire('C').U8(0).U64(0x1634F28).U64(0x1634F58).U64(kPgTime));
  CHECK(c.flags == 0);
  CHECK(c.commit_lsn == 0x1634F28);
  CHECK(c.end_lsn == 0x1634F58);
  CHECK(c.commit_time == kUnixTime);

  CHECK(Error(Wire('C').U8(1).U64(1).U64(2).U64(3).data()) ==
        "unrecognized flags 0x01 in pgoutput Commit message at 0/16B3748");
}

TEST_CASE("Origin, Relation and Type decode", "[pg]") {
  auto o = Decode<Origin>(Wire('O').U64(0xABCDEF).Str("node_a"));
  CHECK(o.origin_lsn == 0xABCDEF);
  CHECK(o.name == "node_a");

  auto r = Decode<Relation>(Wire('R')
                                .U32(16384)
                                .Str("public")
                                .Str("orders")
                                .U8('f')
                                .I16(2)
                                .U8(1)
                                .Str("id")
                                .U32(23)
                                .I32(-1)
                                .U8(0)
                                .Str("note")
                                .U32(1043)
                                .I32(24));
  CHECK(r.oid == 16384);
  CHECK(r.nspname == "public");
  CHECK(r.relname == "orders");
  CHECK(r.replica_identity == 'f');
  REQUIRE(r.columns.size() == 2);
  CHECK(r.columns[0] == RelationColumn{1, "id", 23, -1});
  CHECK(r.columns[0].is_key());
  CHECK(r.columns[1] == RelationColumn{0, "note", 1043, 24});
  CHECK_FALSE(r.columns[1].is_key());

  auto t = Decode<Type>(Wire('Y').U32(90001).Str("public").Str("mood"));
  CHECK(t.oid == 90001);
  CHECK(t.nspname == "public");
  CHECK(t.name == "mood");

  CHECK(Error(Wire('R').U32(1).Str("s").Str("t").U8('x').I16(0).data()) ==
        "unrecognized replica identity 'x' (0x78) in pgoutput Relation "
        "message at 0/16B3748");
  CHECK(Error(Wire('R')
                  .U32(1)
                  .Str("s")
                  .Str("t")
                  .U8('d')
                  .I16(1)
                  .U8(2)
                  .Str("c")
                  .U32(23)
                  .I32(-1)
                  .data()) ==
        "unrecognized flags 0x02 in pgoutput Relation message at 0/16B3748");
  CHECK(Error(Wire('R').U32(16384).Raw("public").data()) ==
        "truncated pgoutput Relation message at 0/16B3748: unterminated "
        "string at offset 5");
}

TEST_CASE("Insert carries every tuple data kind", "[pg]") {
  auto m = Decode<Insert>(Wire('I')
                              .U32(16384)
                              .U8('N')
                              .I16(5)
                              .Text("42")
                              .Null()
                              .Toast()
                              .Binary(std::string("\x00\x01\xff", 3))
                              .Text(""));
  CHECK(m.relation_oid == 16384);
  REQUIRE(m.new_tuple.size() == 5);
  using K = TupleColumn::Kind;
  CHECK(m.new_tuple[0].kind == K::kText);
  CHECK(m.new_tuple[0].value == "42");
  CHECK(m.new_tuple[1].kind == K::kNull);
  CHECK(m.new_tuple[2].kind == K::kUnchangedToast);
  CHECK_FALSE(m.new_tuple[2].has_value());
  CHECK(m.new_tuple[3].kind == K::kBinary);
  CHECK(m.new_tuple[3].value == std::string("\x00\x01\xff", 3));
  CHECK(m.new_tuple[4].kind == K::kText);
  CHECK(m.new_tuple[4].value.empty());

  auto empty = Decode<Insert>(Wire('I').U32(7).U8('N').I16(0));
  CHECK(empty.new_tuple.empty());
}

TEST_CASE("Update with no old tuple, a K tuple or an O tuple", "[pg]") {
  auto plain = Decode<Update>(Wire('U').U32(16384).U8('N').I16(1).Text("new"));
  CHECK(plain.old_kind == 0);
  CHECK(plain.old_tuple.empty());
  REQUIRE(plain.new_tuple.size() == 1);
  CHECK(plain.new_tuple[0].value == "new");

  auto key = Decode<Update>(Wire('U')
                                .U32(16384)
                                .U8('K')
                                .I16(2)
                                .Text("7")
                                .Null()
                                .U8('N')
                                .I16(2)
                                .Text("8")
                                .Text("x"));
  CHECK(key.old_kind == 'K');
  REQUIRE(key.old_tuple.size() == 2);
  CHECK(key.old_tuple[0].value == "7");
  CHECK(key.old_tuple[1].kind == TupleColumn::Kind::kNull);
  CHECK(key.new_tuple[0].value == "8");

  auto full = Decode<Update>(
      Wire('U').U32(16384).U8('O').I16(1).Text("old").U8('N').I16(1).Toast());
  CHECK(full.old_kind == 'O');
  CHECK(full.old_tuple[0].value == "old");
  CHECK(full.new_tuple[0].kind == TupleColumn::Kind::kUnchangedToast);

  CHECK(Error(Wire('U').U32(16384).U8('X').I16(0).data()) ==
        "unrecognized tuple marker 'X' (0x58) at offset 5 in pgoutput Update "
        "message at 0/16B3748");
  CHECK(
      Error(Wire('U').U32(1).U8('K').I16(1).Text("7").U8('Z').I16(0).data()) ==
      "unrecognized tuple marker 'Z' (0x5a) at offset 14 (expected 'N') in "
      "pgoutput Update message at 0/16B3748");
}

TEST_CASE("Delete requires a K or O tuple", "[pg]") {
  auto k = Decode<Delete>(Wire('D').U32(5).U8('K').I16(2).Text("7").Null());
  CHECK(k.relation_oid == 5);
  CHECK(k.old_kind == 'K');
  CHECK(k.old_tuple.size() == 2);
  auto o = Decode<Delete>(Wire('D').U32(5).U8('O').I16(1).Text("7"));
  CHECK(o.old_kind == 'O');
  CHECK(Error(Wire('D').U32(5).U8('N').I16(1).Text("7").data()) ==
        "unrecognized tuple marker 'N' (0x4e) at offset 5 in pgoutput Delete "
        "message at 0/16B3748");
}

TEST_CASE("Truncate carries relation OIDs and option bits", "[pg]") {
  auto t = Decode<Truncate>(Wire('T').I32(2).U8(3).U32(16384).U32(16390));
  CHECK(t.options == 3);
  CHECK(t.cascade());
  CHECK(t.restart_identity());
  CHECK(t.relation_oids == std::vector<Oid>{16384, 16390});
  auto plain = Decode<Truncate>(Wire('T').I32(1).U8(0).U32(1));
  CHECK_FALSE(plain.cascade());
  CHECK_FALSE(plain.restart_identity());
  CHECK(Error(Wire('T').I32(1).U8(4).U32(1).data()) ==
        "unrecognized flags 0x04 in pgoutput Truncate message at 0/16B3748");
  // A count far beyond the bytes present fails without allocating for it.
  CHECK(Error(Wire('T').I32(0x7fffffff).U8(0).U32(1).data()) ==
        "truncated pgoutput Truncate message at 0/16B3748: need 4 bytes at "
        "offset 10 of 10");
  CHECK(Error(Wire('T').I32(-1).U8(0).data()) ==
        "negative relation count -1 in pgoutput Truncate message at "
        "0/16B3748");
}

TEST_CASE("logical decoding messages keep their bytes", "[pg]") {
  std::string content("a\0b\xff", 4);
  auto m = Decode<LogicalMessage>(
      Wire('M').U8(1).U64(0x1634F00).Str("app").I32(4).Raw(content));
  CHECK(m.transactional());
  CHECK(m.lsn == 0x1634F00);
  CHECK(m.prefix == "app");
  CHECK(m.content == content);
  auto nt = Decode<LogicalMessage>(Wire('M').U8(0).U64(1).Str("p").I32(0));
  CHECK_FALSE(nt.transactional());
  CHECK(nt.content.empty());
  CHECK(Error(Wire('M').U8(2).U64(1).Str("p").I32(0).data()) ==
        "unrecognized flags 0x02 in pgoutput Message message at 0/16B3748");
}

TEST_CASE("unknown message types fail with the byte and the position", "[pg]") {
  CHECK(Error("Zabc") ==
        "unrecognized pgoutput message type 'Z' (0x5a) at 0/16B3748");
  CHECK(Error(std::string("\x01", 1)) ==
        "unrecognized pgoutput message type 0x01 at 0/16B3748");
  // Protocol v3 (two-phase) messages are not requested, so not accepted.
  CHECK(Error("b") ==
        "unrecognized pgoutput message type 'b' (0x62) at 0/16B3748");
  CHECK(Error("") == "empty pgoutput message at 0/16B3748");
  auto r = DecodeMessage("Z", 0x16B374D848ull);
  CHECK(r.status().message() ==
        "unrecognized pgoutput message type 'Z' (0x5a) at 16/B374D848");
}

TEST_CASE("tuple data errors name the kind byte and offset", "[pg]") {
  CHECK(Error(Wire('I').U32(1).U8('N').I16(1).U8('x').data()) ==
        "unrecognized tuple data kind 'x' (0x78) at offset 8 in pgoutput "
        "Insert message at 0/16B3748");
  CHECK(Error(Wire('I').U32(1).U8('N').I16(2).Null().U8(0xc3).data()) ==
        "unrecognized tuple data kind 0xc3 at offset 9 in pgoutput Insert "
        "message at 0/16B3748");
  CHECK(Error(Wire('I').U32(1).U8('N').I16(1).U8('t').I32(-2).data()) ==
        "negative value length -2 at offset 9 in pgoutput Insert message at "
        "0/16B3748");
  CHECK(Error(Wire('I').U32(1).U8('N').I16(-1).data()) ==
        "negative column count -1 in pgoutput Insert message at 0/16B3748");
}

TEST_CASE("truncated and over-long messages fail cleanly", "[pg]") {
  Wire insert = Wire('I').U32(16384).U8('N').I16(1).Text("42");
  REQUIRE(insert.data().size() == 15);
  CHECK(Error(insert.data().substr(0, 11)) ==
        "truncated pgoutput Insert message at 0/16B3748: need 4 bytes at "
        "offset 9 of 11");
  CHECK(Error(insert.data().substr(0, 14)) ==
        "truncated pgoutput Insert message at 0/16B3748: need 2 bytes at "
        "offset 13 of 14");
  CHECK(Error(insert.data() + "xyz") ==
        "3 trailing bytes after offset 15 in pgoutput Insert message at "
        "0/16B3748");
  CHECK(Error(Wire('B').U64(1).U64(2).U32(3).U8(0).data()) ==
        "1 trailing byte after offset 21 in pgoutput Begin message at "
        "0/16B3748");
  // Protocol version 2's streaming messages are not asked for, so unknown.
  CHECK(Error("E") ==
        "unrecognized pgoutput message type 'E' (0x45) at 0/16B3748");

  // Every proper prefix of every message fails, and none reads past the end
  // (the prefixes are copied so that a sanitizer sees an overrun).
  const Wire samples[] = {
      Wire('B').U64(1).U64(2).U32(3),
      Wire('C').U8(0).U64(1).U64(2).U64(3),
      Wire('O').U64(1).Str("o"),
      Wire('R')
          .U32(1)
          .Str("s")
          .Str("t")
          .U8('d')
          .I16(1)
          .U8(1)
          .Str("c")
          .U32(23)
          .I32(-1),
      Wire('Y').U32(1).Str("s").Str("t"),
      Wire('U')
          .U32(1)
          .U8('O')
          .I16(2)
          .Text("a")
          .Null()
          .U8('N')
          .I16(2)
          .Toast()
          .Binary("b"),
      Wire('D').U32(1).U8('K').I16(1).Text("a"),
      Wire('T').I32(2).U8(1).U32(1).U32(2),
      Wire('M').U8(1).U64(1).Str("p").I32(2).Raw("xy"),
  };
  for (const Wire& w : samples) {
    REQUIRE(DecodeMessage(w.data(), kWal).ok());
    for (size_t n = 0; n < w.data().size(); ++n) {
      std::string prefix = w.data().substr(0, n);
      auto r = DecodeMessage(prefix, kWal);
      INFO(w.data()[0] << " prefix " << n);
      CHECK(r.status().code() == Code::kBadInput);
    }
  }
}

TEST_CASE("random bytes never crash the decoder", "[pg]") {
  std::mt19937 rng(42);
  const std::string types = "BCORYIUDTMSEcA";
  for (int i = 0; i < 20000; ++i) {
    std::string msg(1, types[rng() % types.size()]);
    size_t len = rng() % 40;
    for (size_t k = 0; k < len; ++k) {
      // Mostly small bytes, so counts and lengths are sometimes plausible.
      msg.push_back(static_cast<char>(rng() % 4 == 0 ? rng() : rng() % 3));
    }
    auto r = DecodeMessage(msg, kWal);
    if (!r.ok()) CHECK(r.status().code() == Code::kBadInput);
  }
}

}  // namespace
}  // namespace cdc::pg
