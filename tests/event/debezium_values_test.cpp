// --format debezium: Debezium's value conventions per PostgreSQL type
// (lib/cdc/event/debezium_values.h), checked against what Debezium's
// PostgreSQL connector (2.7, and HEAD where it differs) makes of each
// stored value, in each --decimal-handling, --time-precision and
// --binary-handling mode.
#include <catch2/catch.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "cdc/event/renderer.h"

namespace cdc::event {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kTs = "2019-05-28T08:58:24.863123Z";

// Debezium's value conventions per PostgreSQL type, once a schema event
// (op s) told the column types: each type in each mode.
constexpr const char* kTypesSchema =
    R"(,"key":null,"before":null,"after":null,"columns":[)"
    R"({"name":"id","type_oid":23,"key":true},)"
    R"({"name":"amount","type_oid":1700,"type_mod":655366,"key":false},)"
    R"({"name":"ratio","type_oid":1700,"key":false},)"
    R"({"name":"day","type_oid":1082,"key":false},)"
    R"({"name":"at","type_oid":1083,"key":false},)"
    R"({"name":"at3","type_oid":1083,"type_mod":3,"key":false},)"
    R"({"name":"attz","type_oid":1266,"key":false},)"
    R"({"name":"ts","type_oid":1114,"key":false},)"
    R"({"name":"ts3","type_oid":1114,"type_mod":3,"key":false},)"
    R"({"name":"tstz","type_oid":1184,"key":false},)"
    R"({"name":"tstz3","type_oid":1184,"type_mod":3,"key":false},)"
    R"({"name":"tstz0","type_oid":1184,"type_mod":0,"key":false},)"
    R"({"name":"raw","type_oid":17,"key":false},)"
    R"({"name":"doc","type_oid":3802,"key":false},)"
    R"({"name":"cash","type_oid":790,"key":false},)"
    R"({"name":"flag","type_oid":1560,"type_mod":1,"key":false},)"
    R"({"name":"vflag","type_oid":1562,"type_mod":1,"key":false},)"
    R"({"name":"bits","type_oid":1560,"type_mod":10,"key":false},)"
    R"({"name":"vbits","type_oid":1562,"key":false},)"
    R"({"name":"span","type_oid":1186,"key":false},)"
    R"({"name":"f4","type_oid":700,"key":false},)"
    R"({"name":"f8","type_oid":701,"key":false},)"
    R"({"name":"note","type_oid":25,"key":false}]})";

constexpr const char* kTypesRow =
    R"({"id":1,"amount":"-12.50","ratio":"12.5","day":"2026-11-29",)"
    R"("at":"07:41:02.123456","at3":"07:41:02.123","attz":"07:41:02.5+01",)"
    R"("ts":"2026-11-29T07:41:02.123456","ts3":"2026-11-29T07:41:02.123",)"
    R"("tstz":"2026-11-29T07:41:02.123400Z",)"
    R"("tstz3":"2026-11-29T07:41:02.120000Z",)"
    R"("tstz0":"2026-11-29T07:41:02.000000Z","raw":"AQL/","doc":{"a":[1]},)"
    R"("cash":"$1,234.11","flag":"1","vflag":"0","bits":"0000000101",)"
    R"("vbits":"1000000001","span":"1 year 2 mons 3 days 04:05:06.78",)"
    R"("f4":1.5,"f8":-2.25,"note":"12.50"})";

// The line for an insert (or, with `op` r, a snapshot read) of `row` into
// the table of kTypesSchema.
std::string RenderTypesLine(const RenderOptions& base, const std::string& row,
                            const std::string& extra = "", char op = 'c') {
  RenderOptions o = base;
  o.format = Format::kDebezium;
  o.clock = [] { return int64_t{0}; };
  auto r = MakeRenderer(o, SourceInfo{});
  r->Restart(true);
  auto ev = [](char op, const std::string& rest) {
    return std::string(R"({"lsn":"0/100","xid":7,"ts":")") + kTs +
           R"(","op":")" + op + R"(","schema":"public","table":"t")" + rest;
  };
  // The schema event is hidden from the output (fed through Skip).
  REQUIRE(r->Skip(1, ev('s', kTypesSchema), false).ok());
  std::string out;
  REQUIRE(r->Append(2,
                    ev(op, R"(,"key":{"id":1},"before":null,"after":)" + row +
                               extra + "}"),
                    true, &out)
              .ok());
  return out;
}

