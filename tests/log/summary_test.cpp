#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cdc/log/reader.h"
#include "cdc/log/segment.h"
#include "cdc/log/writer.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::log {

namespace {

void Txn(LogWriter& w, uint64_t t, Lsn lsn, size_t pad = 16) {
  REQUIRE(w.Append(test::EventLine(t, 0, pad)).ok());
  REQUIRE(w.Commit(lsn, static_cast<int64_t>(lsn) * 1000, t).ok());
}
void Keepalive(LogWriter& w, Lsn wal_end) {
  REQUIRE(w.Commit(wal_end - 1, static_cast<int64_t>(wal_end) * 1000, 0).ok());
}

nlohmann::json InfoJson(const std::string& dir) {
  std::string out;
  REQUIRE(test::RunTool(logtool::RunCli,
                        {"cdc-log", "--log", dir, "info", "--json"},
                        &out) == 0);
  return nlohmann::json::parse(out);
}

}  // namespace

TEST_CASE("summary: the last transaction and the position are reported apart",
          "[log][summary]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  {
    auto sum = Summarize(dir.path());
    REQUIRE(sum.ok());
    CHECK_FALSE(sum->has_commit);
    CHECK_FALSE(sum->position.valid);
    auto j = InfoJson(dir.path());
    CHECK(j["last_lsn"].is_null());
    CHECK(j["position"].is_null());
    CHECK(j["flush_lsn"].is_null());
  }
  auto w = LogWriter::Open(dir.path(), {});
  REQUIRE(w.ok());
  Txn(**w, 1, 0x100);
  Txn(**w, 2, 0x200);
  Keepalive(**w, 0x300);
  Keepalive(**w, 0x400);
  REQUIRE((*w)->Sync().ok());
  auto sum = Summarize(dir.path());
  REQUIRE(sum.ok());
  CHECK(sum->has_commit);
  CHECK(sum->last_lsn == 0x200);
  CHECK(sum->last_time == 0x200 * 1000);
  CHECK(sum->position.lsn == 0x3FF);
  CHECK(sum->position_time == 0x400 * 1000);
  CHECK(sum->position.FlushLsn() == 0x400);
  auto j = InfoJson(dir.path());
  CHECK(j["last_seq"] == 2);
  CHECK(j["last_lsn"] == "0/200");
  CHECK(j["last_commit"] == "1970-01-01T00:00:00.512000Z");
  CHECK(j["position"] == "0/3FF");
  CHECK(j["position_time"] == "1970-01-01T00:00:01.024000Z");
  CHECK(j["flush_lsn"] == "0/400");

  // A lone message (xid 0): a transaction of its own, and an exclusive
  // position: capture acknowledges its LSN itself.
  REQUIRE((*w)->Append(test::EventLine(3, 0)).ok());
  REQUIRE((*w)->Commit(0x500, 0x500 * 1000, 0).ok());
  REQUIRE((*w)->Sync().ok());
  j = InfoJson(dir.path());
  CHECK(j["last_lsn"] == "0/500");
  CHECK(j["position"] == "0/500");
  CHECK(j["flush_lsn"] == "0/500");

  std::string text;
  REQUIRE(test::RunTool(logtool::RunCli,
                        {"cdc-log", "--log", dir.path(), "info"}, &text) == 0);
  CHECK_THAT(text, Catch::Contains("last_lsn:       0/500\n"));
  CHECK_THAT(text, Catch::Contains("position:       0/500\n"));
  CHECK_THAT(text, Catch::Contains("flush_lsn:      0/500\n"));
}

TEST_CASE(
    "summary: the last transaction is found in an older segment when the "
    "newest holds only positions",
    "[log][summary]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  WriterOptions opts;
  opts.segment_bytes = 256;
  auto w = LogWriter::Open(dir.path(), opts);
  REQUIRE(w.ok());
  Txn(**w, 1, 0x100, 300);
  Txn(**w, 2, 0x200, 300);
  REQUIRE((*w)->Sync().ok());  // seals
  // The newest segment holds keepalive positions only (such a segment is
  // never sealed: it holds no event).
  for (Lsn l = 0x300; l <= 0xA00; l += 0x100) Keepalive(**w, l);
  REQUIRE((*w)->Sync().ok());
  auto segs = ListSegments(dir.path());
  REQUIRE(segs.ok());
  REQUIRE(segs->size() == 2);
  REQUIRE((*segs)[0].sealed);
  CHECK((*segs)[0].seal->last_lsn == 0x200);
  CHECK(test::SizeOf((*segs)[1].path) == 8 * 64);

  auto sum = Summarize(dir.path());
  REQUIRE(sum.ok());
  CHECK(sum->segments == 2);
  CHECK(sum->next_seq == 3);
  CHECK(sum->has_commit);
  CHECK(sum->last_lsn == 0x200);
  CHECK(sum->position.lsn == 0x9FF);
  CHECK(sum->position.FlushLsn() == 0xA00);

  // Only sealed segments: the newest sealed one ends with a position.
  Txn(**w, 3, 0xB00, 300);
  Keepalive(**w, 0xC00);
  REQUIRE((*w)->Sync().ok());
  sum = Summarize(dir.path());
  REQUIRE(sum.ok());
  CHECK(sum->last_lsn == 0xB00);
  CHECK(sum->position.lsn == 0xBFF);
}

}  // namespace cdc::log
