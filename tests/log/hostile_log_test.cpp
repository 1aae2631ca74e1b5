// A log directory under attack: frames whose checksum holds over a payload
// of the wrong shape, files planted under the names the tools use, seal
// records with extreme times. Every case ends in a clear status, never a
// crash, a hang or a write through a symlink.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <fstream>

#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "cdc/log/retention.h"
#include "cdc/log/segment.h"
#include "cdc/log/snapshots.h"
#include "cdc/log/verify.h"
#include "cdc/log/watch.h"
#include "cdc/log/writer.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::log {

namespace {

const std::string kEvent =
    R"({"lsn":"0/10","xid":1,"ts":"2026-11-29T07:41:02.000000Z","op":"c",)"
    R"("schema":"public","table":"t","after":{"id":1}})";

// A log whose only segment holds one TXN_END frame: `count` events claimed
// over the payload `raw`, encoded (and checksummed) by the real codec, in
// both codecs (stored under 1 KiB; zstd when padded past 4 KiB).
std::string LogWithFrame(const test::TempDir& dir, const std::string& name,
                         uint32_t count, const std::string& raw) {
  const std::string log = dir.sub(name);
  REQUIRE(CreateLog(log, std::nullopt).ok());
  FrameHeader h;
  h.flags = kFlagTxnEnd;
  h.first_seq = 1;
  h.event_count = count;
  h.commit_lsn = 0x10;
  h.commit_time = 1764402062000000;
  h.xid = 1;
  Codec codec;
  std::string bytes;
  codec.EncodeFrame(h, raw, &bytes);
  std::ofstream(JoinPath(SegmentsDir(log), SegmentFileName(1)),
                std::ios::binary)
      << bytes;
  return log;
}

}  // namespace

TEST_CASE("a checksummed frame of the wrong shape is corruption, not a crash",
          "[log][corruption][hostile]") {
  test::TempDir dir;
  const std::string pad(5000, ' ');  // large enough to be compressed
  const std::string big =
      kEvent.substr(0, kEvent.size() - 1) + R"(,"pad":")" + pad + "\"}";
  struct Case {
    const char* name;
    uint32_t count;
    std::string raw;
    const char* what;
  };
  const Case cases[] = {
      {"fewer", 3, kEvent + "\n" + kEvent + "\n",
       "payload holds 2 events, header says 3"},
      {"fewer-zstd", 2, big + "\n", "payload holds 1 events, header says 2"},
      {"empty-line", 2, kEvent + "\n\n", "event 1 is not a JSON object"},
      {"empty-first", 1, "\n", "event 0 is not a JSON object"},
      {"no-newline", 1, kEvent, "event 0 has no final newline"},
      {"no-newline-zstd", 1, big, "event 0 has no final newline"},
      {"not-object", 1, "[1]\n", "event 0 is not a JSON object"},
      {"extra", 1, kEvent + "\n" + kEvent + "\n",
       "payload has bytes after its last event"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string log = LogWithFrame(dir, c.name, c.count, c.raw);
    const std::string expect =
        "corrupt frame in segments/00000000000000000001.seg at offset 0 "
        "(seq 1-" +
        std::string(c.count > 1 ? std::to_string(c.count) : "?") +
        "): " + c.what;
    auto r = LogReader::Open(log);
    REQUIRE(r.ok());
    Batch b;
    auto got = (*r)->Next(&b);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kCorruption);
    CHECK_THAT(got.status().message(),
               Catch::StartsWith("corrupt frame in segments/"
                                 "00000000000000000001.seg at offset 0") &&
                   Catch::EndsWith(c.what));
    std::string out;
    CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 65);
    CHECK(out.empty());
    auto rep = VerifyLog(log);
    REQUIRE(rep.ok());
    REQUIRE(rep->problems.size() == 1);
    CHECK_THAT(rep->problems[0], Catch::EndsWith(c.what));
    (void)expect;
  }
  // The same frame with the right shape reads.
  const std::string good = LogWithFrame(dir, "good", 2, kEvent + "\n{}\n");
  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", good}, &out) == 0);
  CHECK(out ==
        "{\"seq\":1," + kEvent.substr(1) + "\n{\"seq\":2,\"last\":true}\n");
}

TEST_CASE("Batch::ForEach stays inside a payload of any shape",
          "[log][hostile]") {
  Batch b;
  b.header.first_seq = 1;
  b.header.event_count = 5;
  b.header.flags = kFlagTxnEnd;
  for (const std::string& raw : {std::string(""), std::string("{}"),
                                 std::string("\n\n"), std::string("{}\n{")}) {
    b.raw = raw;
    size_t calls = 0;
    b.ForEach([&](uint64_t, std::string_view line, bool) {
      ++calls;
      CHECK(line.data() >= b.raw.data());
      CHECK(line.data() + line.size() <= b.raw.data() + b.raw.size());
    });
    CHECK(calls <= 5);
  }
}

