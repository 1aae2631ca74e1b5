// A reader knows where the log ends: damage to a sealed segment, or a
// segment missing between two others, is corruption for every reader and
// for the writer, never the end of the log.
#include <catch2/catch.hpp>
#include <filesystem>

#include "cdc/log/reader.h"
#include "cdc/log/scan.h"
#include "cdc/log/verify.h"
#include "cdc/log/writer.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::log {

namespace {

// 40 transactions of 4 events, one frame each (740 bytes), three frames to
// a segment: segments 1, 13, 25, ... 157, all but the last sealed.
std::vector<SegmentInfo> MakeLog(const std::string& log, size_t pad = 16) {
  WriterOptions opts;
  opts.segment_bytes = 2048;
  REQUIRE(OpenOrCreateLog(log).ok());
  {
    auto w = LogWriter::Open(log, opts);
    REQUIRE(w.ok());
    for (uint64_t t = 1; t <= 40; ++t) {
      for (uint64_t i = 0; i < 4; ++i)
        REQUIRE((*w)->Append(test::EventLine(t, i, pad)).ok());
      REQUIRE((*w)->Commit(t * 16, 1764402062000000 + int64_t(t), t).ok());
      REQUIRE((*w)->Sync().ok());  // a segment seals at the first sync >= 2 KiB
    }
  }
  auto segs = ListSegments(log);
  REQUIRE(segs.ok());
  if (pad != 16) return *segs;
  REQUIRE(segs->size() == 14);
  REQUIRE((*segs)[1].base_seq == 13);
  REQUIRE((*segs)[2].base_seq == 25);
  REQUIRE(test::SizeOf((*segs)[1].path) == 3 * 740);
  return *segs;
}

struct ReadOutcome {
  uint64_t events = 0;
  Status status;  // OK when the reader reached the end
};

ReadOutcome ReadToEnd(const std::string& log) {
  ReadOutcome r;
  auto reader = LogReader::Open(log);
  REQUIRE(reader.ok());
  Batch b;
  for (;;) {
    auto got = (*reader)->Next(&b);
    if (!got.ok()) {
      r.status = got.status();
      return r;
    }
    if (!*got) return r;
    b.ForEach([&](uint64_t, std::string_view, bool) { ++r.events; });
  }
}

// Everything a reader or the writer does with the damaged log.
void CheckRefused(const std::string& log, uint64_t readable,
                  const std::string& reader_error,
                  const std::string& writer_error) {
  ReadOutcome r = ReadToEnd(log);
  CHECK(r.events == readable);
  CHECK(r.status.code() == Code::kCorruption);
  CHECK(r.status.message() == reader_error);

  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 65);
  CHECK(static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n')) ==
        readable);
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "verify", "--log", log, "-q"}) == 1);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());

  // The writer refuses to append after the damage (import and capture).
  auto w = LogWriter::Open(log, {});
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == Code::kCorruption);
  CHECK(w.status().message() == writer_error);
}

uint64_t FrameOffsetOf(const std::string& path, uint64_t base, int n) {
  auto f = SegmentFile::Open(path);
  REQUIRE(f.ok());
  uint64_t found = UINT64_MAX;
  int i = 0;
  auto scan =
      ScanSegment(*f, *f->Size(), base, false,
                  [&](uint64_t off, const FrameHeader&, std::string_view) {
                    if (i++ == n) found = off;
                    return Status::OK();
                  });
  REQUIRE(scan.ok());
  REQUIRE(found != UINT64_MAX);
  return found;
}

void XorByte(const std::string& path, uint64_t offset, unsigned char mask) {
  FILE* f = fopen(path.c_str(), "r+b");
  REQUIRE(f != nullptr);
  REQUIRE(fseek(f, static_cast<long>(offset), SEEK_SET) == 0);
  int c = fgetc(f);
  REQUIRE(c != EOF);
  REQUIRE(fseek(f, static_cast<long>(offset), SEEK_SET) == 0);
  fputc(c ^ mask, f);
  fclose(f);
}

}  // namespace

