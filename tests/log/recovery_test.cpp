#include <algorithm>
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

struct FrameSpan {
  uint64_t offset, end, end_seq;
  bool txn_end;
};

std::vector<FrameSpan> Frames(const std::string& path, uint64_t base) {
  std::vector<FrameSpan> out;
  auto f = SegmentFile::Open(path);
  REQUIRE(f.ok());
  auto size = f->Size();
  auto scan = ScanSegment(
      *f, *size, base, true,
      [&](uint64_t off, const FrameHeader& h, std::string_view) {
        out.push_back({off, off + h.frame_size(), h.end_seq(), h.txn_end()});
        return Status::OK();
      });
  REQUIRE(scan.ok());
  return out;
}

// Cuts the newest segment at every offset inside its last two frames and
// checks recovery keeps exactly the complete transactions before the cut.
void CheckEveryCut(const std::string& pristine, const std::string& work) {
  auto segs = ListSegments(pristine);
  REQUIRE(segs.ok());
  const SegmentInfo newest = segs->back();
  const std::string rel = "segments/" + SegmentFileName(newest.base_seq);
  auto frames = Frames(newest.path, newest.base_seq);
  REQUIRE(frames.size() >= 2);
  const uint64_t from = frames[frames.size() - 2].offset;
  const uint64_t to = frames.back().end;
  for (uint64_t cut = from; cut < to; ++cut) {
    std::filesystem::remove_all(work);
    std::filesystem::copy(pristine, work,
                          std::filesystem::copy_options::recursive);
    test::TruncateFile(work + "/" + rel, cut);
    // A torn write tears only what no fdatasync covered yet: the durable
    // mark would not reach into it.
    std::filesystem::remove(work + "/durable");
    uint64_t expect_next = newest.base_seq;
    for (const auto& fr : frames)
      if (fr.end <= cut && fr.txn_end) expect_next = fr.end_seq;
    INFO("cut at " << cut);
    {
      auto w = LogWriter::Open(work, {});
      REQUIRE(w.ok());
      CHECK((*w)->next_seq() == expect_next);
    }
    auto got = test::ReadAll(work);
    REQUIRE(got.seqs.size() == expect_next - 1);
    for (size_t i = 0; i < got.seqs.size(); ++i) REQUIRE(got.seqs[i] == i + 1);
    CHECK((got.last.empty() || got.last.back()));
    auto rep = VerifyLog(work);
    REQUIRE(rep.ok());
    CHECK(rep->ok());
    CHECK(rep->notes.empty());
  }
}

}  // namespace

TEST_CASE("recovery truncates a torn tail at every byte offset",
          "[log][recovery]") {
  test::TempDir dir;
  WriterOptions opts;
  opts.segment_bytes = 4096;  // several sealed segments before the newest
  test::WriteTxns(dir.sub("log"), 1, 60, 3, opts);
  test::WriteTxns(dir.sub("log"), 61, 2, 3);  // two frames in the newest
  REQUIRE(ListSegments(dir.sub("log"))->size() >= 3);
  CheckEveryCut(dir.sub("log"), dir.sub("work"));
}

TEST_CASE("recovery drops a multi-frame transaction cut anywhere",
          "[log][recovery]") {
  test::TempDir dir;
  WriterOptions opts;
  opts.frame_bytes = 512;  // a 10-event transaction spans several frames
  test::WriteTxns(dir.sub("log"), 1, 5, 2, opts);
  test::WriteTxns(dir.sub("log"), 6, 1, 10, opts, 100);
  CheckEveryCut(dir.sub("log"), dir.sub("work"));
}

TEST_CASE(
    "garbage after the last frame is a torn tail; damage before good "
    "frames is corruption",
    "[log][recovery][corruption]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 10, 2);
  const std::string seg = log + "/segments/" + SegmentFileName(1);
  const uint64_t size = test::SizeOf(seg);
  {
    FILE* f = fopen(seg.c_str(), "ab");
    std::string junk(300, '\x7f');
    fwrite(junk.data(), 1, junk.size(), f);
    fclose(f);
  }
  {
    auto w = LogWriter::Open(log, {});
    REQUIRE(w.ok());
    CHECK((*w)->recovery().truncated_bytes == 300);
  }
  CHECK(test::SizeOf(seg) == size);
  test::FlipByte(seg, 70);  // inside the first frame's payload
  auto w = LogWriter::Open(log, {});
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == Code::kCorruption);
  CHECK_THAT(w.status().message(),
             Catch::StartsWith("corrupt frame in segments/"
                               "00000000000000000001.seg at offset 0 (seq "
                               "1-"));
  CHECK(test::SizeOf(seg) == size);  // nothing was cut
}

}  // namespace cdc::log