TEST_CASE("events nested 100,000 deep in a stored log are printed, not parsed",
          "[log][hostile]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(OpenOrCreateLog(log).ok());
  const std::string deep = kEvent.substr(0, kEvent.size() - 1) + R"(,"x":)" +
                           std::string(100000, '[') + std::string(100000, ']') +
                           "}";
  {
    auto w = LogWriter::Open(log, {});
    REQUIRE(w.ok());
    REQUIRE((*w)->Append(deep).ok());
    REQUIRE((*w)->Commit(0x10, 1764402062000000, 1).ok());
    REQUIRE((*w)->Sync().ok());
  }
  std::string out;
  CHECK(test::RunTool(tail::RunCli,
                      {"cdc-tail", "--log", log, "--table", "public.t", "--op",
                       "c", "--to", "lsn:0/10"},
                      &out) == 0);
  CHECK(out.size() == deep.size() + 21);  // {"seq":1, ... ,"last":true}\n
}

TEST_CASE("a segment name past 2^64 is no segment, not a wrapped seq",
          "[log][hostile]") {
  test::TempDir dir;
  test::WriteTxns(dir.path(), 1, 3, 2, {});
  const std::string segs = dir.path() + "/segments/";
  // 2^64 + 1 and 2^64 - 1 + 10^19: wrapped, seq 1 and a huge one.
  for (const char* n : {"18446744073709551617.seg", "99999999999999999999.seg"})
    std::ofstream(segs + n) << "planted";
  auto listed = ListSegmentFiles(dir.path());
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().base_seq == 1);
  // The largest name that fits is still read as a seq.
  std::ofstream(segs + "18446744073709551615.seg") << "planted";
  listed = ListSegmentFiles(dir.path());
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 2);
  CHECK(listed->back().base_seq == UINT64_MAX);
}

TEST_CASE("the writer lock never follows a planted symlink", "[log][hostile]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(OpenOrCreateLog(log).ok());
  const std::string victim = dir.sub("victim");
  { std::ofstream(victim) << "precious\n"; }
  REQUIRE(symlink(victim.c_str(), JoinPath(log, "LOCK").c_str()) == 0);
  auto w = LogWriter::Open(log, {});
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == Code::kCorruption);
  CHECK_THAT(w.status().message(),
             Catch::Contains("LOCK: it is a symbolic link"));
  CHECK(*ReadFileToString(victim) == "precious\n");
}

TEST_CASE("seal records and metadata that are not regular files are refused",
          "[log][hostile]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = test::WriteSmallSegments(log, 30, 4);
  REQUIRE(segs.ok());
  REQUIRE(segs->size() >= 3);
  // A FIFO in place of a sealed segment: tail and verify must not wait on it.
  const std::string seg = (*segs)[1].path;
  REQUIRE(unlink(seg.c_str()) == 0);
  REQUIRE(mkfifo(seg.c_str(), 0644) == 0);
  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log}, &out) == 65);
  CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "verify", "--log", log}) ==
        65);
  // log.json as /dev/zero.
  REQUIRE(unlink(JoinPath(log, "log.json").c_str()) == 0);
  REQUIRE(symlink("/dev/zero", JoinPath(log, "log.json").c_str()) == 0);
  auto id = ReadIdentity(log);
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().code() == Code::kCorruption);
}

TEST_CASE("retention and info survive seal times at the ends of int64",
          "[log][hostile]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = test::WriteSmallSegments(log, 30, 4);
  REQUIRE(segs.ok());
  REQUIRE(segs->size() >= 3);
  for (int64_t t : {INT64_MIN, INT64_MIN + 1, INT64_MAX}) {
    SealRecord r = *(*segs)[0].seal;
    r.last_time = t;
    REQUIRE(WriteSealRecord((*segs)[0].path, r).ok());
    RetentionPolicy p;
    p.max_age_us = 3600 * 1000000ll;
    // The other segments' commits are an hour old at most at this "now".
    auto res = ApplyRetention(log, p, 1764402062000000, /*dry_run=*/true);
    REQUIRE(res.ok());
    // An age beyond int64 is older than any limit; a future time is not old.
    CHECK(res->removed.size() == (t == INT64_MAX ? 0u : 1u));
    p.max_age_us = INT64_MAX;
    res = ApplyRetention(log, p, INT64_MAX, true);
    REQUIRE(res.ok());
    CHECK(test::RunTool(logtool::RunCli,
                        {"cdc-log", "segments", "--log", log}) == 0);
  }
}

