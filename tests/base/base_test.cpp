#include <catch2/catch.hpp>

#include "cdc/base/coding.h"
#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/base/time.h"

namespace cdc {

TEST_CASE("LSNs print and parse as PostgreSQL does", "[base]") {
  CHECK(FormatLsn(0x16B374D848ull) == "16/B374D848");
  CHECK(FormatLsn(0) == "0/0");
  CHECK(FormatLsn(0x100000000ull) == "1/0");
  CHECK(FormatLsn(0xA) == "0/A");
  CHECK(FormatLsn(~0ull) == "FFFFFFFF/FFFFFFFF");
  CHECK(FormatLsn(0x10000000F0000000ull) == "10000000/F0000000");
  auto l = ParseLsn("16/b374d848");
  REQUIRE(l.ok());
  CHECK(*l == 0x16B374D848ull);
  for (const char* bad : {"", "/", "1/", "/1", "x/1", "123456789/0", "1-2"})
    CHECK(ParseLsn(bad).status().code() == Code::kBadInput);
}

TEST_CASE("timestamps round-trip in RFC 3339 with microseconds", "[base]") {
  CHECK(FormatTimestamp(0) == "1970-01-01T00:00:00.000000Z");
  auto t = ParseTimestamp("2026-11-29T07:41:02.123456Z");
  REQUIRE(t.ok());
  CHECK(FormatTimestamp(*t) == "2026-11-29T07:41:02.123456Z");
  auto off = ParseTimestamp("2026-11-29T13:11:02.5+05:30");
  REQUIRE(off.ok());
  CHECK(FormatTimestamp(*off) == "2026-11-29T07:41:02.500000Z");
  auto date = ParseTimestamp("2026-11-29");
  REQUIRE(date.ok());
  CHECK(FormatTimestamp(*date) == "2026-11-29T00:00:00.000000Z");
  CHECK(FormatTimestamp(*ParseTimestamp("1969-12-31T23:59:59.5Z")) ==
        "1969-12-31T23:59:59.500000Z");
  // Every field at its widest, and years that need the slow path.
  CHECK(FormatTimestamp(253402300799999999) == "9999-12-31T23:59:59.999999Z");
  CHECK(FormatTimestamp(-62135596800000000) == "0001-01-01T00:00:00.000000Z");
  CHECK(FormatTimestamp(253402300800000000) == "10000-01-01T00:00:00.000000Z");
  for (const char* bad : {"", "2026-13-01", "2026-11-29T07:41", "yesterday",
                          "2026-11-29T07:41:02+5", "2026-11-29T25:00:00Z"})
    CHECK_FALSE(ParseTimestamp(bad).ok());
}

TEST_CASE("exit codes follow docs/design.md", "[base]") {
  CHECK(ExitCodeFor(Status::OK()) == 0);
  CHECK(ExitCodeFor(Status::CheckFailed("x")) == 1);
  CHECK(ExitCodeFor(Status::Usage("x")) == 64);
  CHECK(ExitCodeFor(Status::BadInput("x")) == 65);
  CHECK(ExitCodeFor(Status::Corruption("x")) == 65);
  CHECK(ExitCodeFor(Status::NotFound("x")) == 66);
  CHECK(ExitCodeFor(Status::Unavailable("x")) == 69);
  CHECK(ExitCodeFor(Status::Internal("x")) == 70);
  CHECK(ExitCodeFor(Status::CannotCreate("x")) == 73);
  CHECK(ExitCodeFor(Status::IOError("x")) == 74);
  CHECK(ExitCodeFor(Status::Busy("x")) == 75);
  CHECK(ExitCodeFor(Status::Permission("x")) == 77);
  CHECK(ExitCodeFor(Status::Config("x")) == 78);
  CHECK(ExitCodeFor(Status::Expired("x")) == 10);
  CHECK(ExitCodeFor(Status::Gap("x")) == 11);
}

TEST_CASE("fixed-width coding is little-endian", "[base]") {
  char b[8];
  PutFixed64(b, 0x0102030405060708ull);
  CHECK(b[0] == 8);
  CHECK(b[7] == 1);
  CHECK(GetFixed64(b) == 0x0102030405060708ull);
  PutFixed32(b, 0xdeadbeef);
  CHECK(GetFixed32(b) == 0xdeadbeef);
}

}  // namespace cdc