Json RenderTypes(const RenderOptions& base, const std::string& row) {
  return Json::parse(RenderTypesLine(base, row))["after"];
}

// kTypesRow with column `name` set to the JSON text `value`.
std::string RowWith(const std::string& name, const std::string& value) {
  Json row = Json::parse(kTypesRow);
  row[name] = Json::parse(value);
  return row.dump();
}

// Column `name` rendered from the stored JSON text `value`.
Json Value(const std::string& name, const std::string& value,
           const RenderOptions& o = RenderOptions{}) {
  return RenderTypes(o, RowWith(name, value))[name];
}

// The same as the JSON text Debezium's JsonConverter would print.
std::string ValueText(const std::string& name, const std::string& value,
                      const RenderOptions& o) {
  std::string line = RenderTypesLine(o, RowWith(name, value));
  const std::string at = "\"" + name + "\":";
  size_t b = line.find(at);
  REQUIRE(b != std::string::npos);
  b += at.size();
  return line.substr(b, line.find_first_of(",}", b) - b);
}

RenderOptions Decimal(DecimalHandling d) {
  RenderOptions o;
  o.decimal_handling = d;
  return o;
}

TEST_CASE("debezium values: defaults (precise, adaptive, bytes)",
          "[event][debezium]") {
  Json a = RenderTypes(RenderOptions{}, kTypesRow);
  CHECK(a["id"] == 1);
  // numeric(10,2): the unscaled value (-1250) as big-endian two's
  // complement bytes, base64; numeric without a scale: a struct.
  CHECK(a["amount"] == "+x4=");
  CHECK(a["ratio"] == Json::parse(R"({"scale":1,"value":"fQ=="})"));
  CHECK(a["day"] == 20786);                     // days since the epoch
  CHECK(a["at"] == int64_t{27662123456});       // MicroTime: µs since midnight
  CHECK(a["at3"] == 27662123);                  // Time: ms since midnight
  CHECK(a["attz"] == "06:41:02.5Z");            // ZonedTime, UTC
  CHECK(a["ts"] == int64_t{1795938062123456});  // MicroTimestamp
  CHECK(a["ts3"] == int64_t{1795938062123});    // Timestamp (ms)
  // ZonedTimestamp: exactly the column's precision in fraction digits
  // (DBZ-5996): 6 without a typmod, trailing zeros kept; none for 0.
  CHECK(a["tstz"] == "2026-11-29T07:41:02.123400Z");
  CHECK(a["tstz3"] == "2026-11-29T07:41:02.120Z");
  CHECK(a["tstz0"] == "2026-11-29T07:41:02Z");
  CHECK(a["raw"] == "AQL/");          // bytes: base64 in JSON
  CHECK(a["doc"] == R"({"a":[1]})");  // io.debezium.data.Json
  CHECK(a["cash"] == "AeIT");         // money: Decimal(2) of 123411
  CHECK(a["flag"] == true);           // bit(1): a boolean
  CHECK(a["vflag"] == false);         // varbit(1) too
  CHECK(a["bits"] == "BQ==");         // Bits: BitSet bytes, little-endian
  CHECK(a["vbits"] == "AQI=");
  CHECK(a["span"] == int64_t{37091106780000});  // MicroDuration
  CHECK(a["note"] == "12.50");                  // text stays text
}

TEST_CASE("debezium values: --decimal-handling double and string",
          "[event][debezium]") {
  Json a = RenderTypes(Decimal(DecimalHandling::kDouble), kTypesRow);
  CHECK(a["amount"].is_number_float());
  CHECK(a["amount"] == -12.5);
  CHECK(a["ratio"] == 12.5);
  CHECK(a["cash"] == 1234.11);
  a = RenderTypes(Decimal(DecimalHandling::kString), kTypesRow);
  CHECK(a["amount"] == "-12.50");
  CHECK(a["ratio"] == "12.5");
  CHECK(a["cash"] == "1234.11");
}