TEST_CASE("writers warn about log directories others can write",
          "[log][hostile]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(OpenOrCreateLog(log).ok());
  chmod(log.c_str(), 0755);
  chmod(SegmentsDir(log).c_str(), 0755);
  CHECK(SharedDirWarning(log).empty());
  chmod(SegmentsDir(log).c_str(), 0775);
  CHECK_THAT(SharedDirWarning(log),
             Catch::Contains("segments is writable by its group (mode 0775)"));
  chmod(log.c_str(), 01777);
  CHECK_THAT(SharedDirWarning(log),
             Catch::Contains("is writable by all users (mode 1777)"));
  CHECK(SharedDirWarning(dir.sub("missing")).empty());
  CHECK_THAT(SharedParentWarning(JoinPath(log, "metrics.prom")),
             Catch::Contains("writable by all users"));
}

TEST_CASE("a log's directories planted as symlinks are refused, never used",
          "[log][hostile]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = test::WriteSmallSegments(log, 30, 4);
  REQUIRE(segs.ok());
  const std::string elsewhere = dir.sub("elsewhere");
  auto listing = [&] {
    auto names = ListDir(elsewhere);
    REQUIRE(names.ok());
    std::sort(names->begin(), names->end());
    return *names;
  };
  auto refused = [&](const Status& s, const std::string& name) {
    CHECK(s.code() == Code::kCorruption);
    CHECK(s.message() == "refusing " + JoinPath(log, name) +
                             ": it is a symbolic link (not followed)");
  };

  SECTION("segments") {
    // The link leads to the log's own segments, so that only the refusal
    // can make a reader fail.
    REQUIRE(rename(SegmentsDir(log).c_str(), elsewhere.c_str()) == 0);
    REQUIRE(symlink(elsewhere.c_str(), SegmentsDir(log).c_str()) == 0);
    const auto before = listing();
    refused(ReadIdentity(log).status(), "segments");
    refused(LogReader::Open(log).status(), "segments");
    refused(ListSegmentFiles(log).status(), "segments");
    refused(Summarize(log).status(), "segments");
    refused(VerifyLog(log).status(), "segments");
    refused(LogWriter::Open(log, {}).status(), "segments");
    refused(ChangeWaiter::Create(log).status(), "segments");
    CHECK(listing() == before);
  }
  SECTION("segments of a log being created") {
    const std::string fresh = dir.sub("fresh");
    REQUIRE(mkdir(fresh.c_str(), 0700) == 0);
    REQUIRE(mkdir(elsewhere.c_str(), 0700) == 0);
    REQUIRE(symlink(elsewhere.c_str(), SegmentsDir(fresh).c_str()) == 0);
    auto made = OpenOrCreateLog(fresh);
    CHECK(made.status().code() == Code::kCorruption);
    CHECK_THAT(made.status().message(),
               Catch::Contains("segments: it is a symbolic link"));
    CHECK(listing().empty());
  }
  SECTION("segments swapped for a link under a running writer") {
    WriterOptions o;
    o.segment_bytes = 2048;
    auto w = LogWriter::Open(log, o);
    REQUIRE(w.ok());
    REQUIRE(rename(SegmentsDir(log).c_str(), dir.sub("real").c_str()) == 0);
    REQUIRE(mkdir(elsewhere.c_str(), 0700) == 0);
    REQUIRE(symlink(elsewhere.c_str(), SegmentsDir(log).c_str()) == 0);
    // Enough to seal the active segment: its record and successor would
    // go through the link.
    Status s;
    for (uint64_t t = 100; s.ok() && t < 200; ++t) {
      s = (*w)->Append(test::EventLine(t, 0, 200));
      if (s.ok()) s = (*w)->Commit(t * 16, 0, t);
      if (s.ok()) s = (*w)->Sync();
    }
    refused(s, "segments");
    CHECK(listing().empty());
  }
  SECTION("snapshots") {
    // A request another log holds: listing it here would read through.
    auto other = RequestIncrementalSnapshot(log, "public", "t", 10, 1);
    REQUIRE(other.ok());
    REQUIRE(rename(JoinPath(log, kSnapshotsDir).c_str(), elsewhere.c_str()) ==
            0);
    REQUIRE(symlink(elsewhere.c_str(), JoinPath(log, kSnapshotsDir).c_str()) ==
            0);
    const auto before = listing();
    refused(ReadIdentity(log).status(), "snapshots");
    refused(RequestIncrementalSnapshot(log, "public", "t", 10, 2).status(),
            "snapshots");
    refused(ListIncrementalSnapshots(log).status(), "snapshots");
    refused(ReadIncrementalSnapshot(log, other->id).status(), "snapshots");
    refused(WriteIncrementalSnapshot(log, *other), "snapshots");
    CHECK(listing() == before);
  }
  SECTION("a file where a directory belongs") {
    { std::ofstream(JoinPath(log, kSnapshotsDir)) << "x"; }
    auto id = ReadIdentity(log);
    CHECK(id.status().code() == Code::kCorruption);
    CHECK_THAT(id.status().message(),
               Catch::EndsWith("snapshots: it is not a directory"));
  }
}

}  // namespace cdc::log
