#include <catch2/catch.hpp>

#include "cdc/log/reader.h"
#include "cdc/log/scan.h"
#include "cdc/log/verify.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::log {

namespace {

// Offset of the `n`th frame (0-based) of a segment.
uint64_t FrameOffset(const std::string& path, uint64_t base, int n) {
  auto f = SegmentFile::Open(path);
  REQUIRE(f.ok());
  uint64_t found = 0;
  int i = 0;
  auto scan =
      ScanSegment(*f, *f->Size(), base, false,
                  [&](uint64_t off, const FrameHeader&, std::string_view) {
                    if (i++ == n) found = off;
                    return Status::OK();
                  });
  REQUIRE(scan.ok());
  REQUIRE(i > n);
  return found;
}

}  // namespace

TEST_CASE("a flipped byte in a sealed segment is reported, never skipped",
          "[log][corruption]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(log, 1, 40, 4, opts);  // one frame per txn, 4 events each
  auto segs = ListSegments(log);
  REQUIRE(segs.ok());
  REQUIRE(segs->size() >= 3);
  const SegmentInfo& first = (*segs)[0];
  REQUIRE(first.sealed);
  const uint64_t off = FrameOffset(first.path, 1, 2);  // seq 9-12
  test::FlipByte(first.path, off + kFrameHeaderSize + 3);
  const std::string expect =
      "corrupt frame in segments/00000000000000000001.seg at offset " +
      std::to_string(off) + " (seq 9-12): checksum mismatch";

  auto reader = LogReader::Open(log);
  REQUIRE(reader.ok());
  Batch b;
  uint64_t seen = 0;
  Status err;
  for (;;) {
    auto got = (*reader)->Next(&b);
    if (!got.ok()) {
      err = got.status();
      break;
    }
    REQUIRE(*got);
    seen += b.header.event_count;
  }
  CHECK(seen == 8);  // everything before the damage, nothing after
  CHECK(err.code() == Code::kCorruption);
  CHECK(err.message() == expect);

  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
  REQUIRE(rep->problems.size() >= 2);
  CHECK(rep->problems[0] == expect);
  CHECK_THAT(rep->problems[1], Catch::Contains("does not match its seal "
                                               "record"));
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "verify", "--log", log, "-q"}) == 1);

  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 65);
  CHECK(std::count(out.begin(), out.end(), '\n') == 8);
}

TEST_CASE("a damaged header in the middle is corruption too",
          "[log][corruption]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 10, 2);
  const std::string seg = log + "/segments/" + SegmentFileName(1);
  const uint64_t off = FrameOffset(seg, 1, 4);  // seq 9-10
  test::FlipByte(seg, off);                     // the magic
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  REQUIRE(rep->problems.size() == 1);
  CHECK(rep->problems[0] ==
        "corrupt frame in segments/00000000000000000001.seg at offset " +
            std::to_string(off) + " (seq 9-10): bad frame magic");
  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 65);
  CHECK(std::count(out.begin(), out.end(), '\n') == 8);
}

}  // namespace cdc::log