TEST_CASE("debezium values: --time-precision connect and microseconds",
          "[event][debezium]") {
  RenderOptions o;
  o.time_precision = TimePrecision::kConnect;
  Json a = RenderTypes(o, kTypesRow);
  CHECK(a["day"] == 20786);
  CHECK(a["at"] == 27662123);  // Connect Time: ms, whatever the precision
  CHECK(a["ts"] == int64_t{1795938062123});
  CHECK(a["tstz"] == "2026-11-29T07:41:02.123400Z");
  o.time_precision = TimePrecision::kAdaptiveTimeMicroseconds;
  a = RenderTypes(o, kTypesRow);
  CHECK(a["at3"] == int64_t{27662123000});    // time always in µs
  CHECK(a["ts3"] == int64_t{1795938062123});  // timestamps stay adaptive
}

TEST_CASE("debezium values: --binary-handling hex and base64",
          "[event][debezium]") {
  RenderOptions o;
  o.binary_handling = BinaryHandling::kHex;
  Json a = RenderTypes(o, kTypesRow);
  CHECK(a["raw"] == "0102ff");
  // Bits is a Connect bytes schema of its own: binary.handling.mode is
  // bytea's, so JsonConverter still writes base64.
  CHECK(a["bits"] == "BQ==");
  o.binary_handling = BinaryHandling::kBase64;
  CHECK(RenderTypes(o, kTypesRow)["raw"] == "AQL/");
}

TEST_CASE("debezium values: decimal bytes as Java's BigInteger has them",
          "[event][debezium]") {
  auto amount = [](const std::string& v) {
    return Value("amount", "\"" + v + "\"");
  };
  CHECK(amount("12.50") == "BOI=");  // 1250
  CHECK(amount("1.28") == "AIA=");   // 128: a leading zero byte
  CHECK(amount("-1.28") == "gA==");  // -128: one byte
  CHECK(amount("-1.29") == "/38=");  // -129
  CHECK(amount("0.00") == "AA==");
  CHECK(amount("-0.00") == "AA==");
  CHECK(amount("-0.01") == "/w==");
  CHECK(amount("12345678.9") == "SZYC0g==");  // padded to the scale
  CHECK(amount("1234567890123456789012345678.90") == "AY7pD/bDc+DuTj8K0g==");
  CHECK(amount("123456789012345678901234567890123456.78") ==
        "CUmw9vACMxPESZBQ3jjzTg==");  // 38 digits: still 128-bit math
  CHECK(amount("1234567890123456789012345678901234567.80") ==
        "XODppWAV/sWq36MorjmBDA==");  // 39: the long way
  CHECK(amount("-1234567890123456789012345678901234567.80") ==
        "ox8WWp/qATpVIFzXUcZ+9A==");
}

TEST_CASE("debezium values: numeric without a scale strips trailing zeros",
          "[event][debezium]") {
  // VariableScaleDecimal of BigDecimal.stripTrailingZeros(), scale >= 0.
  auto ratio = [](const std::string& v) {
    return Value("ratio", "\"" + v + "\"");
  };
  CHECK(ratio("12.50") == Json::parse(R"({"scale":1,"value":"fQ=="})"));
  CHECK(ratio("0.0") == Json::parse(R"({"scale":0,"value":"AA=="})"));
  CHECK(ratio("1200") == Json::parse(R"({"scale":0,"value":"BLA="})"));
  CHECK(ratio("1200.000") == Json::parse(R"({"scale":0,"value":"BLA="})"));
  CHECK(ratio("-0.50") == Json::parse(R"({"scale":1,"value":"+w=="})"));
  // string mode keeps the text (Debezium strips in precise mode only)
  CHECK(Value("ratio", R"("12.50")", Decimal(DecimalHandling::kString)) ==
        "12.50");
}

TEST_CASE("debezium values: numeric NaN and infinities per mode",
          "[event][debezium]") {
  for (const char* col : {"amount", "ratio"}) {
    INFO(col);
    // precise: Debezium has no decimal for them (it stops): as stored
    CHECK(Value(col, R"("NaN")") == "NaN");
    // string: SpecialValueDecimal's names
    RenderOptions o = Decimal(DecimalHandling::kString);
    CHECK(Value(col, R"("NaN")", o) == "NAN");
    CHECK(Value(col, R"("Infinity")", o) == "POSITIVE_INFINITY");
    CHECK(Value(col, R"("-Infinity")", o) == "NEGATIVE_INFINITY");
    // double: Jackson's strings for a double NaN and infinities
    o = Decimal(DecimalHandling::kDouble);
    CHECK(Value(col, R"("NaN")", o) == "NaN");
    CHECK(Value(col, R"("Infinity")", o) == "Infinity");
    CHECK(Value(col, R"("-Infinity")", o) == "-Infinity");
  }
}

