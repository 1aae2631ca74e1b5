#include "cdc/log/schemas.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <mutex>

#include "cdc/base/fs.h"
#include "cdc/log/reader.h"
#include "cdc/log/retention.h"
#include "cdc/log/verify.h"
#include "cdc/log/writer.h"
#include "test_util.h"

namespace cdc::log {

namespace {

std::string Schema(const char* table, const char* type_oid) {
  return std::string(R"({"lsn":"0/10","xid":1,"ts":"2026-11-29T07:41:02Z",)") +
         R"("op":"s","schema":"public","table":")" + table +
         R"(","key":null,"before":null,"after":null,"columns":[{"name":"id",)" +
         R"("type_oid":)" + type_oid + R"(,"key":true}]})";
}

std::string FileText(const std::string& dir) {
  auto t = ReadFileToString(SchemasPath(dir), 1 << 20);
  return t.ok() ? *t : "";
}

void AppendRaw(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::app | std::ios::binary);
  f << bytes;
}

}  // namespace

TEST_CASE("schema events are recorded with their seqs, byte for byte",
          "[log][schemas]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  // No file until the first schema event.
  auto none = ReadSchemas(dir.path());
  REQUIRE(none.ok());
  CHECK(none->empty());
  {
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
    REQUIRE((*w)->AppendSchema(Schema("a", "23")).ok());
    REQUIRE((*w)->Append(test::EventLine(1, 1)).ok());
    REQUIRE((*w)->Commit(0x10, 0, 1).ok());
    REQUIRE((*w)->AppendSchema(Schema("b", "25")).ok());
    REQUIRE((*w)->Commit(0x20, 0, 2).ok());
    REQUIRE((*w)->Sync().ok());
  }
  CHECK(FileText(dir.path()) == "{\"seq\":2," + Schema("a", "23").substr(1) +
                                    "\n" + "{\"seq\":4," +
                                    Schema("b", "25").substr(1) + "\n");
  auto got = ReadSchemas(dir.path());
  REQUIRE(got.ok());
  REQUIRE(got->size() == 2);
  CHECK((*got)[0].seq == 2);
  CHECK((*got)[0].stored == Schema("a", "23"));
  CHECK((*got)[1].seq == 4);
  CHECK((*got)[1].stored == Schema("b", "25"));
  // The events are in the log as well, at those seqs.
  auto all = test::ReadAll(dir.path());
  REQUIRE(all.seqs.size() == 4);
  CHECK(all.lines[1].find("\"table\":\"a\"") != std::string::npos);
  CHECK(all.lines[3].find("\"table\":\"b\"") != std::string::npos);
}

TEST_CASE(
    "a transaction's schema lines are synced once, before its commit can be",
    "[log][schemas][durability]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  // Each fdatasync, in order: which file, and its size then.
  std::mutex mu;
  std::vector<std::string> syncs;
  bool fail_schemas = false;
  WriterOptions opts;
  opts.sync_file = [&](int fd, const std::string& path) -> Status {
    const bool schemas = path == SchemasPath(dir.path());
    {
      std::lock_guard<std::mutex> lk(mu);
      syncs.push_back((schemas ? "schemas " : "segment ") +
                      std::to_string(lseek(fd, 0, SEEK_END)));
      if (schemas && fail_schemas)
        return Status::IOError("cannot fsync " + path + ": Input/output error");
    }
    return SyncFile(fd, path);
  };
  auto w = LogWriter::Open(dir.path(), opts);
  REQUIRE(w.ok());
  REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
  REQUIRE((*w)->AppendSchema(Schema("a", "23")).ok());
  REQUIRE((*w)->AppendSchema(Schema("b", "25")).ok());
  REQUIRE((*w)->Append(test::EventLine(1, 1)).ok());
  {
    std::lock_guard<std::mutex> lk(mu);
    CHECK(syncs.empty());  // the lines wait for the commit
  }
  REQUIRE((*w)->Commit(0x10, 0, 1).ok());
  REQUIRE((*w)->Sync().ok());
  CHECK((*w)->durable_lsn() == 0x10);
  const std::string both =
      "schemas " + std::to_string(FileText(dir.path()).size());
  {
    std::lock_guard<std::mutex> lk(mu);
    // One sync of the file with both lines, before the segment's.
    REQUIRE(syncs.size() >= 2);
    CHECK(syncs[0] == both);
    CHECK(std::count(syncs.begin(), syncs.end(), both) == 1);
    CHECK(syncs.back().rfind("segment ", 0) == 0);
    syncs.clear();
    fail_schemas = true;
  }
  // A transaction without schema events syncs no schema line.
  REQUIRE((*w)->Append(test::EventLine(2, 0)).ok());
  REQUIRE((*w)->Commit(0x20, 0, 2).ok());
  REQUIRE((*w)->Sync().ok());
  {
    std::lock_guard<std::mutex> lk(mu);
    for (const std::string& s : syncs) CHECK(s.rfind("segment ", 0) == 0);
  }
  // A failed sync of the schema lines fails the commit and the writer:
  // nothing of the transaction becomes durable.
  REQUIRE((*w)->AppendSchema(Schema("c", "20")).ok());
  Status s = (*w)->Commit(0x30, 0, 3);
  CHECK(s.code() == Code::kIOError);
  CHECK((*w)->Sync().code() == Code::kIOError);
  CHECK((*w)->durable_lsn() == 0x20);
  CHECK((*w)->Append(test::EventLine(4, 0)).code() == Code::kIOError);
}

