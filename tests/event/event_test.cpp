#include "cdc/event/event.h"

#include <catch2/catch.hpp>

namespace cdc::event {

TEST_CASE("import accepts a valid event and stores it canonically", "[event]") {
  auto ev = ParseImportLine(
      R"({"after":{"id":7},"seq":99,"op":"u","table":"orders","xid":750,)"
      R"("schema":"public","lsn":"0/1634f28","ts":"2026-11-29T08:41:02.1+01:00",)"
      R"("key":{"id":7},"before":null,"last":true})");
  REQUIRE(ev.ok());
  CHECK(ev->stored ==
        R"({"lsn":"0/1634F28","xid":750,"ts":"2026-11-29T07:41:02.100000Z",)"
        R"("op":"u","schema":"public","table":"orders","after":{"id":7},)"
        R"("key":{"id":7},"before":null})");
  CHECK(ev->lsn == 0x1634F28);
  CHECK(ev->xid == 750);
}

TEST_CASE("import rejects bad lines with a reason", "[event]") {
  struct Case {
    const char* line;
    const char* reason;
  };
  const Case cases[] = {
      {"{not json", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"xid":1,"ts":"2026-11-29T00:00:00Z","op":"c"})", "missing \"lsn\""},
      {R"({"lsn":"zz","xid":1,"ts":"2026-11-29T00:00:00Z","op":"c"})",
       "invalid LSN"},
      {R"({"lsn":"0/1","xid":-1,"ts":"2026-11-29T00:00:00Z","op":"c"})",
       "\"xid\" must be an integer >= 0"},
      {R"({"lsn":"0/1","xid":1,"ts":"noon","op":"c"})", "\"ts\""},
      {R"({"lsn":"0/1","xid":1,"ts":"2026-11-29T00:00:00Z","op":"x"})",
       "\"op\" must be one of"},
      {R"({"lsn":"0/1","xid":1,"ts":"2026-11-29T00:00:00Z","op":"c"})",
       "missing \"schema\""},
      {R"({"lsn":"0/1","xid":1,"ts":"2026-11-29T00:00:00Z","op":"c",)"
       R"("schema":"s","table":"t","after":[1]})",
       "\"after\" must be an object or null"},
  };
  for (const auto& c : cases) {
    auto ev = ParseImportLine(c.line);
    INFO(c.line);
    REQUIRE_FALSE(ev.ok());
    CHECK(ev.status().code() == Code::kBadInput);
    CHECK_THAT(ev.status().message(), Catch::Contains(c.reason));
  }
}

TEST_CASE("native pieces are the native line", "[event]") {
  const std::string stored = R"({"lsn":"0/1","xid":1,"op":"m"})";
  for (bool last : {false, true}) {
    for (uint64_t seq : {uint64_t{1}, uint64_t{18446744073709551615u}}) {
      std::string whole;
      AppendNative(seq, stored, last, &whole);
      char scratch[32];
      NativePieces p = SplitNative(seq, stored, last, scratch);
      CHECK(std::string(p.head) + std::string(p.body) + std::string(p.tail) ==
            whole);
      CHECK(p.body.data() > stored.data());  // not copied
    }
  }
}

TEST_CASE("native rendering adds seq first and last at the end", "[event]") {
  std::string out;
  AppendNative(42, R"({"lsn":"0/1","xid":1})", false, &out);
  AppendNative(43, R"({"lsn":"0/1","xid":1})", true, &out);
  CHECK(out ==
        "{\"seq\":42,\"lsn\":\"0/1\",\"xid\":1}\n"
        "{\"seq\":43,\"lsn\":\"0/1\",\"xid\":1,\"last\":true}\n");
}

TEST_CASE("the head of a stored event is read without a full parse",
          "[event]") {
  EventHead h;
  REQUIRE(ParseHead(R"({"lsn":"0/5","xid":9,"ts":"T","op":"d","schema":)"
                    R"("a\"b","table":"t","key":{}})",
                    &h));
  CHECK(h.lsn == "0/5");
  CHECK(h.xid == 9);
  CHECK(h.op == "d");
  CHECK(h.schema == "a\"b");
  CHECK(h.table == "t");
  EventHead m;
  REQUIRE(
      ParseHead(R"({"lsn":"0/5","xid":9,"ts":"T","op":"m","prefix":"p"})", &m));
  CHECK(m.op == "m");
  CHECK(m.table.empty());
  CHECK_FALSE(ParseHead(R"({"op":"c"})", &h));
}

TEST_CASE("ScanHead reads the stored head as views, or declines", "[event]") {
  HeadView v;
  const std::string c =
      R"({"lsn":"0/5","xid":9,"ts":"T","op":"c","schema":"s","table":"t",)"
      R"("key":{}})";
  REQUIRE(ScanHead(c, &v));
  CHECK(v.lsn == "0/5");
  CHECK(v.xid == 9);
  CHECK(v.ts == "T");
  CHECK(v.op == "c");
  CHECK(v.schema == "s");
  CHECK(v.table == "t");
  CHECK(c.substr(v.end, 7) == ",\"key\":");
  const std::string m =
      R"({"lsn":"0/5","xid":0,"ts":"T","op":"m","prefix":"p"})";
  REQUIRE(ScanHead(m, &v));
  CHECK(v.op == "m");
  CHECK(v.table.empty());
  CHECK(m.substr(v.end, 10) == ",\"prefix\":");
  // An escape, another key order, a cut line: ParseHead's to read.
  CHECK_FALSE(ScanHead(R"({"lsn":"0/5","xid":9,"ts":"T","op":"d","schema":)"
                       R"("a\"b","table":"t"})",
                       &v));
  CHECK_FALSE(ScanHead(R"({"xid":9,"lsn":"0/5","ts":"T","op":"d"})", &v));
  CHECK_FALSE(ScanHead(R"({"lsn":"0/5","xid":9,"ts":"T","op":"d)", &v));
  CHECK_FALSE(ScanHead(R"({"lsn":"0/5","xid":)", &v));
  CHECK_FALSE(ScanHead("", &v));
}

}  // namespace cdc::event
