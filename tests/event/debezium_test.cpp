// --format debezium against the change events Debezium documents for its
// PostgreSQL connector (tests/event/golden), field by field: every field
// Debezium shows is there with the same shape, and with the same value
// where the stored event holds the same data.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cdc/event/renderer.h"
#include "cdc/event/stored.h"
#include "golden.h"

namespace cdc::event {
namespace {

using golden::CompareFields, golden::Json, golden::Render;

// The golden events' table and rows.
constexpr const char* kRow =
    R"({"id":1,"first_name":"Anne","last_name":"Kretchmar","email":"annek@noanswer.org"})";
constexpr const char* kRow2 =
    R"({"id":1,"first_name":"Anne Marie","last_name":"Kretchmar","email":"annek@noanswer.org"})";

// 1559033904863123 µs, the commit time the golden source blocks show.
constexpr const char* kTs = "2019-05-28T08:58:24.863123Z";

std::string Stored(const std::string& lsn, uint64_t xid, char op,
                   const std::string& rest) {
  std::string s = "{\"lsn\":\"" + lsn + "\",\"xid\":" + std::to_string(xid) +
                  ",\"ts\":\"" + kTs + "\",\"op\":\"" + op + "\"";
  if (op != 'm') s += ",\"schema\":\"public\",\"table\":\"customers\"";
  return s + rest + "}";
}

std::unique_ptr<Renderer> Make(int64_t clock_us, bool with_key = false) {
  RenderOptions o;
  o.format = Format::kDebezium;
  o.with_key = with_key;
  o.server_name = "PostgreSQL_server";
  o.clock = [clock_us] { return clock_us; };
  SourceInfo src;
  src.log_id = "893d7fe3732a252221cf1d036563f303";
  src.database = "postgres";
  src.system_id = "7300000000000000001";
  return MakeRenderer(o, src);
}

// The golden event `i` as our output must match it: Debezium's connector
// writes source.snapshot as a string ("true", "last", "false"; its
// documentation's examples show a boolean), and the top-level ts_ns has
// only µs precision here.
Json Expected(size_t i, const char* snapshot) {
  Json want = golden::Event("debezium-postgresql-events.json", i);
  want["source"]["snapshot"] = snapshot;
  return want;
}

const std::vector<std::string> kShapeOnly = {
    "/source/version",  // ours names cdc's version
    "/ts_ns",           // from a µs clock
};

TEST_CASE("debezium insert matches the golden event", "[event][debezium]") {
  auto r = Make(1559033904863841);
  r->Restart(true);
  // A transaction before it, so that source.sequence has the previous
  // commit LSN as Debezium's does (24023119 = 0/16E904F).
  (void)Render(*r, 1,
               Stored("0/16E904F", 554, 'c',
                      R"(,"key":{"id":0},"before":null,"after":{"id":0})"),
               true);
  Json got = Render(
      *r, 2,
      Stored("0/16E9058", 555, 'c',
             std::string(R"(,"key":{"id":1},"before":null,"after":)") + kRow),
      true);
  CompareFields(Expected(0, "false"), got, "", kShapeOnly, {"/transaction"});
  CHECK(
      got["transaction"] ==
      Json::parse(
          R"({"id":"555:24023128","total_order":1,"data_collection_order":1})"));
  CHECK(got["source"]["sequence"] == "[\"24023119\",\"24023128\"]");
}

TEST_CASE("debezium snapshot read matches the golden event",
          "[event][debezium]") {
  auto r = Make(1559033904863841);
  r->Restart(true);
  (void)Render(*r, 1,
               Stored("0/16E904F", 554, 'c',
                      R"(,"key":{"id":0},"before":null,"after":{"id":0})"),
               true);
  const std::string read =
      Stored("0/16E9058", 555, 'r',
             std::string(R"(,"key":{"id":1},"before":null,"after":)") + kRow);
  Json want = Expected(0, "true");
  want["op"] = "r";
  CompareFields(want, Render(*r, 2, read, false), "", kShapeOnly,
                {"/transaction"});
  want["source"]["snapshot"] = "last";  // the snapshot's final row
  Json last = Render(*r, 3, read, true);
  CompareFields(want, last, "", kShapeOnly, {"/transaction"});
  CHECK(last["transaction"]["total_order"] == 2);
}

TEST_CASE("debezium update, delete, truncate and message match the golden",
          "[event][debezium]") {
  const std::vector<std::string> shape = {"/source/version", "/ts_ns",
                                          "/source/ts_us",   "/source/ts_ns",
                                          "/ts_ms",          "/ts_us"};
  const std::vector<std::string> extra = {"/transaction", "/source/sequence"};
  auto r = Make(1465584025523514);
  r->Restart(true);
  Json u = Render(
      *r, 1,
      Stored("0/16E9058", 556, 'u',
             std::string(R"(,"key":{"id":1},"before":null,"after":)") + kRow2),
      true);
  CompareFields(Expected(1, "false"), u, "", shape, extra);
  Json d = Render(*r, 2,
                  Stored("0/2C5E2F8", 556, 'd',
                         R"(,"key":{"id":1},"before":null,"after":null)"),
                  true);
  CompareFields(Expected(2, "false"), d, "", shape, extra);
  Json t = Render(
      *r, 3,
      Stored(
          "0/2C5E2F8", 556, 't',
          R"(,"key":null,"before":null,"after":null,"options":{"cascade":false,"restart_identity":false})"),
      true);
  CompareFields(Expected(3, "false"), t, "", shape, extra);
  Json m = Render(
      *r, 4,
      Stored(
          "0/2C5E2F8", 556, 'm',
          // The documented content, "Ymfy", is the bytes 62 67 f2: not
          // UTF-8, so stored in base64.
          R"(,"prefix":"foo","content":"Ymfy","content_encoding":"base64","transactional":true)"),
      true);
  CompareFields(Expected(4, "false"), m, "", shape, extra);
  CHECK(m["message"]["content"] == "Ymfy");
}

TEST_CASE("debezium orders events within a transaction at read time",
          "[event][debezium]") {
  auto r = Make(1);
  auto ev = [](const char* table, int id) {
    return std::string("{\"lsn\":\"0/100\",\"xid\":9,\"ts\":\"") + kTs +
           "\",\"op\":\"c\",\"schema\":\"public\",\"table\":\"" + table +
           "\",\"key\":{\"id\":" + std::to_string(id) +
           "},\"before\":null,\"after\":{\"id\":" + std::to_string(id) + "}}";
  };
  SECTION("from the start of the transaction") {
    r->Restart(true);
    Json a = Render(*r, 1, ev("a", 1), false);
    REQUIRE(r->Skip(2, ev("b", 2), false).ok());  // left out by a filter
    Json c = Render(*r, 3, ev("a", 3), false);
    Json d = Render(*r, 4, ev("b", 4), true);
    CHECK(a["transaction"]["total_order"] == 1);
    CHECK(c["transaction"]["total_order"] == 3);
    CHECK(c["transaction"]["data_collection_order"] == 2);
    CHECK(d["transaction"]["total_order"] == 4);
    CHECK(d["transaction"]["data_collection_order"] == 2);
    CHECK(d["transaction"]["id"] == "9:256");
  }
  SECTION("from the middle: unknown until the next transaction") {
    Json c = Render(*r, 3, ev("a", 3), false);
    Json d = Render(*r, 4, ev("b", 4), true);
    CHECK(c["transaction"].is_null());
    CHECK(d["transaction"].is_null());
    std::string next = ev("a", 5);
    next.replace(next.find("0/100"), 5, "0/200");
    Json e = Render(*r, 5, next, true);
    CHECK(e["transaction"]["total_order"] == 1);
    CHECK(e["source"]["sequence"] == "[\"256\",\"512\"]");
  }
}

TEST_CASE("debezium TOAST placeholder, key form and schema changes",
          "[event][debezium]") {
  auto r = Make(1, true);
  r->Restart(true);
  Json u = Render(
      *r, 1,
      Stored(
          "0/10", 5, 'u',
          R"(,"key":{"id":7},"before":null,"after":{"id":7},"unchanged":["big","a\"b"])"),
      true);
  CHECK(u["key"] == Json::parse(R"({"id":7})"));
  CHECK(
      u["value"]["after"] ==
      Json::parse(
          R"({"id":7,"big":"__debezium_unavailable_value","a\"b":"__debezium_unavailable_value"})"));
  CHECK(u["value"]["op"] == "u");
  Json m = Render(
      *r, 2,
      Stored(
          "0/20", 0, 'm',
          R"(,"prefix":"p","content":"AAE=","content_encoding":"base64","transactional":false)"),
      true);
  CHECK(m["key"] == Json::parse(R"({"prefix":"p"})"));
  CHECK(m["value"]["message"]["content"] == "AAE=");
  CHECK(m["value"]["source"]["txId"].is_null());
  CHECK(m["value"]["transaction"].is_null());
  Json text = Render(
      *r, 3,
      Stored("0/28", 7, 'm',
             R"(,"prefix":"p","content":"bar \u00e9","transactional":true)"),
      true);
  CHECK(text["value"]["message"]["content"] == "YmFyIMOp");  // "bar é"
  std::string out;
  REQUIRE(r->Append(
               3,
               Stored("0/30", 6, 's',
                      R"(,"key":null,"before":null,"after":null,"columns":[])"),
               true, &out)
              .ok());
  CHECK(out.empty());  // Debezium's PostgreSQL connector has no such event
}

TEST_CASE("a stored event that is not one is corruption, never a guess",
          "[event][debezium]") {
  auto r = Make(1);
  for (const char* bad :
       {"{}", "{\"lsn\":\"0/1\"",
        "{\"lsn\":\"x\",\"xid\":1,\"ts\":\"t\",\"op\":\"c\"}",
        "{\"lsn\":\"0/1\",\"xid\":-1,\"ts\":\"t\",\"op\":\"c\"}",
        "{\"lsn\":\"0/1\",\"xid\":1,\"ts\":\"t\",\"op\":\"cc\"}",
        "{\"lsn\":\"0/"
        "1\",\"xid\":1,\"ts\":\"t\",\"op\":\"c\",\"after\":{\"a\":\"}",
        "{\"lsn\":\"0/1\",\"xid\":1,\"ts\":\"t\",\"op\":\"c\"} x", "[1]"}) {
    INFO(bad);
    std::string out = "kept";
    Status s = r->Append(1, bad, true, &out);
    CHECK(s.code() == Code::kCorruption);
    CHECK(out == "kept");
  }
}

}  // namespace
}  // namespace cdc::event