TEST_CASE("a segment missing in the middle is corruption, not the end",
          "[log][corruption][reader]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = MakeLog(log);
  const auto size_before = test::SizeOf(segs.back().path);
  SECTION("the segment file alone") { std::filesystem::remove(segs[2].path); }
  SECTION("the segment and its seal record") {
    std::filesystem::remove(segs[2].path);
    std::filesystem::remove(SealRecordPath(segs[2].path));
  }
  const std::string msg =
      "seq 25-36 are missing: segments/00000000000000000013.seg ends at seq "
      "24 (seal record segments/00000000000000000013.sealed) and the next "
      "segment is segments/00000000000000000037.seg";
  CheckRefused(log, 24, msg, msg);
  CHECK(test::SizeOf(segs.back().path) == size_before);
  // Import is refused the same way, and leaves the log as it was.
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "import", "--log", log, "-q"}) == 65);
  CHECK(test::SizeOf(segs.back().path) == size_before);
  // cdc-log info does not present the damaged log as whole either.
  CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "info", "--log", log}) ==
        65);
}

TEST_CASE("a sealed segment cut at a transaction end is corruption",
          "[log][corruption][reader]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = MakeLog(log);
  test::TruncateFile(segs[1].path, 2 * 740);
  CheckRefused(log, 20,
               "segments/00000000000000000013.seg is truncated: 1480 bytes, "
               "its seal record says 2220 (seq 21-24 are lost)",
               "segments/00000000000000000013.seg is 1480 bytes, its seal "
               "record segments/00000000000000000013.sealed says 2220 "
               "(truncated)");
}

TEST_CASE("a sealed segment cut inside a frame is corruption",
          "[log][corruption][reader]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = MakeLog(log);
  test::TruncateFile(segs[1].path, 2 * 740 + 100);
  CheckRefused(log, 20,
               "corrupt frame in segments/00000000000000000013.seg at offset "
               "1480 (seq 21-24): frame runs past the end of the sealed "
               "segment",
               "segments/00000000000000000013.seg is 1580 bytes, its seal "
               "record segments/00000000000000000013.sealed says 2220 "
               "(truncated)");
}

TEST_CASE("a flipped bit in a sealed frame's length field is corruption",
          "[log][corruption][reader]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  std::string detail;
  std::vector<SegmentInfo> segs;
  SECTION("a compressed frame now runs past the end of its segment") {
    segs = MakeLog(log, 400);  // 4 events of ~500 bytes: zstd frames
    detail = "frame runs past the end of the sealed segment";
  }
  SECTION("a stored frame's lengths now disagree") {
    segs = MakeLog(log);
    detail = "impossible frame header fields";
  }
  // The second frame (one transaction) of the second segment.
  const uint64_t base = segs[1].base_seq, first = base + 4, txn = first / 4 + 1;
  const uint64_t off = FrameOffsetOf(segs[1].path, base, 1);
  XorByte(segs[1].path, off + 22, 0x01);  // payload length + 64 KiB
  ReadOutcome r = ReadToEnd(log);
  CHECK(r.events == first - 1);
  CHECK(r.status.code() == Code::kCorruption);
  CHECK(r.status.message() == "corrupt frame in " + segs[1].name +
                                  " at offset " + std::to_string(off) +
                                  " (seq " + std::to_string(first) + "-" +
                                  std::to_string(first + 3) + "): " + detail);
  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 65);
  CHECK(static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n')) ==
        first - 1);
  // Seeking into the damaged segment by LSN fails too, rather than
  // passing over the damage to a later transaction.
  CHECK(test::RunTool(
            tail::RunCli,
            {"cdc-tail", "--log", log, "--from", "lsn:" + FormatLsn(txn * 16)},
            &out) == 65);
  CHECK(out.empty());
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "verify", "--log", log, "-q"}) == 1);
}

TEST_CASE("an unreadable seal record is corruption, not a record to rebuild",
          "[log][corruption][reader]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = MakeLog(log);
  const std::string rec = SealRecordPath(segs[1].path);
  {
    FILE* f = fopen(rec.c_str(), "w");
    fputs("{\"sha256\":", f);
    fclose(f);
  }
  const std::string msg =
      "unreadable seal record segments/00000000000000000013.sealed: not "
      "valid JSON";
  CheckRefused(log, 24, msg, msg);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(std::find(rep->problems.begin(), rep->problems.end(), msg) !=
        rep->problems.end());
  std::string text;
  REQUIRE(test::RunTool(logtool::RunCli,
                        {"cdc-log", "import", "--log", log, "-q"}) == 65);
  // Nothing rewrote the record.
  FILE* f = fopen(rec.c_str(), "r");
  char buf[64] = {};
  CHECK(fgets(buf, sizeof buf, f) != nullptr);
  fclose(f);
  CHECK(std::string(buf) == "{\"sha256\":");
}

}  // namespace cdc::log
