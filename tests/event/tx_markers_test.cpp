// --tx-markers: BEGIN before the first printed event of a transaction, END
// after its last event, counts of what was printed, per table.
#include "cdc/event/tx_markers.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cdc::event {
namespace {

using Json = nlohmann::json;

// 2026-11-29T07:41:02.123456Z is 1795938062123456 µs since the epoch.
std::string Ev(const std::string& lsn, uint64_t xid, const std::string& table,
               char op = 'c') {
  return R"({"lsn":")" + lsn + R"(","xid":)" + std::to_string(xid) +
         R"(,"ts":"2026-11-29T07:41:02.123456Z","op":")" + op +
         R"(","schema":"public","table":")" + table +
         R"(","key":{"id":1},"before":null,"after":{"id":1}})";
}

std::vector<Json> Lines(const std::string& out) {
  std::vector<Json> v;
  size_t p = 0;
  while (p < out.size()) {
    size_t nl = out.find('\n', p);
    REQUIRE(nl != std::string::npos);
    v.push_back(Json::parse(out.substr(p, nl - p)));
    p = nl + 1;
  }
  return v;
}

struct Item {
  uint64_t seq;
  std::string stored;
  bool last;
  bool printed;
};

std::string Run(TxMarkers& m, const std::vector<Item>& items) {
  std::string out;
  for (const Item& i : items) {
    REQUIRE(m.Before(i.seq, i.stored, i.printed, &out).ok());
    if (i.printed) out += "EVENT\n";
    m.After(i.seq, i.last, &out);
  }
  return out;
}

TEST_CASE("tx markers: BEGIN and END around each transaction, with counts",
          "[event][tx_markers]") {
  TxMarkers m(Format::kNative, SourceInfo{"LOG", "", "db", "", ""});
  m.Restart(true);
  // 0/100 = 256
  std::string out = Run(m, {{1, Ev("0/100", 7, "orders"), false, true},
                            {2, Ev("0/100", 7, "items"), false, true},
                            {3, Ev("0/100", 7, "orders"), true, true},
                            {4, Ev("0/200", 8, "orders"), true, true}});
  std::string marked;
  for (size_t p = 0; (p = out.find("EVENT\n", p)) != std::string::npos; p += 6)
    marked += "E";
  CHECK(marked == "EEEE");
  // Replace the event placeholders so the rest parses as JSON lines.
  std::string json;
  size_t p = 0, q;
  while ((q = out.find("EVENT\n", p)) != std::string::npos) {
    json += out.substr(p, q - p);
    p = q + 6;
  }
  json += out.substr(p);
  auto v = Lines(json);
  REQUIRE(v.size() == 4);
  CHECK(v[0] ==
        Json::parse(R"({"status":"BEGIN","id":"7:256","ts_ms":1795938062123,)"
                    R"("event_count":null,"data_collections":null})"));
  CHECK(v[1] ==
        Json::parse(R"({"status":"END","id":"7:256","ts_ms":1795938062123,)"
                    R"("event_count":3,"data_collections":[)"
                    R"({"data_collection":"public.orders","event_count":2},)"
                    R"({"data_collection":"public.items","event_count":1}]})"));
  CHECK(v[2]["status"] == "BEGIN");
  CHECK(v[2]["id"] == "8:512");
  CHECK(v[3]["event_count"] == 1);
  // The order: BEGIN, the events, END.
  CHECK(out.find("BEGIN") < out.find("EVENT"));
  CHECK(out.find("\"END\"") > out.find("EVENT\n", out.find("EVENT") + 12));
}

TEST_CASE("tx markers: counts only printed events; none when none printed",
          "[event][tx_markers]") {
  TxMarkers m(Format::kNative, SourceInfo{"LOG", "", "db", "", ""});
  m.Restart(true);
  std::string out = Run(m, {{1, Ev("0/100", 7, "orders"), false, false},
                            {2, Ev("0/100", 7, "items"), true, true},
                            {3, Ev("0/200", 8, "orders"), true, false},
                            {4, Ev("0/300", 9, "orders"), true, true}});
  size_t p = 0, q;
  std::string json;
  while ((q = out.find("EVENT\n", p)) != std::string::npos) {
    json += out.substr(p, q - p);
    p = q + 6;
  }
  json += out.substr(p);
  auto v = Lines(json);
  REQUIRE(v.size() == 4);  // transaction 8 printed nothing: no markers
  CHECK(v[0]["id"] == "7:256");
  CHECK(v[1]["event_count"] == 1);
  CHECK(v[1]["data_collections"] ==
        Json::parse(R"([{"data_collection":"public.items","event_count":1}])"));
  CHECK(v[2]["id"] == "9:768");
  CHECK(v[3]["status"] == "END");
}

TEST_CASE("tx markers: a read that starts inside a transaction marks it not",
          "[event][tx_markers]") {
  TxMarkers m(Format::kNative, SourceInfo{"LOG", "", "db", "", ""});
  // A new TxMarkers assumes the read may start mid-transaction.
  std::string out = Run(m, {{5, Ev("0/100", 7, "orders"), true, true},
                            {6, Ev("0/200", 8, "orders"), true, true}});
  auto first_begin = out.find("BEGIN");
  REQUIRE(first_begin != std::string::npos);
  CHECK(out.find("7:256") == std::string::npos);
  CHECK(out.find("8:512") != std::string::npos);
  CHECK(out.find("BEGIN", first_begin + 1) == std::string::npos);
}

TEST_CASE("tx markers: cloudevents wraps each marker in a CloudEvent",
          "[event][tx_markers]") {
  TxMarkers m(Format::kCloudEvents, SourceInfo{"LOG", "42", "db", "cdc", ""});
  m.Restart(true);
  std::string out = Run(m, {{3, Ev("0/100", 7, "orders"), false, true},
                            {4, Ev("0/100", 7, "orders"), true, false}});
  size_t p = 0, q;
  std::string json;
  while ((q = out.find("EVENT\n", p)) != std::string::npos) {
    json += out.substr(p, q - p);
    p = q + 6;
  }
  json += out.substr(p);
  auto v = Lines(json);
  REQUIRE(v.size() == 2);
  CHECK(v[0]["specversion"] == "1.0");
  CHECK(v[0]["id"] == "LOG-3-begin");
  CHECK(v[0]["type"] == "io.cdc.postgresql.begin");
  CHECK(v[0]["time"] == "2026-11-29T07:41:02.123456Z");
  CHECK(v[0]["data"]["status"] == "BEGIN");
  CHECK(v[1]["id"] == "LOG-4-end");
  CHECK(v[1]["type"] == "io.cdc.postgresql.end");
  CHECK(v[1]["data"]["event_count"] == 1);
}

TEST_CASE("tx markers: corrupt stored event is reported",
          "[event][tx_markers]") {
  TxMarkers m(Format::kNative, SourceInfo{});
  m.Restart(true);
  std::string out;
  Status s = m.Before(1, "{\"op\":", true, &out);
  CHECK(s.code() == Code::kCorruption);
}

}  // namespace
}  // namespace cdc::event
