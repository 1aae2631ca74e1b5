// Grouped frames (format 2): several whole transactions in one frame.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cdc/base/coding.h"
#include "cdc/base/fs.h"
#include "cdc/log/frame.h"
#include "cdc/log/reader.h"
#include "cdc/log/scan.h"
#include "cdc/log/verify.h"
#include "cdc/log/writer.h"
#include "test_util.h"

namespace cdc::log {

namespace {

const std::vector<TxnEntry> kTxns = {
    {1, 0x100, 1000, 5}, {2, 0x180, 1010, 6}, {1, 0x1C0, 1005, 0}};

FrameHeader GroupHeader() {
  FrameHeader h;
  h.flags = kFlagTxnEnd;
  h.first_seq = 7;
  h.event_count = 4;
  h.commit_lsn = 0x1C0;
  h.commit_time = 1005;
  h.xid = 0;
  return h;
}

struct Span {
  uint64_t offset, end, end_seq;
  FrameHeader h;
};

std::vector<Span> Frames(const std::string& path, uint64_t base) {
  std::vector<Span> out;
  auto f = SegmentFile::Open(path);
  REQUIRE(f.ok());
  auto scan =
      ScanSegment(*f, *f->Size(), base, true,
                  [&](uint64_t off, const FrameHeader& h, std::string_view) {
                    out.push_back({off, off + h.frame_size(), h.end_seq(), h});
                    return Status::OK();
                  });
  REQUIRE(scan.ok());
  return out;
}

// Transaction t (from 1): `rows` events, commit LSN 0/(t*16), time
// 1764402062000000 + t, xid t.
void Txn(LogWriter* w, uint64_t t, int rows) {
  for (int i = 0; i < rows; ++i)
    REQUIRE(w->Append(test::EventLine(t, static_cast<uint64_t>(i))).ok());
  REQUIRE(
      w->Commit(t * 16, 1764402062000000 + static_cast<int64_t>(t), t).ok());
}

// `txns` single-row transactions, one write window (a grouped frame) per
// `window` of them, ended by a write (or a sync, which may seal the
// segment); a sync at the end.
void WriteGrouped(const std::string& dir, uint64_t first, uint64_t txns,
                  uint64_t window, const WriterOptions& opts = {},
                  bool sync = false) {
  REQUIRE(OpenOrCreateLog(dir).ok());
  auto w = LogWriter::Open(dir, opts);
  REQUIRE(w.ok());
  for (uint64_t t = first; t < first + txns; ++t) {
    Txn(w->get(), t, 1);
    if ((t - first + 1) % window == 0)
      REQUIRE((sync ? (*w)->Sync() : (*w)->RequestWrite()).ok());
  }
  REQUIRE((*w)->Sync().ok());
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Native(const std::string& dir) {
  std::string out;
  for (const auto& l : test::ReadAll(dir).lines) out += l;
  return out;
}

}  // namespace

TEST_CASE("the transaction table is byte-exact", "[log][frame][grouped]") {
  std::string table;
  EncodeTxnTable(kTxns, &table);
  // count 3; then per transaction: events, and the zigzag deltas of LSN,
  // time and xid (time goes back 5: 9; xid back 6: 11).
  const std::string expect(
      "\x03"
      "\x01\x80\x04\xD0\x0F\x0A"
      "\x02\x80\x02\x14\x02"
      "\x01\x80\x01\x09\x0B",
      17);
  CHECK(table == expect);
  std::vector<TxnEntry> back;
  CHECK(DecodeTxnTable(table, GroupHeader(), &back) == "");
  CHECK(back == kTxns);

  FrameHeader h = GroupHeader();
  h.event_count = 5;
  CHECK(DecodeTxnTable(table, h, &back) ==
        "transaction table holds 4 events, header says 5");
  h = GroupHeader();
  h.xid = 9;
  CHECK(DecodeTxnTable(table, h, &back) ==
        "transaction table does not end with the header's commit");
  CHECK(DecodeTxnTable(table + "x", GroupHeader(), &back) ==
        "transaction table has bytes after its end");
  CHECK(DecodeTxnTable(table.substr(0, 16), GroupHeader(), &back) ==
        "transaction table ends early");
  std::vector<TxnEntry> backwards = {{1, 0x200, 1, 1}, {3, 0x1C0, 1005, 0}};
  std::string bt;
  EncodeTxnTable(backwards, &bt);
  CHECK(DecodeTxnTable(bt, GroupHeader(), &back) ==
        "transaction table goes back from commit LSN 512 to 448");
}

TEST_CASE("a grouped frame is byte-exact and its checksum covers the table",
          "[log][frame][grouped]") {
  Codec codec;
  std::string table;
  EncodeTxnTable(kTxns, &table);
  const std::string raw = "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n{\"a\":4}\n";
  std::string out;
  codec.EncodeFrame(GroupHeader(), table, raw, &out);
  REQUIRE(out.size() == kFrameHeaderSize + table.size() + raw.size());
  CHECK(out.substr(0, 4) == "CDCF");
  CHECK(out[4] == 2);  // version
  CHECK(out[5] == 1);  // TXN_END
  CHECK(out[6] == 0);  // stored: small
  CHECK(GetFixed64(out.data() + 8) == 7);
  CHECK(GetFixed32(out.data() + 16) == 4);
  CHECK(GetFixed32(out.data() + 20) == table.size() + raw.size());
  CHECK(GetFixed32(out.data() + 24) == raw.size());
  CHECK(GetFixed32(out.data() + 28) == table.size());
  CHECK(GetFixed64(out.data() + 32) == 0x1C0);
  CHECK(GetFixed64(out.data() + 40) == 1005);
  CHECK(GetFixed64(out.data() + 48) == 0);
  CHECK(out.substr(kFrameHeaderSize, table.size()) == table);
  CHECK(out.substr(kFrameHeaderSize + table.size()) == raw);

  FrameHeader h;
  REQUIRE(DecodeHeader(out.data(), &h) == HeaderState::kOk);
  CHECK(h.grouped());
  const std::string_view payload(out.data() + kFrameHeaderSize, h.payload_len);
  CHECK(Codec::ChecksumOk(out.data(), payload, h.checksum));
  std::string back;
  REQUIRE(codec.Decompress(h, payload, &back).ok());
  CHECK(back == raw);
  // Every byte, the table's included, is covered.
  for (size_t i = 0; i < out.size(); ++i) {
    std::string bad = out;
    bad[i] ^= 0x10;
    FrameHeader bh;
    const bool caught =
        DecodeHeader(bad.data(), &bh) != HeaderState::kOk ||
        bad.size() != kFrameHeaderSize + bh.payload_len ||
        !Codec::ChecksumOk(
            bad.data(),
            std::string_view(bad.data() + kFrameHeaderSize, bh.payload_len),
            bh.checksum);
    INFO("byte " << i);
    CHECK(caught);
  }
  // A table needs a TXN_END frame with events.
  std::string not_end = out;
  not_end[5] = 0;
  CHECK(DecodeHeader(not_end.data(), &h) == HeaderState::kBadFields);
}

TEST_CASE("the transactions of one write window share a frame",
          "[log][writer][grouped]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriteGrouped(log, 1, 50, 20);  // windows of 20, 20 and 10 transactions
  auto frames = Frames(log + "/segments/" + SegmentFileName(1), 1);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].h.event_count == 20);
  CHECK(frames[1].h.event_count == 20);
  CHECK(frames[2].h.event_count == 10);
  for (const auto& f : frames) {
    CHECK(f.h.grouped());
    CHECK(f.h.version == kFormatVersion);
  }
  CHECK(frames[0].h.commit_lsn == 20 * 16);
  // Read one transaction at a time, each with its own commit.
  auto reader = LogReader::Open(log);
  REQUIRE(reader.ok());
  Batch b;
  for (uint64_t t = 1; t <= 50; ++t) {
    auto got = (*reader)->Next(&b);
    REQUIRE(got.ok());
    REQUIRE(*got);
    CHECK(b.header.first_seq == t);
    CHECK(b.header.event_count == 1);
    CHECK(b.header.commit_lsn == t * 16);
    CHECK(b.header.xid == t);
    CHECK(b.header.commit_time == 1764402062000000 + static_cast<int64_t>(t));
    CHECK(b.raw == test::EventLine(t, 0) + "\n");
    CHECK((*reader)->next_seq() == t + 1);
    int n = 0;
    b.ForEach([&](uint64_t seq, std::string_view, bool last) {
      CHECK(seq == t);
      CHECK(last);
      ++n;
    });
    CHECK(n == 1);
  }
  REQUIRE_FALSE(*(*reader)->Next(&b));
  auto file = SegmentFile::Open(log + "/segments/" + SegmentFileName(1));
  REQUIRE(file.ok());
  auto seal = ScanSegment(*file, frames.back().end, 1, false);
  REQUIRE(seal.ok());
  CHECK(seal->first_lsn == 16);  // the first transaction's, from the table
  CHECK(seal->first_time == 1764402062000001);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  CHECK(rep->events == 50);
}

