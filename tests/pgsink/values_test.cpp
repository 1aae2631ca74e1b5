#include "cdc/pgsink/values.h"

#include <catch2/catch.hpp>

#include "cdc/event/fields.h"

namespace cdc::pgsink {

namespace {

constexpr uint32_t kInt4 = 23, kText = 25, kBytea = 17, kJson = 114,
                   kJsonb = 3802, kDate = 1082, kTimestamp = 1114,
                   kTimestamptz = 1184;

// The text input form of the member "v" of `object` for a column of type
// (base, elem); "<NULL>" for SQL NULL, "<error: ...>" for an error.
std::string Convert(uint32_t base, uint32_t elem, const std::string& object,
                    const std::vector<int>& json_nulls = {}) {
  event::Fields f;
  REQUIRE(f.Parse(object).ok());
  const event::Field* v = f.find("v");
  REQUIRE(v != nullptr);
  std::string out;
  auto r = AppendValue(
      ClassifyType(base, elem), JsonValue{v->kind, v->value, v->str},
      [&](int e) {
        return std::find(json_nulls.begin(), json_nulls.end(), e) !=
               json_nulls.end();
      },
      &out);
  if (!r.ok()) return "<error: " + r.status().message() + ">";
  return *r ? out : "<NULL>";
}

}  // namespace

TEST_CASE("pgsink values: scalars back to PostgreSQL's input forms",
          "[pgsink]") {
  CHECK(Convert(kInt4, 0, R"({"v":9223372036854775807})") ==
        "9223372036854775807");
  CHECK(Convert(701, 0, R"({"v":1.5e-300})") == "1.5e-300");
  CHECK(Convert(701, 0, R"({"v":"-Infinity"})") == "-Infinity");
  CHECK(Convert(1700, 0, R"({"v":"12345678901234.56789"})") ==
        "12345678901234.56789");
  CHECK(Convert(16, 0, R"({"v":true})") == "t");
  CHECK(Convert(16, 0, R"({"v":false})") == "f");
  CHECK(Convert(kText, 0, R"({"v":null})") == "<NULL>");
  CHECK(Convert(kText, 0, R"({"v":"h\u00e9 \"q\"\\n"})") == "hé \"q\"\\n");
  CHECK(Convert(kText, 0, R"({"v":"ab   "})") == "ab   ");
}

TEST_CASE("pgsink values: bytea from base64, strictly", "[pgsink]") {
  CHECK(Convert(kBytea, 0, R"({"v":"AP8Q"})") == "\\x00ff10");
  CHECK(Convert(kBytea, 0, R"({"v":"AA=="})") == "\\x00");
  CHECK(Convert(kBytea, 0, R"({"v":"AAE="})") == "\\x0001");
  CHECK(Convert(kBytea, 0, R"({"v":""})") == "\\x");
  CHECK(Convert(kBytea, 0, R"({"v":"AP8"})").rfind("<error:", 0) == 0);
  CHECK(Convert(kBytea, 0, R"({"v":"A=8Q"})").rfind("<error:", 0) == 0);
  CHECK(Convert(kBytea, 0, R"({"v":"AP*Q"})").rfind("<error:", 0) == 0);
}

TEST_CASE("pgsink values: astronomical years back to BC", "[pgsink]") {
  CHECK(Convert(kDate, 0, R"({"v":"2026-11-29"})") == "2026-11-29");
  CHECK(Convert(kDate, 0, R"({"v":"0000-12-31"})") == "0001-12-31 BC");
  CHECK(Convert(kDate, 0, R"({"v":"-4712-11-24"})") == "4713-11-24 BC");
  CHECK(Convert(kDate, 0, R"({"v":"+10000-01-01"})") == "10000-01-01");
  CHECK(Convert(kDate, 0, R"({"v":"infinity"})") == "infinity");
  CHECK(Convert(kTimestamp, 0, R"({"v":"0000-12-31T23:59:59.5"})") ==
        "0001-12-31T23:59:59.5 BC");
  CHECK(Convert(kTimestamptz, 0, R"({"v":"2026-11-29T07:41:02.500000Z"})") ==
        "2026-11-29T07:41:02.500000Z");
  CHECK(Convert(kTimestamptz, 0, R"({"v":"-infinity"})") == "-infinity");
  CHECK(Convert(kDate, 0, R"({"v":"29.11.2026"})").rfind("<error:", 0) == 0);
  CHECK(Convert(kDate, 0, R"({"v":"-"})").rfind("<error:", 0) == 0);
}

TEST_CASE("pgsink values: json keeps its text; JSON null apart from NULL",
          "[pgsink]") {
  CHECK(Convert(kJsonb, 0, R"({"v":{"a":[1,2.50]}})") == R"({"a":[1,2.50]})");
  CHECK(Convert(kJson, 0, R"({"v":"s"})") == R"("s")");
  CHECK(Convert(kJson, 0, R"({"v":7})") == "7");
  CHECK(Convert(kJson, 0, R"({"v":null})") == "<NULL>");
  CHECK(Convert(kJson, 0, R"({"v":null})", {-1}) == "null");
}

TEST_CASE("pgsink values: arrays as array literals, element by element",
          "[pgsink]") {
  CHECK(Convert(1007, kInt4, R"({"v":[1,null,3]})") == R"({"1",NULL,"3"})");
  CHECK(
      Convert(1009, kText, R"({"v":["a b","c,d",null,"NULL","q\"x","\\"]})") ==
      R"({"a b","c,d",NULL,"NULL","q\"x","\\"})");
  CHECK(Convert(1009, kText, R"({"v":[]})") == "{}");
  CHECK(Convert(1182, kDate, R"({"v":["-0043-03-15","infinity"]})") ==
        R"({"0044-03-15 BC","infinity"})");
  CHECK(Convert(1001, kBytea, R"({"v":["AP8Q",null]})") ==
        R"({"\\x00ff10",NULL})");
  CHECK(Convert(3807, kJsonb, R"({"v":[null,{"a":"]"},null]})", {2}) ==
        R"({NULL,"{\"a\":\"]\"}","null"})");
  // Several dimensions come as PostgreSQL's text form, passed on as is.
  CHECK(Convert(1007, kInt4, R"({"v":"{{1,2},{3,4}}"})") == "{{1,2},{3,4}}");
  CHECK(Convert(1007, kInt4, R"({"v":null})") == "<NULL>");
}

TEST_CASE("pgsink values: SplitJsonArray keeps nested text whole", "[pgsink]") {
  std::vector<std::string_view> e;
  SplitJsonArray(R"(["a,b",[1,[2]],{"k":"}"},null,-1.5e3])", &e);
  REQUIRE(e.size() == 5);
  CHECK(e[0] == R"("a,b")");
  CHECK(e[1] == "[1,[2]]");
  CHECK(e[2] == R"({"k":"}"})");
  CHECK(e[3] == "null");
  CHECK(e[4] == "-1.5e3");
  SplitJsonArray("[]", &e);
  CHECK(e.empty());
}

}  // namespace cdc::pgsink
