// A reader that renders by column types (cdc-tail --format debezium) and
// a damaged LOG/schemas.ndjson: emptied, cut short, a line deleted, the
// file removed, a line added or altered. cdc-log verify names each; the
// reader fails (65) rather than print values without their types.
#include "cdc/log/schemas.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "cdc/base/fs.h"
#include "cdc/consume/reader.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/verify.h"
#include "cdc/log/writer.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::consume {

namespace {

constexpr const char* kTs = R"(,"ts":"2026-11-29T07:41:02.000000Z")";

// numeric(10,2): atttypmod ((10 << 16) | 2) + 4.
std::string Schema(uint64_t lsn, const char* table, const char* total_type) {
  return R"({"lsn":"0/)" + std::to_string(lsn) + R"(","xid":)" +
         std::to_string(lsn) + kTs +
         R"(,"op":"s","schema":"public","table":")" + table +
         R"(","key":null,"before":null,"after":null,"columns":[)"
         R"({"name":"id","type_oid":23,"key":true},)"
         R"({"name":"total","type_oid":)" +
         total_type + R"(,"type_mod":655366,"key":false}]})";
}

std::string Row(uint64_t lsn, const char* table, int id) {
  return R"({"lsn":"0/)" + std::to_string(lsn) + R"(","xid":)" +
         std::to_string(lsn) + kTs +
         R"(,"op":"c","schema":"public","table":")" + table +
         R"(","key":{"id":)" + std::to_string(id) +
         R"(},"before":null,"after":{"id":)" + std::to_string(id) +
         R"(,"total":"12.50"}})";
}

