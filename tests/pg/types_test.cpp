#include "cdc/pg/types.h"

#include <catch2/catch.hpp>

#include "cdc/event/json_text.h"

namespace cdc::pg {

using namespace cdc::event;  // NOLINT: the JSON text helpers
namespace {

namespace t = type_oid;

std::string Render(Oid oid, std::string_view text,
                   const TypeCatalog* catalog = nullptr) {
  std::string out = "<";
  Status s = AppendTextValue(oid, text, catalog, &out);
  INFO(text << ": " << s.ToString());
  REQUIRE(s.ok());
  return out.substr(1);
}

std::string Fail(Oid oid, std::string_view text) {
  std::string out = "<";
  Status s = AppendTextValue(oid, text, nullptr, &out);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == Code::kBadInput);
  CHECK(out == "<");  // left as it was
  return s.message();
}

TEST_CASE("integers are JSON numbers", "[pg]") {
  CHECK(Render(t::kInt2, "-32768") == "-32768");
  CHECK(Render(t::kInt4, "42") == "42");
  CHECK(Render(t::kInt4, "0") == "0");
  CHECK(Render(t::kInt8, "9223372036854775807") == "9223372036854775807");
  CHECK(Render(t::kOid, "4294967295") == "4294967295");
  CHECK(Fail(t::kInt4, "abc") == "invalid int4 value \"abc\"");
  CHECK(Fail(t::kInt8, "1.5") == "invalid int8 value \"1.5\"");
  CHECK(Fail(t::kInt2, "") == "invalid int2 value \"\"");
  CHECK(Fail(t::kInt4, "042") == "invalid int4 value \"042\"");
  CHECK(Fail(t::kOid, "-1") == "invalid oid value \"-1\"");
}

TEST_CASE("floats are numbers except NaN and the infinities", "[pg]") {
  CHECK(Render(t::kFloat8, "1.5") == "1.5");
  CHECK(Render(t::kFloat8, "-0") == "-0");
  CHECK(Render(t::kFloat8, "1e+100") == "1e+100");
  CHECK(Render(t::kFloat8, "1.2345e-05") == "1.2345e-05");
  CHECK(Render(t::kFloat4, "3.4028235e+38") == "3.4028235e+38");
  CHECK(Render(t::kFloat8, "NaN") == "\"NaN\"");
  CHECK(Render(t::kFloat8, "Infinity") == "\"Infinity\"");
  CHECK(Render(t::kFloat4, "-Infinity") == "\"-Infinity\"");
  CHECK(Fail(t::kFloat8, "nan") == "invalid float8 value \"nan\"");
  CHECK(Fail(t::kFloat4, ".5") == "invalid float4 value \".5\"");
}

TEST_CASE("numeric is an exact string, NaN and Infinity included", "[pg]") {
  CHECK(Render(t::kNumeric, "12.50") == "\"12.50\"");
  CHECK(Render(t::kNumeric, "-0.000000000000000000000000000001") ==
        "\"-0.000000000000000000000000000001\"");
  CHECK(Render(t::kNumeric, "NaN") == "\"NaN\"");
  CHECK(Render(t::kNumeric, "Infinity") == "\"Infinity\"");
  CHECK(Render(t::kNumeric, "-Infinity") == "\"-Infinity\"");
}

TEST_CASE("bool is true or false", "[pg]") {
  CHECK(Render(t::kBool, "t") == "true");
  CHECK(Render(t::kBool, "f") == "false");
  CHECK(Fail(t::kBool, "true") == "invalid bool value \"true\"");
}

TEST_CASE("json and jsonb are embedded compactly and exactly", "[pg]") {
  CHECK(Render(t::kJsonb, R"({"a": 1, "b": [1, 2.50, "x y"], "c": null})") ==
        R"({"a":1,"b":[1,2.50,"x y"],"c":null})");
  // json keeps key order, duplicate keys, whitespace inside strings,
  // escapes as written, and numbers no double can hold.
  CHECK(Render(t::kJson,
               "{ \"z\" : 1 ,\n \"a\" : 2, \"z\": 3, \"s\": \"tab\\t \\u00e9\","
               " \"n\": 123456789012345678901234567890.000000000000000000001,"
               " \"e\": 1E+400 }") ==
        "{\"z\":1,\"a\":2,\"z\":3,\"s\":\"tab\\t \\u00e9\","
        "\"n\":123456789012345678901234567890.000000000000000000001,"
        "\"e\":1E+400}");
  CHECK(Render(t::kJsonb, "[]") == "[]");
  CHECK(Render(t::kJsonb, "{}") == "{}");
  CHECK(Render(t::kJsonb, "[[], {}, [{\"a\": []}]]") == "[[],{},[{\"a\":[]}]]");
  CHECK(Render(t::kJsonb, "\"é\"") == "\"é\"");
  CHECK(Render(t::kJsonb, "-0.5e-3") == "-0.5e-3");
  CHECK(Render(t::kJson, "true") == "true");
  CHECK(Render(t::kJson, "\"\\ud83d\\ude00\"") == "\"\\ud83d\\ude00\"");
  // PostgreSQL's json accepts an unpaired surrogate escape; strict JSON
  // does not, so the value is kept as a string of its text.
  CHECK(Render(t::kJson, "\"\\ud800\"") == "\"\\\"\\\\ud800\\\"\"");
}

TEST_CASE("the JSON compactor rejects what is not strict JSON", "[pg]") {
  for (const char* bad :
       {"",        " ",         "{",          "[1,]",       "[1 2]",
        "{\"a\"}", "{a:1}",     "{\"a\":1,}", "01",         "1.",
        ".1",      "+1",        "tru",        "nul",        "\"a",
        "\"\\x\"", "\"\\u12\"", "\"a\tb\"",   "[1]]",       "{}}",
        "1 2",     "{\"a\" 1}", "NaN",        "\"\\udc00\""}) {
    std::string out = "keep";
    INFO(bad);
    CHECK_FALSE(AppendCompactJson(bad, &out));
    CHECK(out == "keep");
  }
  std::string out;
  CHECK_FALSE(AppendCompactJson("\"\xc3\x28\"", &out));
  CHECK(AppendCompactJson(" [ 1 , \"a b\" , { \"k\" : false } ] ", &out));
  CHECK(out == "[1,\"a b\",{\"k\":false}]");
  std::string deep(10000, '[');
  deep += std::string(10000, ']');
  out.clear();
  CHECK(AppendCompactJson(deep, &out));
  CHECK(out == deep);
}

TEST_CASE("bytea becomes base64", "[pg]") {
  CHECK(Render(t::kBytea, "\\x0a0b") == "\"Cgs=\"");
  CHECK(Render(t::kBytea, "\\x") == "\"\"");
  CHECK(Render(t::kBytea, "\\xDEADbeef") == "\"3q2+7w==\"");
  // The escape output format (bytea_output = escape) as well.
  CHECK(Render(t::kBytea, "abc\\000\\\\") == "\"YWJjAFw=\"");
  CHECK(Fail(t::kBytea, "\\x0") == "invalid bytea value \"\\x0\"");
  CHECK(Fail(t::kBytea, "\\xzz") == "invalid bytea value \"\\xzz\"");
  CHECK(Fail(t::kBytea, "a\\9") == "invalid bytea value \"a\\9\"");
}

TEST_CASE("base64 and UTF-8 helpers", "[pg]") {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}};
  for (auto [in, want] : vectors) {
    std::string out;
    AppendBase64(in, &out);
    CHECK(out == want);
  }
  std::string bin;
  AppendBinaryValue(std::string("\x00\xff", 2), &bin);
  CHECK(bin == "\"AP8=\"");

  CHECK(IsValidUtf8("plain"));
  CHECK(IsValidUtf8("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(IsValidUtf8("\xc0\x80"));          // overlong NUL
  CHECK_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xc3"));              // cut short
  CHECK_FALSE(IsValidUtf8("\xff"));
}

TEST_CASE("text-like types are escaped JSON strings of their text", "[pg]") {
  CHECK(Render(t::kText, "a\"b\\c\nd\x01\x1f\xc3\xa9/") ==
        "\"a\\\"b\\\\c\\nd\\u0001\\u001f\xc3\xa9/\"");
  CHECK(Render(t::kText, "") == "\"\"");
  CHECK(Render(t::kBpchar, "ab   ") == "\"ab   \"");  // padding kept
  CHECK(Render(t::kVarchar, "tab\there") == "\"tab\\there\"");
  CHECK(Render(t::kUuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11") ==
        "\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"");
  CHECK(Render(t::kInet, "192.168.0.1/24") == "\"192.168.0.1/24\"");
  CHECK(Render(t::kInterval, "1 year 2 mons 3 days 04:05:06.5") ==
        "\"1 year 2 mons 3 days 04:05:06.5\"");
  CHECK(Render(t::kTime, "07:41:02.123456") == "\"07:41:02.123456\"");
  CHECK(Render(t::kTimetz, "07:41:02+05:30") == "\"07:41:02+05:30\"");
  CHECK(Render(t::kMoney, "$1,234.50") == "\"$1,234.50\"");
  CHECK(Render(99999, "happy") == "\"happy\"");  // e.g. an enum
  std::string out = "<";
  Status s = AppendTextValue(t::kText, "bad \xff", nullptr, &out);
  CHECK(s.message() == "invalid UTF-8 in a value of type OID 25");
  CHECK(out == "<");
}

TEST_CASE("dates are ISO 8601", "[pg]") {
  CHECK(Render(t::kDate, "2026-11-29") == "\"2026-11-29\"");
  CHECK(Render(t::kDate, "infinity") == "\"infinity\"");
  CHECK(Render(t::kDate, "-infinity") == "\"-infinity\"");
  CHECK(Render(t::kDate, "0044-03-15 BC") == "\"-0043-03-15\"");
  CHECK(Render(t::kDate, "0001-01-01 BC") == "\"0000-01-01\"");
  CHECK(Render(t::kDate, "10000-01-01") == "\"+10000-01-01\"");
  // Astronomical years, as cdc-capture(1) says: 1 BC is 0000.
  CHECK(Render(t::kDate, "0001-12-31 BC") == "\"0000-12-31\"");
  CHECK(Render(t::kDate, "4713-11-24 BC") == "\"-4712-11-24\"");
  CHECK(Render(t::kDate, "0001-01-01") == "\"0001-01-01\"");
  CHECK(Fail(t::kDate, "11/29/2026") == "invalid date value \"11/29/2026\"");
  CHECK(Fail(t::kDate, "2026-13-01") == "invalid date value \"2026-13-01\"");
}

TEST_CASE("timestamps are ISO 8601 with a T", "[pg]") {
  CHECK(Render(t::kTimestamp, "2026-11-29 07:41:02.123456") ==
        "\"2026-11-29T07:41:02.123456\"");
  CHECK(Render(t::kTimestamp, "2026-11-29 07:41:02") ==
        "\"2026-11-29T07:41:02\"");
  CHECK(Render(t::kTimestamp, "2026-11-29 07:41:02.5") ==
        "\"2026-11-29T07:41:02.5\"");
  CHECK(Render(t::kTimestamp, "0100-02-03 04:05:06 BC") ==
        "\"-0099-02-03T04:05:06\"");
  CHECK(Render(t::kTimestamp, "infinity") == "\"infinity\"");
  CHECK(Render(t::kTimestamp, "-infinity") == "\"-infinity\"");
  CHECK(Fail(t::kTimestamp, "2026-11-29 07:41:02+00") ==
        "invalid timestamp value \"2026-11-29 07:41:02+00\"");
  CHECK(Fail(t::kTimestamp, "2026-11-29T07:41:02") ==
        "invalid timestamp value \"2026-11-29T07:41:02\"");
}

TEST_CASE("timestamptz is normalised to UTC with microseconds", "[pg]") {
  CHECK(Render(t::kTimestamptz, "2026-11-29 07:41:02.123456+00") ==
        "\"2026-11-29T07:41:02.123456Z\"");
  CHECK(Render(t::kTimestamptz, "2026-11-29 13:11:02.5+05:30") ==
        "\"2026-11-29T07:41:02.500000Z\"");
  CHECK(Render(t::kTimestamptz, "2026-01-01 00:30:00+05:30") ==
        "\"2025-12-31T19:00:00.000000Z\"");
  CHECK(Render(t::kTimestamptz, "2026-12-31 23:00:00-02") ==
        "\"2027-01-01T01:00:00.000000Z\"");
  CHECK(Render(t::kTimestamptz, "2024-02-28 23:00:00-02") ==
        "\"2024-02-29T01:00:00.000000Z\"");
  // Historical zones have offsets with seconds (local mean time).
  CHECK(Render(t::kTimestamptz, "1850-01-01 00:00:00+00:53:28") ==
        "\"1849-12-31T23:06:32.000000Z\"");
  CHECK(Render(t::kTimestamptz, "0001-01-01 00:30:00+01 BC") ==
        "\"-0001-12-31T23:30:00.000000Z\"");
  CHECK(Render(t::kTimestamptz, "infinity") == "\"infinity\"");
  CHECK(Render(t::kTimestamptz, "-infinity") == "\"-infinity\"");
  CHECK(Fail(t::kTimestamptz, "2026-11-29 07:41:02") ==
        "invalid timestamptz value \"2026-11-29 07:41:02\"");
  CHECK(Fail(t::kTimestamptz, "2026-11-29 07:41:02 UTC") ==
        "invalid timestamptz value \"2026-11-29 07:41:02 UTC\"");
  CHECK(Fail(t::kTimestamptz, "2026-11-29 07:41:02.1234567+00") ==
        "invalid timestamptz value \"2026-11-29 07:41:02.1234567+00\"");
}

TEST_CASE("one-dimensional arrays become JSON arrays", "[pg]") {
  CHECK(Render(1007, "{1,2,NULL,4}") == "[1,2,null,4]");
  CHECK(Render(1005, "{-1}") == "[-1]");
  CHECK(Render(1016, "{}") == "[]");
  CHECK(Render(1009, R"({a,"b c",NULL,"NULL","x\"y","back\\slash",""})") ==
        R"(["a","b c",null,"NULL","x\"y","back\\slash",""])");
  CHECK(Render(1015, "{\"{braces}\",\"a,b\",null,\"null\",\\NULL}") ==
        "[\"{braces}\",\"a,b\",null,\"null\",\"NULL\"]");
  CHECK(Render(1022, "{1.5,NaN,-Infinity}") == "[1.5,\"NaN\",\"-Infinity\"]");
  CHECK(Render(1231, "{1.10,NaN}") == "[\"1.10\",\"NaN\"]");
  CHECK(Render(1000, "{t,f,NULL}") == "[true,false,null]");
  CHECK(Render(2951, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}") ==
        "[\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"]");
  CHECK(Render(3807, R"({"{\"a\": 1}",NULL,"[1, 2]"})") ==
        R"([{"a":1},null,[1,2]])");
  CHECK(
      Render(
          1185,
          R"({"2026-11-29 07:41:02.123456+00","2026-11-29 13:11:02+05:30"})") ==
      R"(["2026-11-29T07:41:02.123456Z","2026-11-29T07:41:02.000000Z"])");
  CHECK(Render(1182, "{2026-11-29,infinity}") ==
        "[\"2026-11-29\",\"infinity\"]");
  CHECK(Render(1001, R"({"\\x0a0b",NULL})") == "[\"Cgs=\",null]");
  // Multi-dimensional arrays and explicit bounds keep their text form.
  CHECK(Render(1007, "{{1,2},{3,4}}") == "\"{{1,2},{3,4}}\"");
  CHECK(Render(1007, "[0:1]={1,2}") == "\"[0:1]={1,2}\"");
  CHECK(Fail(1007, "{1,2") == "invalid array value \"{1,2\"");
  CHECK(Fail(1007, "{1,,2}") == "invalid array value \"{1,,2}\"");
  CHECK(Fail(1009, "{\"a}") == "invalid array value \"{\"a}\"");
  CHECK(Fail(1007, "{1,x}") == "invalid int4 value \"x\"");
}

TEST_CASE("domains and catalog arrays render by their base type", "[pg]") {
  TypeCatalog catalog;
  catalog.domain_base[50000] = t::kInt4;  // positive_int
  catalog.domain_base[50001] = 50000;     // domain over a domain
  catalog.domain_base[50002] = 1022;      // domain over float8[]
  catalog.domain_base[50003] = 50003;     // a cycle must not hang
  catalog.array_element[60000] = 70000;   // mood[] of an enum
  catalog.array_element[60001] = 50000;   // positive_int[]
  CHECK(Render(50000, "5", &catalog) == "5");
  CHECK(Render(50001, "6", &catalog) == "6");
  CHECK(Render(50002, "{1.5,NaN}", &catalog) == "[1.5,\"NaN\"]");
  CHECK(Render(50003, "x", &catalog) == "\"x\"");
  CHECK(Render(60000, "{happy,\"very sad\"}", &catalog) ==
        "[\"happy\",\"very sad\"]");
  CHECK(Render(60001, "{1,NULL}", &catalog) == "[1,null]");
  CHECK(Render(60000, "{happy}") == "\"{happy}\"");  // no catalog: text
  std::string out;
  CHECK(AppendTextValue(50000, "x", &catalog, &out).message() ==
        "invalid int4 value \"x\"");
}

// Renders with JsonNulls; "<...>" marks what was appended.
std::string RenderNulls(Oid oid, std::string_view text, JsonNulls* nulls,
                        const TypeCatalog* catalog = nullptr) {
  std::string out = "<";
  Status s = AppendTextValue(oid, text, catalog, &out, nulls);
  INFO(text << ": " << s.ToString());
  REQUIRE(s.ok());
  return out.substr(1);
}

TEST_CASE("a json/jsonb JSON null is told apart from SQL NULL", "[pg]") {
  JsonNulls n;
  CHECK(RenderNulls(t::kJsonb, "null", &n) == "null");
  CHECK((n.whole && n.elements.empty()));
  CHECK(RenderNulls(t::kJson, " null ", &n) == "null");
  CHECK(n.whole);
  // Not the literal null itself: nothing to tell apart.
  for (std::string_view v : {"\"null\"", "[null]", "{\"a\": null}", "0"}) {
    RenderNulls(t::kJsonb, v, &n);
    CHECK_FALSE(n.any());
  }
  // Arrays (array_out quotes an element that reads as NULL): indexes of
  // the elements that are JSON null, not of SQL NULLs.
  CHECK(RenderNulls(3807, R"({NULL,"null","\"null\"","null"})", &n) ==
        "[null,null,\"null\",null]");
  CHECK_FALSE(n.whole);
  CHECK(n.elements == std::vector<uint32_t>{1, 3});
  CHECK(RenderNulls(199, R"({"null"})", &n) == "[null]");
  CHECK(n.elements == std::vector<uint32_t>{0});
  RenderNulls(199, "{null}", &n);  // unquoted: SQL NULL
  CHECK_FALSE(n.any());
  // Through domains too; and a value of another type never is one.
  TypeCatalog catalog;
  catalog.domain_base[50000] = t::kJsonb;
  catalog.array_element[60000] = 50000;
  RenderNulls(50000, "null", &n, &catalog);
  CHECK(n.whole);
  RenderNulls(60000, R"({"null",1})", &n, &catalog);
  CHECK(n.elements == std::vector<uint32_t>{0});
  RenderNulls(t::kText, "null", &n);
  CHECK_FALSE(n.any());
  // A failed value reports nothing.
  std::string out;
  CHECK_FALSE(AppendTextValue(3807, "{null,\"x", nullptr, &out, &n).ok());
  CHECK_FALSE(n.any());
}

