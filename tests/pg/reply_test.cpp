#include <catch2/catch.hpp>

#include "cdc/pg/conn.h"

namespace cdc::pg {

TEST_CASE("odd values in PostgreSQL's replies are errors, not aborts",
          "[pg][reply]") {
  CHECK(*ParseReplyUint32("0", "x") == 0);
  CHECK(*ParseReplyUint32("16384", "x") == 16384);
  CHECK(*ParseReplyUint32("4294967295", "x") == 4294967295u);
  for (const char* odd : {"", "abc", "-1", "+1", " 1", "1 ", "0x10",
                          "4294967296", "99999999999999999999", "1.5"}) {
    auto r = ParseReplyUint32(odd, "pg_type.oid");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kBadInput);
    CHECK(r.status().message() ==
          std::string("unexpected reply from PostgreSQL: pg_type.oid is \"") +
              odd + "\"");
  }
  auto ctl = ParseReplyUint32(std::string("1\n2", 3), "timeline");
  REQUIRE_FALSE(ctl.ok());
  CHECK(ctl.status().message() ==
        "unexpected reply from PostgreSQL: timeline is \"1?2\"");
  auto longer = ParseReplyUint32(std::string(100, '7'), "typelem");
  REQUIRE_FALSE(longer.ok());
  CHECK(longer.status().message() ==
        "unexpected reply from PostgreSQL: typelem is \"" +
            std::string(64, '7') + "\"...");

  CHECK(*ParseReplyLsn("0/1634F28", "x") == 0x1634F28);
  CHECK(*ParseReplyLsn("1/0", "x") == (1ull << 32));
  for (const char* odd :
       {"", "0", "/", "0/", "/1", "0/G", "123456789/0", "0/1 ", "t"}) {
    auto r = ParseReplyLsn(odd, "confirmed_flush_lsn");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kBadInput);
    CHECK(r.status().message() ==
          std::string(
              "unexpected reply from PostgreSQL: confirmed_flush_lsn is \"") +
              odd + "\"");
  }
}

TEST_CASE("a result read outside its rows and columns is NULL, not a crash",
          "[pg][reply]") {
  PgResult none;
  CHECK(none.rows() == 0);
  CHECK(none.cols() == 0);
  CHECK(none.get(0, 3).empty());
  CHECK(none.is_null(0, 3));
  CHECK(none.get(-1, -1).empty());
}

}  // namespace cdc::pg