TEST_CASE("grouped frames: multi-row transactions, a large one, an abort",
          "[log][writer][grouped]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(OpenOrCreateLog(log).ok());
  WriterOptions opts;
  opts.frame_bytes = 2048;
  {
    auto w = LogWriter::Open(log, opts);
    REQUIRE(w.ok());
    Txn(w->get(), 1, 4);
    Txn(w->get(), 2, 1);
    Txn(w->get(), 3, 40);  // spans frames: the group before it leaves first
    Txn(w->get(), 4, 2);
    for (int i = 0; i < 3; ++i)
      REQUIRE((*w)->Append(test::EventLine(5, i)).ok());
    REQUIRE((*w)->Abort().ok());  // leaves transaction 4 gathered
    Txn(w->get(), 5, 3);
    REQUIRE((*w)->Commit(6 * 16, 0, 0).ok());  // a position: its own frame
    Txn(w->get(), 7, 1);
    Txn(w->get(), 8, 1);
    REQUIRE((*w)->Sync().ok());
  }
  auto got = test::ReadAll(log);
  std::vector<bool> last;
  for (int rows : {4, 1, 40, 2, 3, 1, 1})
    for (int i = 0; i < rows; ++i) last.push_back(i + 1 == rows);
  REQUIRE(got.seqs.size() == last.size());
  for (size_t i = 0; i < got.seqs.size(); ++i) CHECK(got.seqs[i] == i + 1);
  CHECK(got.last == last);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  auto frames = Frames(log + "/segments/" + SegmentFileName(1), 1);
  REQUIRE(frames.size() >= 5);
  CHECK(frames[0].h.grouped());  // transactions 1 and 2
  CHECK(frames[0].h.event_count == 5);
  CHECK_FALSE(frames[1].h.txn_end());  // transaction 3's first part
  bool position = false;
  for (const auto& f : frames)
    if (f.h.event_count == 0 && f.h.txn_end() && f.h.commit_lsn == 96)
      position = true;
  CHECK(position);
}