// seq 1 schema of orders, 2 a row; 3 schema of items, 4 a row; 5 and 6
// rows of both.
void MakeLog(const std::string& dir, bool captured) {
  std::optional<log::SourceIdentity> source;
  if (captured)
    source =
        log::SourceIdentity{"7300000000000000001", "shop", "cdc", "cdc", "", 0};
  REQUIRE(log::CreateLog(dir, source).ok());
  auto w = log::LogWriter::Open(dir, {});
  REQUIRE(w.ok());
  REQUIRE((*w)->AppendSchema(Schema(16, "orders", "1700")).ok());
  REQUIRE((*w)->Append(Row(16, "orders", 1)).ok());
  REQUIRE((*w)->Commit(16, 0, 16).ok());
  REQUIRE((*w)->AppendSchema(Schema(32, "items", "1700")).ok());
  REQUIRE((*w)->Append(Row(32, "items", 1)).ok());
  REQUIRE((*w)->Commit(32, 0, 32).ok());
  REQUIRE((*w)->Append(Row(48, "orders", 2)).ok());
  REQUIRE((*w)->Append(Row(48, "items", 2)).ok());
  REQUIRE((*w)->Commit(48, 0, 48).ok());
  REQUIRE((*w)->Sync().ok());
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("a damaged schema file fails verify and a typed reader",
          "[consume][schemas][corruption]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  MakeLog(log, /*captured=*/true);
  const std::string path = log::SchemasPath(log);
  auto text = ReadFileToString(path);
  REQUIRE(text.ok());
  const std::string line1 = text->substr(0, text->find('\n') + 1);
  const std::string line3 = text->substr(line1.size());
  std::string out;
  auto tail = [&](const char* from) {
    return test::RunTool(
        tail::RunCli,
        {"cdc-tail", "--log", log, "--format", "debezium", "--from", from},
        &out);
  };
  auto problems = [&] {
    auto rep = log::VerifyLog(log);
    REQUIRE(rep.ok());
    CHECK(test::RunTool(logtool::RunCli,
                        {"cdc-log", "verify", "--log", log, "-q"}) ==
          (rep->problems.empty() ? 0 : 1));
    return rep->problems;
  };
  using Problems = std::vector<std::string>;

  // Undamaged: from seq 5 the types come from the file alone.
  REQUIRE(problems().empty());
  REQUIRE(tail("5") == 0);
  CHECK_THAT(out, Catch::Contains(R"("after":{"id":2,"total":"BOI="})"));

  SECTION("emptied") {
    WriteText(path, "");
    CHECK(problems() == Problems{"schemas.ndjson has no line for 2 of the "
                                 "log's schema events (seq 1, 3)"});
    CHECK(tail("5") == 65);
    CHECK(out.empty());
  }
  SECTION("cut short") {
    test::TruncateFile(path, text->size() - 10);
    CHECK(problems() ==
          Problems{"schemas.ndjson has no line for 1 of the log's schema "
                   "events (seq 3); its last line is cut short"});
    CHECK(tail("5") == 65);
  }
  SECTION("a line deleted") {
    WriteText(path, line3);
    CHECK(problems() == Problems{"schemas.ndjson has no line for 1 of the "
                                 "log's schema events (seq 1)"});
    CHECK(tail("5") == 65);
  }
  SECTION("removed") {
    REQUIRE(unlink(path.c_str()) == 0);
    CHECK(problems() == Problems{"schemas.ndjson is missing, but the log "
                                 "holds 2 schema events (seq 1, 3)"});
    CHECK(tail("5") == 65);
  }
  SECTION("a line added") {
    // Seq 2 is a row: a line there would retype orders' totals as text.
    WriteText(path,
              line1 + log::SchemaLine(2, Schema(16, "orders", "25")) + line3);
    CHECK(problems() == Problems{"schemas.ndjson: lines of seq 2 are extra "
                                 "(the log's events there are not schema "
                                 "events)"});
    CHECK(tail("5") == 65);
  }
  SECTION("a line altered") {
    std::string altered = *text;
    altered.replace(altered.find("1700"), 4, "25");
    WriteText(path, altered);
    CHECK(problems() == Problems{"schemas.ndjson: the line of seq 1 is not "
                                 "the log's event at that seq"});
    CHECK(tail("5") == 65);
  }
  SECTION("a reader from the start learns from the events themselves") {
    REQUIRE(unlink(path.c_str()) == 0);
    CHECK(tail("1") == 0);
    CHECK_THAT(out, Catch::Contains(R"("after":{"id":2,"total":"BOI="})"));
  }
}

TEST_CASE("an imported log need not announce its tables",
          "[consume][schemas]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  MakeLog(log, /*captured=*/false);
  REQUIRE(unlink(log::SchemasPath(log).c_str()) == 0);
  // Events imported from anywhere may carry no schema events at all: their
  // values are printed as stored.
  std::string out;
  CHECK(test::RunTool(
            tail::RunCli,
            {"cdc-tail", "--log", log, "--format", "debezium", "--from", "5"},
            &out) == 0);
  CHECK_THAT(out, Catch::Contains(R"("after":{"id":2,"total":"12.50"})"));
}

TEST_CASE("the schema lines a reader relies on are checked against the log",
          "[consume][schemas]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  MakeLog(log, /*captured=*/true);
  std::vector<std::string> learned;
  auto learn = [&](std::string_view s) { learned.emplace_back(s); };
  REQUIRE(LearnSchemas(log, 5, learn).ok());
  CHECK(learned == std::vector<std::string>{Schema(16, "orders", "1700"),
                                            Schema(32, "items", "1700")});
  learned.clear();
  REQUIRE(LearnSchemas(log, 3, learn).ok());
  CHECK(learned.size() == 1);
  // A line that is no schema event at all.
  WriteText(log::SchemasPath(log), log::SchemaLine(2, Row(16, "orders", 1)));
  auto s = LearnSchemas(log, 5, learn);
  CHECK(s.code() == Code::kCorruption);
  CHECK_THAT(s.message(),
             Catch::EndsWith("schemas.ndjson: the line of seq 2 is not a "
                             "schema event"));
}

}  // namespace cdc::consume
