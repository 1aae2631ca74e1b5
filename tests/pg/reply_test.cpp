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

namespace cdc::pg {

TEST_CASE("a password is found in every form libpq reads", "[pg][dsn]") {
  for (const char* with :
       {"host=h dbname=d password=secret", "password='se cret' host=h",
        "password=", "postgresql://u:secret@host/db",
        "postgres://u:secret@host:5432/db",
        "postgresql://u@host/db?password=secret",
        "postgresql://host/db?sslmode=require&password=secret",
        "postgresql://host/db?pass%77ord=secret",
        "postgresql://u:s%65cret@host/db",
        "dbname='postgresql://u:secret@host/db'",
        "dbname='host=h password=secret'"}) {
    auto r = ConninfoHasPassword(with);
    INFO(with);
    REQUIRE(r.ok());
    CHECK(*r);
  }
  for (const char* without :
       {"host=/run/postgresql dbname=app user=cdc", "app",
        "passfile=/etc/cdc/pgpass host=h", "postgresql://u@host/db",
        "postgresql://host/db?passfile=/x&sslmode=require",
        "postgresql:///db?host=/run/postgresql", "dbname=password"}) {
    auto r = ConninfoHasPassword(without);
    INFO(without);
    REQUIRE(r.ok());
    CHECK_FALSE(*r);
  }
}

TEST_CASE("an unparseable conninfo that may hold a password is not echoed",
          "[pg][dsn]") {
  for (const char* odd : {"postgresql://u:secret@host:notaport/db?x",
                          "host=h password=secret 'unterminated",
                          "postgresql://u:secret@[::1/db"}) {
    auto r = ConninfoHasPassword(odd);
    INFO(odd);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kConfig);
    CHECK_THAT(r.status().message(), !Catch::Contains("secret"));
  }
  auto plain = ConninfoHasPassword("host=h 'unterminated");
  REQUIRE_FALSE(plain.ok());
  CHECK_THAT(plain.status().message(), Catch::StartsWith("invalid --dsn: "));
}

}  // namespace cdc::pg