TEST_CASE("an aborted schema event leaves no line", "[log][schemas]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  auto w = LogWriter::Open(dir.path(), {});
  REQUIRE(w.ok());
  REQUIRE((*w)->AppendSchema(Schema("a", "23")).ok());
  REQUIRE((*w)->Commit(0x10, 0, 1).ok());
  REQUIRE((*w)->AppendSchema(Schema("b", "25")).ok());
  REQUIRE((*w)->Append(test::EventLine(2, 0)).ok());
  REQUIRE((*w)->AppendSchema(Schema("c", "25")).ok());
  REQUIRE((*w)->Abort().ok());
  // Seq 2 now goes to another schema event, not to "b".
  REQUIRE((*w)->AppendSchema(Schema("d", "20")).ok());
  REQUIRE((*w)->Commit(0x30, 0, 3).ok());
  REQUIRE((*w)->Sync().ok());
  auto got = ReadSchemas(dir.path());
  REQUIRE(got.ok());
  REQUIRE(got->size() == 2);
  CHECK((*got)[0].seq == 1);
  CHECK((*got)[1].seq == 2);
  CHECK((*got)[1].stored == Schema("d", "20"));
}

TEST_CASE(
    "lines of events that never became durable, and a torn line, are cut on "
    "open",
    "[log][schemas][recovery]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  {
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    REQUIRE((*w)->AppendSchema(Schema("a", "23")).ok());
    REQUIRE((*w)->Commit(0x10, 0, 1).ok());
    REQUIRE((*w)->Sync().ok());
  }
  const std::string kept = FileText(dir.path());
  // A crash after the line of seq 2 was synced, before its frame was; and
  // one in the middle of writing the next line.
  AppendRaw(SchemasPath(dir.path()), SchemaLine(2, Schema("b", "25")));
  AppendRaw(SchemasPath(dir.path()), "{\"seq\":3,\"lsn\":\"0/3");
  {
    // A reader ignores the torn line; the writer cuts both.
    auto got = ReadSchemas(dir.path());
    REQUIRE(got.ok());
    CHECK(got->size() == 2);
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    CHECK((*w)->next_seq() == 2);
  }
  CHECK(FileText(dir.path()) == kept);
}

TEST_CASE("verify checks each schema line against the event at its seq",
          "[log][schemas][corruption]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  {
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
    REQUIRE((*w)->AppendSchema(Schema("a", "23")).ok());
    REQUIRE((*w)->Commit(0x10, 0, 1).ok());
    REQUIRE((*w)->Sync().ok());
  }
  auto clean = VerifyLog(dir.path());
  REQUIRE(clean.ok());
  CHECK(clean->ok());
  CHECK(clean->notes.empty());
  // A line beyond the log's end is a note (the next writer cuts it).
  AppendRaw(SchemasPath(dir.path()), SchemaLine(3, Schema("b", "25")));
  auto beyond = VerifyLog(dir.path());
  REQUIRE(beyond.ok());
  CHECK(beyond->ok());
  REQUIRE(beyond->notes.size() == 1);
  CHECK_THAT(beyond->notes[0], Catch::Contains("1 lines from seq 3 beyond"));
  // One flipped byte in the line of seq 2, inside its type OID.
  const std::string text = FileText(dir.path());
  test::FlipByte(SchemasPath(dir.path()), text.find("\"type_oid\":23") + 11);
  auto flipped = VerifyLog(dir.path());
  REQUIRE(flipped.ok());
  REQUIRE(flipped->problems.size() == 1);
  CHECK(flipped->problems[0] ==
        "schemas.ndjson: the line of seq 2 is not the log's event at that seq");
}

