// What the metadata of a log says is checked: seal records field by field,
// and a log whose log.json is gone is not adopted as a new one.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "cdc/log/segment.h"
#include "cdc/log/verify.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::log {

namespace {

void EditSeal(const std::string& segment_path, const char* key,
              const nlohmann::json& value) {
  const std::string path = SealRecordPath(segment_path);
  std::ifstream in(path);
  auto j = nlohmann::ordered_json::parse(in);
  in.close();
  j[key] = value;
  std::ofstream(path) << j.dump() << "\n";
}

}  // namespace

TEST_CASE("verify checks every field of a seal record",
          "[log][corruption][verify]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = test::WriteSmallSegments(log, 40, 4);
  REQUIRE(segs.ok());
  REQUIRE(segs->size() >= 3);
  const SegmentInfo& s = (*segs)[1];
  REQUIRE(s.seal);
  const SealRecord r = *s.seal;
  std::string expect;
  SECTION("last_lsn edited to 0/1, before first_lsn") {
    EditSeal(s.path, "last_lsn", "0/1");
    expect = "unreadable seal record " + s.name.substr(0, s.name.size() - 4) +
             ".sealed: last_lsn is before first_lsn";
  }
  SECTION("last_lsn edited to first_lsn") {
    EditSeal(s.path, "last_lsn", FormatLsn(r.first_lsn));
    expect = s.name + ": seal record says last_lsn " + FormatLsn(r.first_lsn) +
             ", the segment has " + FormatLsn(r.last_lsn);
  }
  SECTION("first_lsn") {
    EditSeal(s.path, "first_lsn", "0/0");
    expect = s.name + ": seal record says first_lsn 0/0, the segment has " +
             FormatLsn(r.first_lsn);
  }
  SECTION("first_time_us") {
    EditSeal(s.path, "first_time_us", r.first_time - 1);
    expect = s.name + ": seal record says first_time_us " +
             std::to_string(r.first_time - 1) + ", the segment has " +
             std::to_string(r.first_time);
  }
  SECTION("last_time_us") {
    EditSeal(s.path, "last_time_us", 0);
    expect = s.name + ": seal record says last_time_us 0, the segment has " +
             std::to_string(r.last_time);
  }
  SECTION("first_seq") {
    EditSeal(s.path, "first_seq", r.first_seq + 1);
    expect = s.name + ": seal record says first_seq " +
             std::to_string(r.first_seq + 1) + ", the segment has " +
             std::to_string(s.base_seq) + " (its name)";
  }
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
  CHECK(std::find(rep->problems.begin(), rep->problems.end(), expect) !=
        rep->problems.end());
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "verify", "--log", log, "-q"}) == 1);
}

TEST_CASE("a directory holding segments but no log.json is not adopted",
          "[log][recovery]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 5, 2);
  REQUIRE(std::filesystem::remove(log + "/log.json"));
  const auto size = test::SizeOf(log + "/segments/" + SegmentFileName(1));
  auto id = OpenOrCreateLog(log);
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().code() == Code::kCannotCreate);
  CHECK(id.status().message() ==
        "cannot create a log in " + log +
            ": it holds segments but no log.json (found "
            "segments/00000000000000000001.seg); restore log.json or move "
            "the segments away");
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "import", "--log", log, "-q"}) == 73);
  CHECK_FALSE(std::filesystem::exists(log + "/log.json"));
  CHECK(test::SizeOf(log + "/segments/" + SegmentFileName(1)) == size);

  // What an interrupted creation leaves (an empty first segment) is adopted.
  const std::string fresh = dir.sub("fresh");
  std::filesystem::create_directories(fresh + "/segments");
  std::ofstream(fresh + "/segments/" + SegmentFileName(1)).close();
  CHECK(OpenOrCreateLog(fresh).ok());
}

}  // namespace cdc::log

namespace cdc::log {

TEST_CASE("a seek by LSN does not skip a segment on an edited seal record",
          "[log][corruption][seek]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = test::WriteSmallSegments(log, 40, 4);
  REQUIRE(segs.ok());
  REQUIRE(segs->size() >= 3);
  const SegmentInfo& s = (*segs)[1];
  REQUIRE(s.seal);
  const Lsn target = s.seal->last_lsn;  // the last commit of segment 1
  auto before = LogReader::Open(log);
  REQUIRE(before.ok());
  REQUIRE((*before)->SeekLsn(target).ok());
  const uint64_t want = (*before)->next_seq();
  CHECK(want < s.seal->end_seq);  // the seek lands in segment 1

  // Plausible (not before first_lsn) but wrong: only the frames tell.
  REQUIRE(s.seal->first_lsn < target);
  EditSeal(s.path, "last_lsn", FormatLsn(s.seal->first_lsn));
  auto r = LogReader::Open(log);
  REQUIRE(r.ok());
  Status st = (*r)->SeekLsn(target);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == Code::kCorruption);
  CHECK_THAT(st.message(),
             Catch::StartsWith("the seal record of " + s.name +
                               " does not match its frames (its last commit "
                               "is at " +
                               FormatLsn(target)));
}

}  // namespace cdc::log