TEST_CASE("debezium values: --decimal-handling double as Double.toString",
          "[event][debezium]") {
  const RenderOptions o = Decimal(DecimalHandling::kDouble);
  auto text = [&](const std::string& v) {
    return ValueText("ratio", "\"" + v + "\"", o);
  };
  CHECK(text("12") == "12.0");
  CHECK(text("12.50") == "12.5");
  CHECK(text("-0.00") == "0.0");
  CHECK(text("0.001") == "0.001");
  CHECK(text("0.000999") == "9.99E-4");
  CHECK(text("0.0001") == "1.0E-4");
  CHECK(text("1234567.5") == "1234567.5");
  CHECK(text("9999999") == "9999999.0");
  CHECK(text("10000000") == "1.0E7");
  CHECK(text("12345678.9") == "1.23456789E7");
  CHECK(text("-123456789012345678901234567890") == "-1.2345678901234568E29");
  CHECK(text("0.1") == "0.1");
  CHECK(text("100") == "100.0");
  CHECK(text("1" + std::string(400, '0')) == "\"Infinity\"");
  CHECK(text("0." + std::string(400, '0') + "1") == "0.0");
  // The smallest double: Java picks the closer two-digit decimal.
  CHECK(text("0." + std::string(323, '0') + "49406564584124654") == "4.9E-324");
  CHECK(ValueText("cash", R"("$12,345,678.90")", o) == "1.23456789E7");
}

TEST_CASE("debezium values: real and double precision as Java prints them",
          "[event][debezium]") {
  // Jackson writes a FLOAT32 with Float.toString and a FLOAT64 with
  // Double.toString; the log holds PostgreSQL's digits, put into the row
  // as they are (a JSON library would rewrite them).
  auto text = [](const std::string& name, const std::string& v) {
    std::string row = kTypesRow;
    const std::string was = name == "f4" ? R"("f4":1.5)" : R"("f8":-2.25)";
    row.replace(row.find(was), was.size(), "\"" + name + "\":" + v);
    std::string line = RenderTypesLine(RenderOptions{}, row);
    const size_t b = line.find("\"" + name + "\":") + name.size() + 3;
    return line.substr(b, line.find_first_of(",}", b) - b);
  };
  auto f4 = [&](const std::string& v) { return text("f4", v); };
  auto f8 = [&](const std::string& v) { return text("f8", v); };
  CHECK(f4("3.4028235e+38") == "3.4028235E38");  // the largest float
  CHECK(f4("1.4e-45") == "1.4E-45");             // the smallest
  CHECK(f4("0.1") == "0.1");
  // Read as a float, so a float's shortest digits, whatever PostgreSQL's
  // extra_float_digits printed (as a double, 0.100000001).
  CHECK(f4("0.100000001") == "0.1");
  CHECK(f4("3.40282347e+38") == "3.4028235E38");
  CHECK(f4("16777216") == "1.6777216E7");
  CHECK(f4("9.999999e-04") == "9.999999E-4");
  CHECK(f4("-1") == "-1.0");
  CHECK(f4("-0") == "-0.0");
  CHECK(f8("1e-310") == "1.0E-310");  // subnormal
  CHECK(f8("1.7976931348623157e+308") == "1.7976931348623157E308");
  CHECK(f8("4.9e-324") == "4.9E-324");
  CHECK(f8("1") == "1.0");
  CHECK(f8("100") == "100.0");
  CHECK(f8("9999999") == "9999999.0");
  CHECK(f8("1e+07") == "1.0E7");
  CHECK(f8("0.001") == "0.001");
  CHECK(f8("0.0001") == "1.0E-4");
  CHECK(f8("0.1") == "0.1");
  CHECK(f8("123456.789") == "123456.789");
  CHECK(f8("-2.5e+20") == "-2.5E20");
  CHECK(f8("0") == "0.0");
  // NaN and the infinities are strings in the log and in Jackson's output.
  CHECK(f4(R"("NaN")") == R"("NaN")");
  CHECK(f8(R"("Infinity")") == R"("Infinity")");
  CHECK(f8(R"("-Infinity")") == R"("-Infinity")");
}