TEST_CASE("seeks by seq, LSN and time land inside a grouped frame exactly",
          "[log][reader][grouped]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriterOptions opts;
  opts.segment_bytes = 512;  // sealed segments of grouped frames
  WriteGrouped(log, 1, 200, 20, opts, /*sync=*/true);
  REQUIRE(ListSegments(log)->size() >= 3);
  auto first_seq = [&](auto seek) {
    auto r = LogReader::Open(log);
    REQUIRE(r.ok());
    REQUIRE(seek(r->get()).ok());
    Batch b;
    auto got = (*r)->Next(&b);
    REQUIRE(got.ok());
    REQUIRE(*got);
    return b.header.first_seq + b.skip;
  };
  for (uint64_t t : {1, 2, 19, 20, 21, 45, 117, 199, 200}) {
    INFO("txn " << t);
    CHECK(first_seq([&](LogReader* r) { return r->SeekSeq(t); }) == t);
    CHECK(first_seq([&](LogReader* r) { return r->SeekLsn(t * 16); }) == t);
    CHECK(first_seq([&](LogReader* r) { return r->SeekLsn(t * 16 - 3); }) == t);
    CHECK(first_seq([&](LogReader* r) {
            return r->SeekTime(1764402062000000 + static_cast<int64_t>(t));
          }) == t);
  }
}

