// --format debezium on a MariaDB log: the change events Debezium documents
// for its MySQL connector (tests/event/golden), field by field, and the
// connector's value conventions for MySQL types, from the schema event's
// MariaDB type names.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cdc/event/renderer.h"
#include "golden.h"

namespace cdc::event {
namespace {

using golden::CompareFields, golden::Json, golden::Render;

constexpr const char* kRow =
    R"({"id":1004,"first_name":"Anne","last_name":"Kretchmar","email":"annek@noanswer.org"})";
constexpr const char* kRow2 =
    R"({"id":1004,"first_name":"Anne Marie","last_name":"Kretchmar","email":"annek@noanswer.org"})";

// A stored event of a MariaDB log (cdc-log-format(5)): lsn is the GTID's
// sequence number, xid its server id; gtid, file and pos at the end.
std::string Stored(uint64_t seqno, uint32_t server_id, const std::string& ts,
                   char op, const std::string& rows, uint64_t pos,
                   const std::string& table = "customers") {
  char lsn[32];
  std::snprintf(lsn, sizeof lsn, "0/%llX",
                static_cast<unsigned long long>(seqno));
  return std::string("{\"lsn\":\"") + lsn +
         "\",\"xid\":" + std::to_string(server_id) + ",\"ts\":\"" + ts +
         "\",\"op\":\"" + op + "\",\"schema\":\"inventory\",\"table\":\"" +
         table + "\"" + rows + ",\"gtid\":\"0-" + std::to_string(server_id) +
         "-" + std::to_string(seqno) +
         "\",\"file\":\"mysql-bin.000003\",\"pos\":" + std::to_string(pos) +
         "}";
}

std::unique_ptr<Renderer> Make(int64_t clock_us, RenderOptions o = {}) {
  o.format = Format::kDebezium;
  o.server_name = "mysql-server-1";
  o.clock = [clock_us] { return clock_us; };
  SourceInfo src;
  src.log_id = "5ad2d9bc239e202381c1d3a4b2f1e0aa";
  src.database = "inventory";
  src.kind = "mariadb";
  return MakeRenderer(o, src);
}

// The golden event `i` as our output must match it. The connector writes
// source.snapshot as a string (its documentation's examples show a
// boolean); a MariaDB log always has GTIDs (the examples are of a server
// without); the thread and the statement are not in the log (null, as
// the connector has "query" without include.query).
Json Expected(size_t i, const std::string& gtid) {
  Json want = golden::Event("debezium-mysql-events.json", i);
  want["source"]["snapshot"] = "false";
  want["source"]["gtid"] = gtid;
  want["source"]["thread"] = nullptr;
  want["source"]["query"] = nullptr;
  return want;
}

const std::vector<std::string> kShape = {"/source/version", "/ts_ns"};

TEST_CASE(
    "debezium on a MariaDB log: create, update and delete match the "
    "MySQL connector's golden events",
    "[event][debezium][mariadb]") {
  {
    auto r = Make(1465491411815437);
    r->Restart(true);
    Json c = Render(
        *r, 1,
        Stored(
            7, 0, "1970-01-01T00:00:00Z", 'c',
            std::string(R"(,"key":{"id":1004},"before":null,"after":)") + kRow,
            154),
        true);
    CompareFields(Expected(0, "0-0-7"), c, "", kShape, {"/transaction"});
    CHECK(c["transaction"] == nullptr);  // server id 0: no transaction id
  }
  auto r = Make(1465581029523758);
  r->Restart(true);
  Json u = Render(*r, 1,
                  Stored(17, 223344, "2016-06-10T17:50:29.100Z", 'u',
                         std::string(R"(,"key":{"id":1004},"before":)") + kRow +
                             ",\"after\":" + kRow2,
                         484),
                  true);
  CompareFields(Expected(1, "0-223344-17"), u, "", kShape, {"/transaction"});
  CHECK(u["transaction"] ==
        Json::parse(R"({"id":"0-223344-17","total_order":1,)"
                    R"("data_collection_order":1})"));
  auto r2 = Make(1465581902461842);
  r2->Restart(true);
  Json d = Render(*r2, 2,
                  Stored(18, 223344, "2016-06-10T18:05:02.300Z", 'd',
                         std::string(R"(,"key":{"id":1004},"before":)") +
                             kRow2 + ",\"after\":null",
                         805),
                  true);
  CompareFields(Expected(2, "0-223344-18"), d, "", kShape, {"/transaction"});
}

TEST_CASE("debezium on a MariaDB log: row counts a transaction's changes",
          "[event][debezium][mariadb]") {
  auto r = Make(1);
  r->Restart(true);
  // The transaction starts with a schema event, which carries no binlog
  // coordinates (and prints nothing): the rows' still show.
  std::string out;
  REQUIRE(
      r->Append(1,
                R"({"lsn":"0/1E","xid":1,"ts":"2024-01-01T00:00:00Z","op":"s",)"
                R"("schema":"inventory","table":"customers","key":null,)"
                R"("before":null,"after":null,"columns":[]})",
                false, &out)
          .ok());
  CHECK(out.empty());
  for (int i = 0; i < 3; ++i) {
    Json e = Render(*r, i + 1,
                    Stored(30, 1, "2024-01-01T00:00:00Z", 'c',
                           R"(,"key":{"id":)" + std::to_string(i) +
                               R"(},"before":null,"after":{"id":)" +
                               std::to_string(i) + "}",
                           4242),
                    i == 2);
    CHECK(e["source"]["row"] == i);
    CHECK(e["source"]["pos"] == 4242);
    CHECK(e["source"]["gtid"] == "0-1-30");
    CHECK(e["transaction"]["id"] == "0-1-30");
    CHECK(e["transaction"]["total_order"] == i + 1);
  }
}

// A schema event of a MariaDB log with one column of each kind.
// clang-format off
const char* kSchema =
    R"j({"lsn":"0/1","xid":1,"ts":"2024-01-01T00:00:00Z","op":"s","schema":"inventory","table":"t","key":null,"before":null,"after":null,"columns":[)j"
    R"j({"name":"id","type":"int","key":true},)j"
    R"j({"name":"dec","type":"decimal(10,2)","key":false},)j"
    R"j({"name":"d","type":"date","key":false},)j"
    R"j({"name":"dt","type":"datetime","key":false},)j"
    R"j({"name":"dt6","type":"datetime(6)","key":false},)j"
    R"j({"name":"ts","type":"timestamp","key":false},)j"
    R"j({"name":"ts6","type":"timestamp(6)","key":false},)j"
    R"j({"name":"tm","type":"time","key":false},)j"
    R"j({"name":"tm6","type":"time(6)","key":false},)j"
    R"j({"name":"b1","type":"bit(1)","key":false},)j"
    R"j({"name":"b10","type":"bit(10)","key":false},)j"
    R"j({"name":"b13","type":"bit(13)","key":false},)j"
    R"j({"name":"y","type":"year","key":false},)j"
    R"j({"name":"bu","type":"bigint unsigned","key":false},)j"
    R"j({"name":"e","type":"enum","labels":["a","b"],"key":false},)j"
    R"j({"name":"st","type":"set","labels":["a","b"],"key":false},)j"
    R"j({"name":"vb","type":"varbinary","charset":"binary","key":false},)j"
    R"j({"name":"j","type":"json","charset":"utf8mb4","key":false},)j"
    R"j({"name":"g","type":"geometry","key":false},)j"
    R"j({"name":"g0","type":"geometry","key":false},)j"
    R"j({"name":"z","type":"date","key":false},)j"
    R"j({"name":"zdt","type":"datetime(6)","key":false}]})j";
// clang-format on

const char* kValues =
    R"({"id":1,"dec":"12.34","d":"2018-06-20","dt":"2018-06-20T06:37:03",)"
    R"("dt6":"2018-06-20T06:37:03.5","ts":"2018-06-20T13:37:03Z",)"
    R"("ts6":"2023-01-11T00:34:10.123Z","tm":"-838:59:59",)"
    R"("tm6":"12:34:56.000001","b1":"1","b10":"1000000001",)"
    R"("b13":"0000000000001","y":2024,"bu":18446744073709551615,)"
    R"("e":"b","st":"a,b","vb":"3q2+7w==","j":"{\"k\": [1, 2]}",)"
    R"("g":{"srid":4326,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA"},)"
    R"("g0":{"srid":0,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA"},)"
    R"("z":"0000-00-00","zdt":"0000-00-00T00:00:00"})";