namespace cdc::log {

TEST_CASE(
    "a bad frame at the end of the newest segment below the durable mark "
    "is corruption, never cut",
    "[log][recovery][corruption][durability]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 10, 2);  // closing the writer records the mark
  auto mark = ReadDurableMark(log);
  REQUIRE(mark.ok());
  REQUIRE(mark->has_value());
  const std::string seg = log + "/segments/" + SegmentFileName(1);
  const uint64_t size = test::SizeOf(seg);
  CHECK((*mark)->segment == 1);
  CHECK((*mark)->bytes == size);
  auto frames = Frames(seg, 1);
  const FrameSpan last = frames.back();
  test::FlipByte(seg, last.offset + kFrameHeaderSize + 2);  // payload

  auto w = LogWriter::Open(log, {});
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == Code::kCorruption);
  CHECK(w.status().message() ==
        "corrupt frame in segments/00000000000000000001.seg at offset " +
            std::to_string(last.offset) +
            " (seq 19-?): checksum mismatch below the " + std::to_string(size) +
            " bytes known durable (refusing to cut acknowledged data)");
  CHECK(test::SizeOf(seg) == size);
  // import would have reused seq 19-20 for other events.
  CHECK(test::RunTool(logtool::RunCli,
                      {"cdc-log", "import", "--log", log, "-q"}) == 65);
  CHECK(test::SizeOf(seg) == size);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}) == 65);

  // Without the mark the same bytes could be a torn write: cut.
  std::filesystem::remove(log + "/durable");
  auto w2 = LogWriter::Open(log, {});
  REQUIRE(w2.ok());
  CHECK((*w2)->recovery().truncated_bytes == size - last.offset);
}

TEST_CASE("a newest segment truncated below the durable mark is corruption",
          "[log][recovery][corruption][durability]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 10, 2);
  const std::string seg = log + "/segments/" + SegmentFileName(1);
  const uint64_t size = test::SizeOf(seg);
  auto frames = Frames(seg, 1);
  test::TruncateFile(seg, frames.back().offset);  // a whole transaction
  auto w = LogWriter::Open(log, {});
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == Code::kCorruption);
  CHECK_THAT(w.status().message(),
             Catch::Contains("segment ends below the " + std::to_string(size) +
                             " bytes known durable"));
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
  // Readers do not take the cut for the end of the log either.
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}) == 65);
  auto r = LogReader::Open(log);
  REQUIRE(r.ok());
  Batch b;
  Result<bool> more = true;
  while (more.ok() && *more) more = (*r)->Next(&b);
  REQUIRE_FALSE(more.ok());
  CHECK(more.status().code() == Code::kCorruption);
  CHECK(more.status().message() ==
        "segments/00000000000000000001.seg is truncated: " +
            std::to_string(frames.back().offset) +
            " bytes, but the durable mark says " + std::to_string(size) +
            " were fsynced (events from seq 19 on are lost)");
  // Without the mark the shorter segment is an ordinary end.
  std::filesystem::remove(log + "/durable");
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}) == 0);
}

namespace {
// Appends `hole` zero bytes and then a copy of the segment's last frame to
// it: what a failed writeback leaves when the kernel drops the dirty pages
// of a write while a later write lands (a valid frame after a hole).
uint64_t AppendHoleAndFrame(const std::string& seg, uint64_t base,
                            uint64_t hole) {
  auto frames = Frames(seg, base);
  const FrameSpan last = frames.back();
  std::string bytes;
  {
    FILE* f = fopen(seg.c_str(), "rb");
    REQUIRE(f != nullptr);
    bytes.resize(last.end - last.offset);
    fseek(f, static_cast<long>(last.offset), SEEK_SET);
    REQUIRE(fread(bytes.data(), 1, bytes.size(), f) == bytes.size());
    fclose(f);
  }
  FILE* f = fopen(seg.c_str(), "ab");
  REQUIRE(f != nullptr);
  std::string zeros(hole, '\0');
  fwrite(zeros.data(), 1, zeros.size(), f);
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
  return hole + bytes.size();
}
}  // namespace

TEST_CASE(
    "a hole with frames after it beyond the durable mark is a torn tail; "
    "below the mark or without one it is corruption",
    "[log][recovery][corruption][durability]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 10, 2);  // closing the writer records the mark
  const std::string seg = log + "/segments/" + SegmentFileName(1);
  const uint64_t size = test::SizeOf(seg);
  auto mark = ReadDurableMark(log);
  REQUIRE(mark.ok());
  REQUIRE(mark->has_value());
  REQUIRE((*mark)->bytes == size);
  const uint64_t added = AppendHoleAndFrame(seg, 1, 200);
  const std::string pristine = dir.sub("pristine");
  std::filesystem::copy(log, pristine,
                        std::filesystem::copy_options::recursive);

  // Readers and verify see the end of the log at the hole, and say so.
  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 0);
  CHECK(std::count(out.begin(), out.end(), '\n') == 20);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  REQUIRE(rep->notes.size() == 1);
  CHECK_THAT(rep->notes[0],
             Catch::Contains("torn tail of " + std::to_string(added) +
                             " bytes at offset " + std::to_string(size) +
                             " beyond the " + std::to_string(size) +
                             " bytes known durable"));
  {
    auto w = LogWriter::Open(log, {});
    REQUIRE(w.ok());
    CHECK((*w)->recovery().truncated_bytes == added);
    CHECK((*w)->next_seq() == 21);
  }
  CHECK(test::SizeOf(seg) == size);
  rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  CHECK(rep->notes.empty());

  // The same bytes, but the mark says they were fsynced: corruption.
  std::filesystem::remove_all(log);
  std::filesystem::copy(pristine, log,
                        std::filesystem::copy_options::recursive);
  REQUIRE(WriteDurableMark(log, {1, size + added}).ok());
  auto w = LogWriter::Open(log, {});
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == Code::kCorruption);
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}) == 65);
  rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());

  // No mark: nothing is known of what was fsynced, so a valid frame after
  // damage stays corruption.
  std::filesystem::remove(log + "/durable");
  auto w2 = LogWriter::Open(log, {});
  REQUIRE_FALSE(w2.ok());
  CHECK(w2.status().code() == Code::kCorruption);
  CHECK(test::SizeOf(seg) == size + added);
}

}  // namespace cdc::log