TEST_CASE("debezium values: money parsed from the lc_monetary text",
          "[event][debezium]") {
  const RenderOptions s = Decimal(DecimalHandling::kString);
  CHECK(Value("cash", R"("-$1,234.11")") == "/h3t");  // -123411
  CHECK(Value("cash", R"("-$1,234.11")", s) == "-1234.11");
  CHECK(Value("cash", R"x("($5.00)")x") == "/gw=");  // -500
  CHECK(Value("cash", R"x("($5.00)")x", s) == "-5.00");
  CHECK(Value("cash", R"("$0.00")") == "AA==");
  CHECK(Value("cash", R"("-$0.00")", s) == "0.00");
  CHECK(Value("cash", R"("¥1,234")") == "AeII");  // scale 2: 123400
  CHECK(Value("cash", R"("¥1,234")", s) == "1234");
  CHECK(Value("cash", R"("$0.005")") == "AQ==");  // HALF_UP to 0.01
  CHECK(Value("cash", R"("EUR 12.5")", s) == "12.5");
  // Forms it does not know stay as stored.
  for (const char* v : {R"("1.234,11 €")", R"("€ 1.234,11")", R"("$1,23.00")",
                        R"("$")", R"("$1.")", R"("($1.00")"}) {
    INFO(v);
    CHECK(Value("cash", v) == Json::parse(v));
  }
}

TEST_CASE("debezium values: bit strings", "[event][debezium]") {
  CHECK(Value("flag", R"("0")") == false);
  CHECK(Value("vflag", R"("1")") == true);
  CHECK(Value("vflag", R"("")") == "");  // Debezium fails on it: as stored
  // bit(10): sized by the highest set bit, not padded to 10 bits. The
  // connector's documentation says bit(n) is padded to ceil(n/8) bytes;
  // its code (PostgresValueConverter.convertBits, since DBZ-2315) sizes
  // bit(n) as it does varbit, from the BitSet's length.
  CHECK(ValueText("bits", R"("0000000001")", RenderOptions{}) == R"("AQ==")");
  CHECK(ValueText("bits", R"("0000000000")", RenderOptions{}) == R"("")");
  CHECK(Value("bits", R"("1111111100")") == "/AM=");
  CHECK(Value("vbits", R"("100000000")") == "AAE=");
  CHECK(Value("vbits", R"("1")") == "AQ==");  // unknown length: bytes
  CHECK(Value("vbits", R"("10x")") == "10x");
}

TEST_CASE("debezium values: interval as MicroDuration", "[event][debezium]") {
  auto span = [](const std::string& v) {
    return Value("span", "\"" + v + "\"");
  };
  // Months of 30.4375 days, years of 365.25, computed in doubles as
  // Debezium does, truncated toward zero.
  CHECK(span("1 mon") == int64_t{2629800000000});
  CHECK(span("1 year") == int64_t{31557600000000});
  CHECK(span("2 years -1 mons") == int64_t{60485400000000});
  CHECK(span("-1 days +02:03:00") == int64_t{-79020000000});
  CHECK(span("-1 days -02:03:00") == int64_t{-93780000000});
  CHECK(span("3 days") == int64_t{259200000000});
  CHECK(span("00:00:00") == 0);
  CHECK(span("00:00:01.000001") == 1000000);  // 1.000001 s * 1e6 < 1000001
  CHECK(span("00:00:00.000249") == 248);
  CHECK(span("-00:00:00.000249") == -248);
  CHECK(span("100:00:00") == int64_t{360000000000});
  CHECK(span("-178956970 years -7 mons") ==
        std::numeric_limits<int64_t>::min());  // saturates like Java's cast
  // Not read (nor by pgjdbc, for hours beyond an int): as stored.
  for (const char* v :
       {"@ 1 day", "1 fortnight", "1 day 02:03", "", "1 day ", "01:02:03 1 day",
        "1", "x:00:00", "2562047788:00:54.775807"}) {
    INFO(v);
    CHECK(span(v) == v);
  }
}

TEST_CASE("debezium values: infinities and years past 9999",
          "[event][debezium]") {
  // Dates, streamed: LocalDate -5877611-06-21 (infinity) and
  // -5877611-06-22 (-infinity) as epoch days.
  CHECK(Value("day", R"("infinity")") == int64_t{-2147472692});
  CHECK(Value("day", R"("-infinity")") == int64_t{-2147472691});
  // Timestamps: pgjdbc's DATE_POSITIVE/NEGATIVE_INFINITY as µs, or ms.
  CHECK(Value("ts", R"("infinity")") == int64_t{9223372036825200000});
  CHECK(Value("ts", R"("-infinity")") == int64_t{-9223372036832400000});
  CHECK(Value("ts3", R"("infinity")") == int64_t{9223372036825200});
  CHECK(Value("ts3", R"("-infinity")") == int64_t{-9223372036832400});
  RenderOptions connect;
  connect.time_precision = TimePrecision::kConnect;
  CHECK(Value("ts", R"("infinity")", connect) == int64_t{9223372036825200});
  CHECK(Value("tstz", R"("infinity")") == "infinity");
  CHECK(Value("tstz3", R"("+294247-01-01T23:59:59.999000Z")") ==
        "+294247-01-01T23:59:59.999Z");
  CHECK(Value("tstz", R"("-0043-03-15T10:00:00.000000Z")") ==
        "-0043-03-15T10:00:00.000000Z");  // as stored
}

TEST_CASE("debezium values: a date's infinities follow the connector's path",
          "[event][debezium]") {
  // The connector streams them as -5877611-06-21 and -22 (DateTimeFormat)
  // and reads them in a snapshot as pgjdbc's java.sql.Date stand-ins,
  // which a JVM in UTC turns into these days.
  auto day = [](const std::string& v, char op,
                const RenderOptions& o = RenderOptions{}) {
    std::string row = kTypesRow;
    const std::string was = R"("day":"2026-11-29")";
    row.replace(row.find(was), was.size(), R"("day":)" + v);
    std::string line = RenderTypesLine(o, row, "", op);
    const size_t b = line.find(R"("day":)") + 6;
    return line.substr(b, line.find_first_of(",}", b) - b);
  };
  CHECK(day(R"("infinity")", 'c') == "-2147472692");
  CHECK(day(R"("-infinity")", 'c') == "-2147472691");
  CHECK(day(R"("infinity")", 'r') == "-622191234");
  CHECK(day(R"("-infinity")", 'r') == "-625821272");
  RenderOptions connect;  // a Connect Date: the same days
  connect.time_precision = TimePrecision::kConnect;
  CHECK(day(R"("infinity")", 'r', connect) == "-622191234");
  CHECK(day(R"("infinity")", 'c', connect) == "-2147472692");
  // Other dates and timestamps are the same on both paths.
  CHECK(day(R"("2026-11-29")", 'r') == "20786");
  const std::string ts =
      RenderTypesLine(RenderOptions{}, RowWith("ts", R"("infinity")"), "", 'r');
  CHECK(ts.find(R"("ts":9223372036825200000,)") != std::string::npos);
}

TEST_CASE("debezium values: null, unknown relations and old logs as stored",
          "[event][debezium]") {
  CHECK(Value("day", "null").is_null());
  // No schema event for the table: values as stored.
  RenderOptions o;
  o.format = Format::kDebezium;
  auto r = MakeRenderer(o, SourceInfo{});
  std::string out;
  REQUIRE(r->Append(1,
                    std::string(R"({"lsn":"0/100","xid":7,"ts":")") + kTs +
                        R"(","op":"c","schema":"public","table":"t",)"
                        R"("key":{"id":1},"before":null,"after":)" +
                        kTypesRow + "}",
                    true, &out)
              .ok());
  CHECK(Json::parse(out)["after"] == Json::parse(kTypesRow));
}

TEST_CASE("debezium values: a JSON null document is the string \"null\"",
          "[event][debezium]") {
  // The capture stores json 'null' as null and names it in "json_null";
  // Debezium's Json is PostgreSQL's text, "null". SQL NULL stays null.
  Json line =
      Json::parse(RenderTypesLine(RenderOptions{}, RowWith("doc", "null"),
                                  R"(,"json_null":["/after/doc"])"));
  CHECK(line["after"]["doc"] == "null");
  CHECK(Value("doc", "null").is_null());
  line = Json::parse(RenderTypesLine(RenderOptions{}, RowWith("doc", "null"),
                                     R"(,"json_null":["/before/doc"])"));
  CHECK(line["after"]["doc"].is_null());  // another section's
}

}  // namespace
}  // namespace cdc::event