TEST_CASE("a grouped frame torn at any byte is cut whole on recovery",
          "[log][recovery][grouped]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriteGrouped(log, 1, 30, 10);
  const std::string rel = "segments/" + SegmentFileName(1);
  auto frames = Frames(log + "/" + rel, 1);
  REQUIRE(frames.size() == 3);
  REQUIRE(frames[2].h.grouped());
  const std::string work = dir.sub("work");
  for (uint64_t cut = frames[1].end; cut < frames[2].end; ++cut) {
    INFO("cut at " << cut);
    std::filesystem::remove_all(work);
    std::filesystem::copy(log, work, std::filesystem::copy_options::recursive);
    test::TruncateFile(work + "/" + rel, cut);
    std::filesystem::remove(work + "/durable");
    // Readers stop before it; the writer cuts it and appends after.
    auto got = test::ReadAll(work);
    REQUIRE(got.seqs.size() == 20);
    {
      auto w = LogWriter::Open(work, {});
      REQUIRE(w.ok());
      CHECK((*w)->recovery().truncated_bytes == cut - frames[1].end);
      CHECK((*w)->next_seq() == 21);
      Txn(w->get(), 21, 1);
      REQUIRE((*w)->Sync().ok());
    }
    got = test::ReadAll(work);
    REQUIRE(got.seqs.size() == 21);
    auto rep = VerifyLog(work);
    REQUIRE(rep.ok());
    CHECK(rep->ok());
  }
}

TEST_CASE("a flipped byte in a grouped frame's table or events is reported",
          "[log][corruption][grouped]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriteGrouped(log, 1, 30, 10);
  const std::string seg = log + "/segments/" + SegmentFileName(1);
  auto frames = Frames(seg, 1);
  REQUIRE(frames.size() == 3);
  const uint64_t off = frames[1].offset;           // seq 11-20
  for (uint64_t at : {off + kFrameHeaderSize + 2,  // in the table
                      off + kFrameHeaderSize + frames[1].h.table_len + 5,
                      off + 30}) {  // the table length field
    INFO("flip at " << at);
    const std::string work = dir.sub("work");
    std::filesystem::remove_all(work);
    std::filesystem::copy(log, work, std::filesystem::copy_options::recursive);
    const std::string wseg = work + "/segments/" + SegmentFileName(1);
    test::FlipByte(wseg, at);
    const std::string expect = "corrupt frame in segments/" +
                               SegmentFileName(1) + " at offset " +
                               std::to_string(off) + " (seq 11-20): ";
    auto reader = LogReader::Open(work);
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
    CHECK(seen == 10);
    CHECK(err.code() == Code::kCorruption);
    CHECK_THAT(err.message(), Catch::StartsWith(expect));
    auto rep = VerifyLog(work);
    REQUIRE(rep.ok());
    REQUIRE_FALSE(rep->ok());
    CHECK_THAT(rep->problems[0], Catch::StartsWith(expect));
    // The writer refuses to append after damage followed by good frames.
    auto w = LogWriter::Open(work, {});
    REQUIRE_FALSE(w.ok());
    CHECK(w.status().code() == Code::kCorruption);
  }
}

