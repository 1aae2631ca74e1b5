#include "cdc/pg/replication.h"

#include <catch2/catch.hpp>

#include "pg/wire.h"

namespace cdc::pg {
namespace {

using test::Wire;

// 2026-11-29T07:41:02.123456Z, in µs since 2000-01-01 and since 1970.
constexpr int64_t kPgTime = 849339662123456;
constexpr int64_t kUnixTime = kPgTime + 946684800000000;

TEST_CASE("XLogData: positions, server clock and the pgoutput payload",
          "[pg]") {
  Wire w('w');
  w.U64(0x16B3748).U64(0x16B4000).U64(kPgTime).Raw("B...");
  auto x = ParseXLogData(w.data());
  REQUIRE(x.ok());
  CHECK(x->start == 0x16B3748);
  CHECK(x->wal_end == 0x16B4000);
  CHECK(x->send_time == kUnixTime);
  CHECK(x->payload == "B...");
  CHECK(ParseXLogData(w.data().substr(0, 24)).status().message() ==
        "short XLogData message (24 bytes)");
  CHECK(ParseXLogData(Wire('k').U64(1).U64(2).U64(3).data()).status().code() ==
        Code::kBadInput);
}

TEST_CASE("keepalive: WAL end, clock and reply request", "[pg]") {
  auto k = ParseKeepalive(Wire('k').U64(0x2000).U64(kPgTime).U8(1).data());
  REQUIRE(k.ok());
  CHECK(k->wal_end == 0x2000);
  CHECK(k->send_time == kUnixTime);
  CHECK(k->reply_requested);
  CHECK_FALSE(
      ParseKeepalive(Wire('k').U64(1).U64(0).U8(0).data())->reply_requested);
  CHECK(ParseKeepalive(Wire('k').U64(1).U64(0).data()).status().message() ==
        "short keepalive message (17 bytes)");
}

TEST_CASE("standby status update: 34 bytes, clock since 2000", "[pg]") {
  const std::string m =
      EncodeStandbyStatus(StandbyStatus{0x10, 0x20, 0x30, kUnixTime, true});
  Wire want('r');
  want.U64(0x10).U64(0x20).U64(0x30).U64(kPgTime).U8(1);
  CHECK(m == want.data());
  CHECK(m.size() == kStandbyStatusBytes);
}

}  // namespace
}  // namespace cdc::pg
