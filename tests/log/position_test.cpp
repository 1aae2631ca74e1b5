#include "cdc/log/position.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "cdc/base/coding.h"
#include "cdc/log/segment.h"
#include "cdc/log/writer.h"
#include "test_util.h"

namespace cdc::log {

namespace {

// The commit fields of the frame at `offset` of the first segment, as they
// are on disk: commit LSN at 32, commit time at 40, xid at 48, event count
// at 16 (little-endian).
struct OnDisk {
  uint64_t lsn, xid;
  uint32_t events;
};
OnDisk HeaderOnDisk(const std::string& dir, uint64_t offset) {
  std::ifstream f(JoinPath(SegmentsDir(dir), SegmentFileName(1)),
                  std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(f)), {});
  REQUIRE(b.size() >= offset + kFrameHeaderSize);
  const char* p = b.data() + offset;
  return OnDisk{GetFixed64(p + 32), GetFixed64(p + 48), GetFixed32(p + 16)};
}

}  // namespace

TEST_CASE("positions: a lone message's LSN is exclusive, a commit's is not",
          "[log][position]") {
  FrameHeader h;
  h.flags = kFlagTxnEnd;
  h.commit_lsn = 0x1000;
  h.xid = 0;
  h.event_count = 1;
  const SourcePosition msg = SourcePosition::Of(h);
  CHECK(msg.exclusive);
  CHECK(msg.FlushLsn() == 0x1000);
  CHECK_FALSE(msg.CoversCommit(0x1000));  // may start where the message ends
  CHECK(msg.CoversCommit(0xFF8));
  CHECK(msg.CoversMessage(0x1000));  // the message itself
  CHECK_FALSE(msg.CoversMessage(0x1008));

  h.xid = 742;  // a transaction, committed at 0x1000
  const SourcePosition txn = SourcePosition::Of(h);
  CHECK_FALSE(txn.exclusive);
  CHECK(txn.FlushLsn() == 0x1001);
  CHECK(txn.CoversCommit(0x1000));
  CHECK_FALSE(txn.CoversCommit(0x1001));
  CHECK(txn.CoversMessage(0x1000));
  CHECK_FALSE(txn.CoversMessage(0x1040));

  h.xid = 0;  // a keepalive position, recorded at WAL end - 1
  h.event_count = 0;
  h.commit_lsn = 0xFFF;
  const SourcePosition ka = SourcePosition::Of(h);
  CHECK_FALSE(ka.exclusive);
  CHECK(ka.FlushLsn() == 0x1000);
  CHECK_FALSE(ka.CoversCommit(0x1000));

  const SourcePosition none;
  CHECK(none.FlushLsn() == 0);
  CHECK_FALSE(none.CoversCommit(0));
  CHECK_FALSE(none.CoversMessage(0));
}

TEST_CASE(
    "writer: the durable flush position after a lone message is its LSN, "
    "and survives a restart",
    "[log][position][writer]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  {
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
    REQUIRE((*w)->Commit(0x800, 0, 7).ok());
    REQUIRE((*w)->Sync().ok());
    CHECK((*w)->durable_flush_lsn() == 0x801);
    REQUIRE((*w)->Append(test::EventLine(2, 0)).ok());  // a lone message
    REQUIRE((*w)->Commit(0x1000, 0, 0).ok());
    CHECK((*w)->durable_flush_lsn() == 0x801);  // not fsynced yet
    REQUIRE((*w)->Sync().ok());
    CHECK((*w)->durable_lsn() == 0x1000);
    CHECK((*w)->durable_flush_lsn() == 0x1000);
    CHECK((*w)->position().exclusive);
  }
  const uint64_t second =
      test::SizeOf(JoinPath(SegmentsDir(dir.path()), SegmentFileName(1)));
  {
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    CHECK((*w)->position().exclusive);
    CHECK((*w)->position().lsn == 0x1000);
    CHECK((*w)->durable_flush_lsn() == 0x1000);
    // The transaction whose commit record starts where the message ended.
    REQUIRE((*w)->Append(test::EventLine(3, 0)).ok());
    REQUIRE((*w)->Commit(0x1000, 0, 9).ok());
    REQUIRE((*w)->Sync().ok());
    CHECK((*w)->durable_flush_lsn() == 0x1001);
    // A keepalive position (no events, xid 0) at WAL end 0x1100.
    REQUIRE((*w)->Commit(0x10FF, 0, 0).ok());
    REQUIRE((*w)->Sync().ok());
    CHECK((*w)->durable_flush_lsn() == 0x1100);
    CHECK_FALSE((*w)->position().exclusive);
  }
  auto w = LogWriter::Open(dir.path(), {});
  REQUIRE(w.ok());
  CHECK((*w)->durable_flush_lsn() == 0x1100);
  // What the frames hold on disk: nothing but the header fields.
  const OnDisk first = HeaderOnDisk(dir.path(), 0);
  CHECK(first.lsn == 0x800);
  CHECK(first.xid == 7);
  uint64_t off = 0;
  std::vector<OnDisk> frames;
  const uint64_t size =
      test::SizeOf(JoinPath(SegmentsDir(dir.path()), SegmentFileName(1)));
  std::ifstream f(JoinPath(SegmentsDir(dir.path()), SegmentFileName(1)),
                  std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(f)), {});
  while (off < size) {
    frames.push_back(HeaderOnDisk(dir.path(), off));
    off += kFrameHeaderSize + GetFixed32(b.data() + off + 20);
  }
  REQUIRE(frames.size() == 4);
  CHECK(
      (frames[1].lsn == 0x1000 && frames[1].xid == 0 && frames[1].events == 1));
  CHECK(
      (frames[2].lsn == 0x1000 && frames[2].xid == 9 && frames[2].events == 1));
  CHECK(
      (frames[3].lsn == 0x10FF && frames[3].xid == 0 && frames[3].events == 0));
  CHECK(second < size);
}

TEST_CASE(
    "writer: a lone message that ended a sealed segment is still exclusive "
    "after a restart",
    "[log][position][writer]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  WriterOptions opts;
  opts.segment_bytes = 256;
  {
    auto w = LogWriter::Open(dir.path(), opts);
    REQUIRE(w.ok());
    for (uint64_t t = 1; t <= 3; ++t) {
      REQUIRE((*w)->Append(test::EventLine(t, 0, 200)).ok());
      REQUIRE((*w)->Commit(t * 0x100, 0, t).ok());
    }
    REQUIRE((*w)->Append(test::EventLine(4, 0, 200)).ok());
    REQUIRE((*w)->Commit(0x400, 0, 0).ok());  // lone message
    REQUIRE((*w)->Sync().ok());               // seals: the segment is full
  }
  auto segs = ListSegments(dir.path());
  REQUIRE(segs.ok());
  REQUIRE(segs->size() == 2);
  REQUIRE((*segs)[0].sealed);
  CHECK(test::SizeOf((*segs)[1].path) == 0);
  auto w = LogWriter::Open(dir.path(), opts);
  REQUIRE(w.ok());
  CHECK((*w)->position().exclusive);
  CHECK((*w)->position().lsn == 0x400);
  CHECK((*w)->durable_flush_lsn() == 0x400);
}

}  // namespace cdc::log
