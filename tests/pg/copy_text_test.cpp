#include "cdc/pg/copy_text.h"

#include <catch2/catch.hpp>

namespace cdc::pg {
namespace {

using K = TupleColumn::Kind;

TEST_CASE("COPY text rows: columns, NULL and escapes", "[pg]") {
  TupleData row;
  REQUIRE(ParseCopyTextRow("7\t\\N\ta\\tb\\nc\\\\d\t\n", 4, &row).ok());
  REQUIRE(row.size() == 4);
  CHECK(row[0].kind == K::kText);
  CHECK(row[0].value == "7");
  CHECK(row[1].kind == K::kNull);
  CHECK(row[2].value == "a\tb\nc\\d");
  CHECK(row[3].kind == K::kText);  // an empty string is not NULL
  CHECK(row[3].value.empty());
  // A text "\N" is escaped as \\N, so it is not NULL.
  REQUIRE(ParseCopyTextRow("\\\\N\n", 1, &row).ok());
  CHECK(row[0].kind == K::kText);
  CHECK(row[0].value == "\\N");
  // Every escape COPY FROM reads, so any server's output is understood.
  REQUIRE(ParseCopyTextRow("\\b\\f\\r\\v\\101\\x41\\xg\\q", 1, &row).ok());
  CHECK(row[0].value == "\b\f\r\vAAxgq");
  // Buffers are reused: a shorter row leaves no old bytes behind.
  REQUIRE(ParseCopyTextRow("x\ty\n", 2, &row).ok());
  CHECK(row[0].value == "x");
  CHECK(row[1].value == "y");
}

TEST_CASE("COPY text rows of the wrong shape are refused", "[pg]") {
  TupleData row;
  CHECK(ParseCopyTextRow("1\t2\t3\n", 2, &row).message() ==
        "COPY row has 3 columns, expected 2");
  CHECK(ParseCopyTextRow("1\n", 2, &row).message() ==
        "COPY row has 1 columns, expected 2");
  CHECK(ParseCopyTextRow("ab\\", 1, &row).message() ==
        "COPY row ends inside a backslash escape");
  CHECK(ParseCopyTextRow("\n", 0, &row).ok());
}

}  // namespace
}  // namespace cdc::pg