TEST_CASE("a large bytea is converted piece by piece", "[pg]") {
  std::string bytes, hex = "\\x";
  for (int i = 0; i < 100000; ++i) {
    bytes.push_back(static_cast<char>(i * 7));
    static constexpr char kHex[] = "0123456789abcdef";
    hex.push_back(kHex[(i * 7 >> 4) & 15]);
    hex.push_back(kHex[i * 7 & 15]);
  }
  std::string want;
  AppendBinaryValue(bytes, &want);
  CHECK(Render(t::kBytea, hex) == want);
  // A bad digit past the first piece leaves nothing behind.
  std::string bad = hex;
  bad[bad.size() - 3] = 'g';
  CHECK(Fail(t::kBytea, bad).rfind("invalid bytea value", 0) == 0);
  CHECK(Fail(t::kBytea, "\\x0") == "invalid bytea value \"\\x0\"");
}

TEST_CASE("built-in types are found by their catalog name", "[pg]") {
  CHECK(BuiltinTypeOid("int4") == t::kInt4);
  CHECK(BuiltinTypeOid("_int4") == 1007);
  CHECK(BuiltinTypeOid("jsonb") == t::kJsonb);
  CHECK(BuiltinTypeOid("_timestamptz") == 1185);
  CHECK(BuiltinTypeOid("hstore") == 0);
  CHECK(BuiltinTypeOid("_") == 0);
  CHECK(BuiltinTypeOid("") == 0);
}

}  // namespace
}  // namespace cdc::pg