Json RenderValues(RenderOptions o = {}) {
  auto r = Make(1, o);
  r->LearnSchema(kSchema);
  r->Restart(true);
  const std::string ev =
      R"({"lsn":"0/2","xid":1,"ts":"2024-01-01T00:00:00Z","op":"c","schema":"inventory","table":"t","key":{"id":1},"before":null,"after":)" +
      std::string(kValues) + R"(,"gtid":"0-1-2","file":"b.000001","pos":4})";
  return Render(*r, 1, ev, true)["after"];
}

TEST_CASE("debezium on a MariaDB log: the MySQL connector's type conventions",
          "[event][debezium][mariadb]") {
  const Json a = RenderValues();
  CHECK(a["id"] == 1);
  CHECK(a["dec"] == "BNI=");  // Decimal: unscaled 1234, big-endian
  CHECK(a["d"] == 17702);     // io.debezium.time.Date: days
  // The connector's documented DATETIME example, and µs past precision 3.
  CHECK(a["dt"] == 1529476623000);
  CHECK(a["dt6"] == 1529476623500000);
  // ZonedTimestamp: UTC; TIMESTAMP(n) with exactly n fraction digits.
  CHECK(a["ts"] == "2018-06-20T13:37:03Z");
  CHECK(a["ts6"] == "2023-01-11T00:34:10.123000Z");
  // adaptive_time_microseconds (the connector's default): MicroTime.
  CHECK(a["tm"] == -3020399000000);
  CHECK(a["tm6"] == 45296000001);
  CHECK(a["b1"] == true);     // BIT(1): BOOLEAN
  CHECK(a["b10"] == "AQI=");  // Bits, least significant byte first
  CHECK(a["b13"] == "AQA=");  // sized to the column's 13 bits
  CHECK(a["y"] == 2024);
  CHECK(a["bu"].dump() == "18446744073709551615");
  CHECK(a["e"] == "b");
  CHECK(a["st"] == "a,b");
  CHECK(a["vb"] == "3q2+7w==");
  CHECK(a["j"] == "{\"k\": [1, 2]}");
  CHECK(a["g"] ==
        Json::parse(R"({"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA","srid":4326})"));
  CHECK(a["g0"]["srid"] == nullptr);
  CHECK(a["z"] == nullptr);  // zero dates: null
  CHECK(a["zdt"] == nullptr);

  RenderOptions o;
  o.decimal_handling = DecimalHandling::kString;
  o.time_precision = TimePrecision::kConnect;
  const Json c = RenderValues(o);
  CHECK(c["dec"] == "12.34");
  CHECK(c["dt6"] == 1529476623500);  // connect: Timestamp, ms
  CHECK(c["tm"] == -3020399000);     // connect: Time, ms
}

}  // namespace
}  // namespace cdc::event