TEST_CASE("a table that disagrees with its frame is corruption, not a crash",
          "[log][corruption][grouped]") {
  // A checksum-valid frame whose table lists more events than it holds
  // (a writer bug, or a crafted file).
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(CreateLog(log, std::nullopt).ok());
  std::vector<TxnEntry> txns = {{1, 16, 1, 1}, {1, 32, 2, 2}};
  std::string table;
  EncodeTxnTable(txns, &table);
  FrameHeader h;
  h.flags = kFlagTxnEnd;
  h.first_seq = 1;
  h.event_count = 3;  // the table says 2
  h.commit_lsn = 32;
  h.commit_time = 2;
  h.xid = 2;
  Codec codec;
  std::string out;
  codec.EncodeFrame(h, table, "{}\n{}\n{}\n", &out);
  REQUIRE(WriteFileAtomic(log + "/segments/" + SegmentFileName(1), out).ok());
  auto reader = LogReader::Open(log);
  REQUIRE(reader.ok());
  Batch b;
  auto got = (*reader)->Next(&b);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message() ==
        "corrupt frame in segments/00000000000000000001.seg at offset 0 (seq "
        "1-?): transaction table holds 2 events, header says 3");
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
}

TEST_CASE("a log written by format 1 is read, verified and appended to",
          "[log][grouped][compat]") {
  // tests/log/fixtures/format1: made by cdc-log import of the release
  // before grouped frames (a sealed segment and an empty active one), with
  // what its cdc-tail printed.
  test::TempDir dir;
  const std::string log = dir.sub("log");
  const std::string fixture =
      std::string(CDC_SOURCE_DIR) + "/tests/log/fixtures/format1";
  std::filesystem::copy(fixture, log, std::filesystem::copy_options::recursive);
  const std::string before = ReadText(fixture + ".ndjson");
  REQUIRE(ReadIdentity(log)->format_version == 1);
  CHECK(Native(log) == before);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  CHECK(rep->events == 19);
  {
    auto r = LogReader::Open(log);
    REQUIRE(r.ok());
    REQUIRE((*r)->SeekLsn(0x1634F00 + 8 * 256).ok());  // txn 8: seq 12-14
    CHECK((*r)->next_seq() == 12);
  }
  {
    auto w = LogWriter::Open(log, {});
    REQUIRE(w.ok());
    CHECK((*w)->next_seq() == 20);
    CHECK((*w)->last_commit_lsn() == 0x1634F00 + 12 * 256);
    for (uint64_t t = 0x200000; t < 0x200000 + 5; ++t) Txn(w->get(), t, 1);
    REQUIRE((*w)->Sync().ok());
  }
  CHECK(ReadIdentity(log)->format_version == 2);
  auto frames = Frames(log + "/segments/" + SegmentFileName(20), 20);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].h.grouped());
  auto got = test::ReadAll(log);
  REQUIRE(got.seqs.size() == 24);
  std::string all = Native(log);
  CHECK(all.substr(0, before.size()) == before);
  rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  CHECK(rep->events == 24);

  // The test-only format 1 writer writes what the fixture holds: one plain
  // frame per transaction, version 1, and log.json stays at 1.
  const std::string old = dir.sub("old");
  REQUIRE(CreateLog(old, std::nullopt, 1).ok());
  WriterOptions v1;
  v1.format_version = kFormatVersion1;
  WriteGrouped(old, 1, 12, 12, v1);
  CHECK(ReadIdentity(old)->format_version == 1);
  auto old_frames = Frames(old + "/segments/" + SegmentFileName(1), 1);
  REQUIRE(old_frames.size() == 12);
  for (const auto& f : old_frames) CHECK(f.h.version == 1);
}

}  // namespace cdc::log