TEST_CASE("verify holds the schema file to the retained segments",
          "[log][schemas][retention]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  {
    WriterOptions o;
    o.segment_bytes = 2048;
    auto w = LogWriter::Open(dir.path(), o);
    REQUIRE(w.ok());
    REQUIRE((*w)->AppendSchema(Schema("a", "23")).ok());
    REQUIRE((*w)->Commit(0x10, 0, 1).ok());
    for (uint64_t t = 2; t < 40; ++t) {
      REQUIRE((*w)->Append(test::EventLine(t, 0, 100)).ok());
      REQUIRE((*w)->Commit(t * 16, 0, t).ok());
      REQUIRE((*w)->Sync().ok());  // segments seal at a sync
    }
    REQUIRE((*w)->AppendSchema(Schema("b", "25")).ok());
    REQUIRE((*w)->Commit(40 * 16, 0, 40).ok());
    REQUIRE((*w)->Sync().ok());
  }
  RetentionPolicy keep;
  keep.max_segments = 1;
  auto res = ApplyRetention(dir.path(), keep, 0, false);
  REQUIRE(res.ok());
  REQUIRE(res->first_seq > 1);
  REQUIRE(res->first_seq <= 40);
  // The line of seq 1 outlives its segment: it is how a reader starting
  // later knows "a"; only its form is left to check.
  auto rep = VerifyLog(dir.path());
  REQUIRE(rep.ok());
  CHECK(rep->problems.empty());
  const std::string line40 = SchemaLine(40, Schema("b", "25"));
  test::TruncateFile(SchemasPath(dir.path()), 0);
  AppendRaw(SchemasPath(dir.path()),
            SchemaLine(1, test::EventLine(1, 0)) + line40);
  rep = VerifyLog(dir.path());
  REQUIRE(rep.ok());
  CHECK(rep->problems ==
        std::vector<std::string>{
            "schemas.ndjson: lines of seq 1 are not schema events"});
  // A schema event of the retained segments needs its line.
  test::TruncateFile(SchemasPath(dir.path()), 0);
  AppendRaw(SchemasPath(dir.path()), SchemaLine(1, Schema("a", "23")));
  rep = VerifyLog(dir.path());
  REQUIRE(rep.ok());
  CHECK(rep->problems ==
        std::vector<std::string>{"schemas.ndjson has no line for 1 of the "
                                 "log's schema events (seq 40)"});
}

TEST_CASE("a schema file that is not ours fails loudly", "[log][schemas]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  SECTION("a line without its seq") {
    AppendRaw(SchemasPath(dir.path()),
              SchemaLine(1, Schema("a", "23")) + Schema("b", "25") + "\n");
    auto got = ReadSchemas(dir.path());
    CHECK(got.status().code() == Code::kCorruption);
    CHECK_THAT(got.status().message(),
               Catch::Contains("schemas.ndjson line 2: no leading \"seq\""));
    CHECK(LogWriter::Open(dir.path(), {}).status().code() == Code::kCorruption);
  }
  SECTION("seqs out of order") {
    AppendRaw(SchemasPath(dir.path()), SchemaLine(5, Schema("a", "23")) +
                                           SchemaLine(3, Schema("b", "25")));
    auto got = ReadSchemas(dir.path());
    CHECK(got.status().code() == Code::kCorruption);
    CHECK_THAT(got.status().message(), Catch::Contains("seq 3 after seq 5"));
  }
  SECTION("a planted symlink") {
    AppendRaw(dir.sub("elsewhere"), SchemaLine(1, Schema("a", "23")));
    REQUIRE(::symlink(dir.sub("elsewhere").c_str(),
                      SchemasPath(dir.path()).c_str()) == 0);
    auto got = ReadSchemas(dir.path());
    CHECK(got.status().code() == Code::kCorruption);
    CHECK(LogWriter::Open(dir.path(), {}).status().code() == Code::kCorruption);
  }
}

}  // namespace cdc::log