namespace cdc::event {
namespace {

TEST_CASE("deeply nested values are copied, never recursed into",
          "[event][debezium]") {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string stored =
      R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.000000Z","op":"c","schema":"s","table":"t","key":null,"before":null,"after":{"doc":)" +
      deep + "}}";
  auto r = Make(1);
  std::string out;
  REQUIRE(r->Append(1, stored, true, &out).ok());
  CHECK(out.find("\"after\":{\"doc\":" + deep + "}") != std::string::npos);
}

}  // namespace
}  // namespace cdc::event

namespace cdc::event {
namespace {

// A stored event of table `table` at `lsn` with xid `xid`.
std::string Ev(const char* lsn, uint64_t xid, char op, const char* table,
               const std::string& rest) {
  return std::string("{\"lsn\":\"") + lsn +
         "\",\"xid\":" + std::to_string(xid) + ",\"ts\":\"" + kTs +
         "\",\"op\":\"" + op + "\",\"schema\":\"public\",\"table\":\"" + table +
         "\"" + rest + "}";
}

std::string Insert(int id) {
  return ",\"key\":{\"id\":" + std::to_string(id) +
         "},\"before\":null,\"after\":{\"id\":" + std::to_string(id) + "}";
}

constexpr const char* kSchemaOfId =
    R"(,"key":null,"before":null,"after":null,)"
    R"("columns":[{"name":"id","type_oid":23,"key":true}])";

TEST_CASE("debezium leaves schema events out of the transaction order",
          "[event][debezium]") {
  // Debezium has no such event: its TransactionMonitor counts changes.
  auto r = Make(1);
  r->Restart(true);
  std::string out;
  REQUIRE(r->Skip(1, Ev("0/100", 9, 's', "a", kSchemaOfId), false).ok());
  Json a1 = Render(*r, 2, Ev("0/100", 9, 'c', "a", Insert(1)), false);
  REQUIRE(
      r->Append(3, Ev("0/100", 9, 's', "a", kSchemaOfId), false, &out).ok());
  CHECK(out.empty());
  Json a2 = Render(*r, 4, Ev("0/100", 9, 'c', "a", Insert(2)), false);
  REQUIRE(r->Skip(5, Ev("0/100", 9, 's', "b", kSchemaOfId), false).ok());
  Json b1 = Render(*r, 6, Ev("0/100", 9, 'c', "b", Insert(3)), true);
  CHECK(a1["transaction"]["total_order"] == 1);
  CHECK(a1["transaction"]["data_collection_order"] == 1);
  CHECK(a2["transaction"]["total_order"] == 2);
  CHECK(a2["transaction"]["data_collection_order"] == 2);
  CHECK(b1["transaction"]["total_order"] == 3);
  CHECK(b1["transaction"]["data_collection_order"] == 1);
  // A schema event still ends a transaction it is the last event of.
  Json c1 = Render(*r, 7, Ev("0/200", 10, 'c', "a", Insert(4)), false);
  REQUIRE(r->Skip(8, Ev("0/200", 10, 's', "a", kSchemaOfId), true).ok());
  Json d1 = Render(*r, 9, Ev("0/300", 11, 'c', "a", Insert(5)), true);
  CHECK(c1["transaction"]["total_order"] == 1);
  CHECK(d1["transaction"]["total_order"] == 1);
  CHECK(d1["source"]["sequence"] == "[\"512\",\"768\"]");
}

TEST_CASE("debezium snapshot markers follow the stored table markers",
          "[event][debezium]") {
  // RelationalSnapshotChangeEventSource.setSnapshotMarker: last, first,
  // last_in_data_collection, first_in_data_collection, true.
  struct Row {
    const char* table;
    const char* tag;  // the stored "snapshot", or null
    const char* want;
  };
  const Row rows[] = {
      {"a", "first", "first"},
      {"a", nullptr, "true"},
      {"a", "last", "last_in_data_collection"},
      {"b", "only", "last_in_data_collection"},
      {"c", "first", "first_in_data_collection"},
      {"c", nullptr, "true"},
      {"c", "last", "last"},
  };
  auto r = Make(1);
  r->Restart(true);
  uint64_t seq = 1;
  for (const Row& row : rows) {
    INFO(row.table << " " << (row.tag ? row.tag : "-"));
    std::string rest = Insert(static_cast<int>(seq));
    if (row.tag != nullptr)
      rest += std::string(",\"snapshot\":\"") + row.tag + "\"";
    const bool last = &row == &rows[std::size(rows) - 1];
    Json got = Render(*r, seq++, Ev("0/100", 0, 'r', row.table, rest), last);
    CHECK(got["source"]["snapshot"] == row.want);
    CHECK(got["transaction"].is_null());  // snapshot reads never have one
  }
  // A snapshot of one row of one table.
  Json only = Render(
      *r, seq++, Ev("0/200", 0, 'r', "a", Insert(1) + R"(,"snapshot":"only")"),
      true);
  CHECK(only["source"]["snapshot"] == "last");
  // Read from the middle of a snapshot: a table's first row cannot be
  // told from the snapshot's first.
  auto mid = Make(1);
  Json b = Render(
      *mid, 9, Ev("0/100", 0, 'r', "b", Insert(1) + R"(,"snapshot":"first")"),
      false);
  CHECK(b["source"]["snapshot"] == "first_in_data_collection");
}

TEST_CASE("debezium marks incremental snapshot rows as the connector does",
          "[event][debezium]") {
  // PostgresSourceInfoStructMaker: snapshot "incremental" and no txId,
  // lsn or xmin; the rows are read outside the stream, so no transaction
  // block, and the watermark transaction's own events do not count them.
  auto r = Make(1);
  r->Restart(true);
  const std::string inc = R"(,"snapshot":"incremental")";
  std::string out;
  REQUIRE(r->Append(1, Ev("0/100", 9, 'r', "a", Insert(1) + inc), false, &out)
              .ok());
  REQUIRE(r->Skip(2, Ev("0/100", 9, 'r', "a", Insert(2) + inc), false).ok());
  const std::string tail =
      R"("snapshot":"incremental","db":"postgres",)"
      R"("sequence":"[null,\"256\"]","schema":"public","table":"a",)"
      R"("txId":null,"lsn":null,"xmin":null},"op":"r","ts_ms":0,"ts_us":1,)"
      R"("ts_ns":1000,"transaction":null})"
      "\n";
  REQUIRE(out.size() > tail.size());
  CHECK(out.substr(out.size() - tail.size()) == tail);
  CHECK(out.rfind(R"({"before":null,"after":{"id":1},"source":)", 0) == 0);
  Json m = Render(
      *r, 3,
      Ev("0/100", 9, 'm', "a",
         R"(,"prefix":"cdc.snapshot","content":"{}","transactional":true)"),
      true);
  CHECK(m["transaction"]["total_order"] == 1);
  CHECK(m["source"]["txId"] == 9);
  // An initial snapshot's rows keep their markers and position.
  Json first = Render(
      *r, 4, Ev("0/200", 0, 'r', "a", Insert(1) + R"(,"snapshot":"only")"),
      true);
  CHECK(first["source"]["snapshot"] == "last");
  CHECK(first["source"]["lsn"] == 512);
}

TEST_CASE("debezium writes a JSON null document as \"null\" in every row",
          "[event][debezium]") {
  auto r = Make(1, true);
  r->Restart(true);
  REQUIRE(r->Skip(1,
                  Ev("0/100", 9, 's', "j",
                     R"(,"key":null,"before":null,"after":null,"columns":[)"
                     R"({"name":"id","type_oid":3802,"key":true},)"
                     R"({"name":"a/b~c","type_oid":114,"key":false},)"
                     R"({"name":"n","type_oid":25,"key":false}])"),
                  false)
              .ok());
  Json u = Render(
      *r, 2,
      Ev("0/100", 9, 'u', "j",
         R"(,"key":{"id":null},"before":{"id":null,"a/b~c":null,"n":null},)"
         R"("after":{"id":null,"a/b~c":{"x":1},"n":null},"json_null":)"
         R"(["/key/id","/before/id","/before/a~1b~0c","/after/id"])"),
      false);
  CHECK(u["key"] == Json::parse(R"({"id":"null"})"));
  CHECK(u["value"]["before"] ==
        Json::parse(R"({"id":"null","a/b~c":"null","n":null})"));
  CHECK(u["value"]["after"] ==
        Json::parse(R"({"id":"null","a/b~c":"{\"x\":1}","n":null})"));
  // A delete's before is the key; a pointer may be written with escapes.
  Json d = Render(*r, 3,
                  Ev("0/100", 9, 'd', "j",
                     R"(,"key":{"id":null},"before":null,"after":null,)"
                     R"("json_null":["\/key\/id"])"),
                  true);
  CHECK(d["value"]["before"] == Json::parse(R"({"id":"null"})"));
}

}  // namespace
}  // namespace cdc::event
