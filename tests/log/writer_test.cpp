#include "cdc/log/writer.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "cdc/base/sha256.h"
#include "cdc/event/event.h"
#include "cdc/log/reader.h"
#include "cdc/log/verify.h"
#include "test_util.h"

namespace cdc::log {

// A writer of 256-byte frames and a 512-byte write buffer (so the frames
// of a large transaction reach the file before it ends), with one
// transaction of one event (xid 1, LSN 16) durable.
static std::unique_ptr<LogWriter> SmallFramesAfterOneTxn(
    const std::string& dir) {
  REQUIRE(CreateLog(dir, std::nullopt).ok());
  WriterOptions opts;
  opts.frame_bytes = 256;
  opts.write_buffer_bytes = 512;
  auto w = LogWriter::Open(dir, opts);
  REQUIRE(w.ok());
  REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
  REQUIRE((*w)->Commit(16, 0, 1).ok());
  REQUIRE((*w)->Sync().ok());
  return std::move(w).value();
}

TEST_CASE("a second writer is refused while the first holds the lock",
          "[log][writer]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  auto w1 = LogWriter::Open(dir.path(), {});
  REQUIRE(w1.ok());
  auto w2 = LogWriter::Open(dir.path(), {});
  REQUIRE_FALSE(w2.ok());
  CHECK(w2.status().code() == Code::kBusy);
  CHECK_THAT(w2.status().message(),
             Catch::Contains("is locked by another writer (pid"));
  w1 = Status::Internal("closed");  // releases the lock
  CHECK(LogWriter::Open(dir.path(), {}).ok());
}

TEST_CASE(
    "an aborted transaction leaves nothing, even after it reached the "
    "file",
    "[log][writer]") {
  test::TempDir dir;
  auto w = SmallFramesAfterOneTxn(dir.path());
  for (int i = 0; i < 100; ++i)
    REQUIRE(w->Append(test::EventLine(2, i, 64)).ok());
  REQUIRE(w->Abort().ok());
  REQUIRE(w->Append(test::EventLine(3, 0)).ok());
  REQUIRE(w->Commit(48, 0, 3).ok());
  REQUIRE(w->Sync().ok());
  auto got = test::ReadAll(dir.path());
  REQUIRE(got.seqs == std::vector<uint64_t>{1, 2});
  CHECK_THAT(got.lines[1], Catch::Contains("\"xid\":3,"));
  auto rep = VerifyLog(dir.path());
  CHECK(rep->ok());
}

TEST_CASE(
    "a write request shows commits to readers without making them durable",
    "[log][writer]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  auto w = LogWriter::Open(dir.path(), {});
  REQUIRE(w.ok());
  REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
  REQUIRE((*w)->Commit(16, 0, 1).ok());
  REQUIRE((*w)->Sync().ok());
  REQUIRE((*w)->durable_lsn() == 16);
  REQUIRE((*w)->Append(test::EventLine(2, 0)).ok());
  REQUIRE((*w)->Commit(32, 0, 2).ok());
  // Nothing reaches the file before a request: the frame waits in memory.
  CHECK(test::ReadAll(dir.path()).seqs.size() == 1);
  REQUIRE((*w)->RequestWrite().ok());
  size_t seen = 0;
  for (int i = 0; i < 500 && seen < 2; ++i) {
    seen = test::ReadAll(dir.path()).seqs.size();
    if (seen < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(seen == 2);
  CHECK((*w)->durable_lsn() == 16);  // written, not fsynced
  CHECK_FALSE((*w)->SyncPending());
  REQUIRE((*w)->RequestSync().ok());
  // Pending until the fsync has finished, and then durable.
  REQUIRE((*w)->WaitDurable(32, 30000).ok());
  for (int i = 0; i < 500 && (*w)->SyncPending(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK_FALSE((*w)->SyncPending());
  CHECK((*w)->durable_lsn() == 32);
}

TEST_CASE("large events move into frames of their own, intact",
          "[log][writer]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  WriterOptions opts;
  opts.frame_bytes = 4096;
  auto w = LogWriter::Open(dir.path(), opts);
  REQUIRE(w.ok());
  auto big = [](char c, size_t n) {
    std::string e = "{\"v\":\"" + std::string(n, c) + "\"}";
    e.reserve(e.size() + 1);  // room for the newline: taken, not copied
    return e;
  };
  std::vector<std::string> want;
  auto append = [&](std::string e, bool taking) {
    want.push_back(e);
    if (!taking) return (*w)->Append(e);
    Status s = (*w)->AppendTaking(&e);
    // Taken (when it has room for the newline), else copied.
    return s;
  };
  REQUIRE(append(test::EventLine(1, 0), true).ok());  // small: copied
  REQUIRE((*w)->EventFollows().ok());                 // small: nothing
  REQUIRE(append(big('a', 5u << 20), true).ok());
  REQUIRE((*w)->EventFollows().ok());  // large: written now
  REQUIRE(append(big('b', 10000), true).ok());
  std::string exact = "{\"v\":\"" + std::string(9000, 'c') + "\"}";
  exact.shrink_to_fit();
  REQUIRE(append(exact, true).ok());  // no room for the newline: copied
  REQUIRE(append(test::EventLine(1, 4), false).ok());
  REQUIRE((*w)->Commit(16, 0, 1).ok());
  REQUIRE((*w)->Sync().ok());
  auto got = test::ReadAll(dir.path());
  REQUIRE(got.lines.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(i);
    std::string native;
    event::AppendNative(i + 1, want[i], i + 1 == want.size(), &native);
    CHECK(got.lines[i] == native);
  }
  auto rep = VerifyLog(dir.path());
  CHECK(rep->ok());
}

TEST_CASE("events appended in batches read back as if appended one by one",
          "[log][writer]") {
  test::TempDir one, batched;
  REQUIRE(CreateLog(one.path(), std::nullopt).ok());
  REQUIRE(CreateLog(batched.path(), std::nullopt).ok());
  WriterOptions opts;
  opts.frame_bytes = 1024;
  auto a = LogWriter::Open(one.path(), opts);
  auto b = LogWriter::Open(batched.path(), opts);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  // A lone event, then batches of 1, 7 and 40 events (a frame's worth and
  // more), an empty batch, and a last lone event: two transactions.
  int i = 0;
  std::string batch;
  const char* was = nullptr;
  auto add_batch = [&](uint32_t n) {
    batch.clear();
    for (uint32_t k = 0; k < n; ++k, ++i) {
      const std::string e = test::EventLine(1, i, 40);
      REQUIRE((*a)->Append(e).ok());
      batch += e + "\n";
    }
    was = batch.data();
    REQUIRE((*b)->AppendEvents(&batch, n).ok());
    CHECK(batch.empty());
  };
  for (int txn = 1; txn <= 2; ++txn) {
    const std::string lone = test::EventLine(txn, i++, 40);
    REQUIRE((*a)->Append(lone).ok());
    REQUIRE((*b)->Append(lone).ok());
    add_batch(1);
    CHECK(batch.data() == was);  // joined the frame being gathered: copied
    // A frame's worth (7 events of 150 bytes and more) behind what was
    // gathered: that goes first, as a frame of its own, and the batch is
    // taken, not copied behind it.
    add_batch(7);
    CHECK(batch.data() != was);
    add_batch(40);
    add_batch(40);  // the frame before was full and went: taken, not copied
    CHECK(batch.data() != was);
    add_batch(0);
    const std::string last = test::EventLine(txn, i++, 40);
    REQUIRE((*a)->Append(last).ok());
    REQUIRE((*b)->Append(last).ok());
    REQUIRE((*a)->Commit(16 * txn, 0, txn).ok());
    REQUIRE((*b)->Commit(16 * txn, 0, txn).ok());
  }
  REQUIRE((*a)->Sync().ok());
  REQUIRE((*b)->Sync().ok());
  auto want = test::ReadAll(one.path());
  auto got = test::ReadAll(batched.path());
  REQUIRE(want.lines.size() == static_cast<size_t>(i));
  CHECK(got.seqs == want.seqs);
  CHECK(got.lines == want.lines);
  CHECK((*b)->durable_lsn() == 32);
  auto rep = VerifyLog(batched.path());
  REQUIRE(rep.ok());
  CHECK(rep->ok());
}

TEST_CASE("sealed segments carry a correct seal record", "[log][writer]") {
  test::TempDir dir;
  WriterOptions opts;
  opts.segment_bytes = 1024;
  test::WriteTxns(dir.path(), 1, 30, 3, opts);
  auto segs = ListSegments(dir.path());
  REQUIRE(segs->size() > 2);
  uint64_t expect_first = 1;
  for (const auto& s : *segs) {
    if (!s.sealed) continue;
    REQUIRE(s.seal.has_value());
    CHECK(s.seal->sha256 == *Sha256File(s.path));
    CHECK(s.seal->bytes == test::SizeOf(s.path));
    CHECK(s.seal->first_seq == expect_first);
    CHECK(s.base_seq == expect_first);
    CHECK(s.seal->last_lsn == (s.seal->end_seq - 1) / 3 * 16);
    expect_first = s.seal->end_seq;
  }
  // A missing record (crash while sealing) is rebuilt by the next writer.
  const std::string rec = SealRecordPath((*segs)[1].path);
  REQUIRE(std::remove(rec.c_str()) == 0);
  auto w = LogWriter::Open(dir.path(), opts);
  REQUIRE(w.ok());
  CHECK((*w)->recovery().resealed == 1);
  CHECK(ReadSealRecord((*segs)[1].path)->sha256 ==
        *Sha256File((*segs)[1].path));
}

TEST_CASE("readers seek by seq, LSN and time without reading everything",
          "[log][reader]") {
  test::TempDir dir;
  WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(dir.path(), 1, 50, 4, opts);  // txn t: seqs 4t-3..4t
  auto r = LogReader::Open(dir.path());
  REQUIRE(r.ok());
  auto first = [&]() {
    Batch b;
    uint64_t s = 0;
    auto got = (*r)->Next(&b);
    REQUIRE(got.ok());
    if (!*got) return s;
    b.ForEach([&](uint64_t seq, std::string_view, bool) {
      if (s == 0) s = seq;
    });
    return s;
  };
  REQUIRE((*r)->SeekSeq(103).ok());
  CHECK(first() == 103);
  REQUIRE((*r)->SeekLsn(30 * 16).ok());
  CHECK(first() == 117);
  REQUIRE((*r)->SeekLsn(30 * 16 - 1).ok());
  CHECK(first() == 117);
  REQUIRE((*r)->SeekTime(1764402062000000 + 41).ok());
  CHECK(first() == 161);
  REQUIRE((*r)->SeekEnd().ok());
  CHECK(first() == 0);
  CHECK((*r)->next_seq() == 201);
  REQUIRE((*r)->SeekSeq(999).ok());
  CHECK(first() == 0);
}

TEST_CASE("LSN and time seeks bisect the segments: O(log segments) records",
          "[log][reader][seek]") {
  test::TempDir dir;
  WriterOptions opts;
  opts.segment_bytes = 1024;
  const uint64_t txns = 2000;  // a segment rolls at a sync: every 7th
  test::WriteTxns(dir.path(), 1, txns, 4, opts);  // txn t: seqs 4t-3..4t
  auto segs = ListSegmentFiles(dir.path());
  REQUIRE(segs.ok());
  const size_t n = segs->size();
  REQUIRE(n >= 256);
  size_t log2 = 0;
  while ((size_t{1} << log2) < n) ++log2;
  auto r = LogReader::Open(dir.path());
  REQUIRE(r.ok());
  auto first = [&]() {
    Batch b;
    auto got = (*r)->Next(&b);
    REQUIRE(got.ok());
    REQUIRE(*got);
    uint64_t s = 0;
    b.ForEach([&](uint64_t seq, std::string_view, bool) {
      if (s == 0) s = seq;
    });
    return s;
  };
  uint64_t most = 0;
  for (uint64_t t = 1; t <= txns; t += 7) {
    uint64_t before = (*r)->seal_records_read();
    REQUIRE((*r)->SeekLsn(t * 16).ok());  // WriteTxns commits txn t at 16t
    CHECK(first() == 4 * t - 3);
    most = std::max(most, (*r)->seal_records_read() - before);
    before = (*r)->seal_records_read();
    REQUIRE((*r)->SeekTime(1764402062000000 + static_cast<int64_t>(t)).ok());
    CHECK(first() == 4 * t - 3);
    most = std::max(most, (*r)->seal_records_read() - before);
  }
  CHECK(most <= log2);  // a linear walk would read up to n - 1 = hundreds
  CHECK(most >= 1);

  // A record the bisection skips on must agree with the directory: one
  // whose size is not the segment's is corruption, not a place to land.
  const std::string probed = SealRecordPath((*segs)[(n - 1) / 2].path);
  std::string original;
  {
    std::ifstream f(probed);
    original.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::string text = original;
  const size_t at = text.find("\"bytes\":");
  REQUIRE(at != std::string::npos);
  text.insert(at + 8, "1");  // 10 times the size and then some
  {
    std::ofstream f(probed, std::ios::trunc);
    f << text;
  }
  Status edited = (*r)->SeekLsn(txns * 16);
  CHECK(edited.code() == Code::kCorruption);
  CHECK(edited.message().find("bytes") != std::string::npos);
  {
    std::ofstream f(probed, std::ios::trunc);
    f << original;
  }

  // A lost seal record neither stops nor misleads a seek: that segment is
  // read instead of skipped.
  REQUIRE(std::filesystem::remove(SealRecordPath((*segs)[n / 2].path)));
  const uint64_t late = txns - 3;
  REQUIRE((*r)->SeekLsn(late * 16).ok());
  CHECK(first() == 4 * late - 3);
  REQUIRE((*r)->SeekLsn(16).ok());
  CHECK(first() == 1);

  // A damaged record the bisection reads is reported, not trusted.
  {
    std::ofstream f(SealRecordPath((*segs)[(n - 1) / 2].path), std::ios::trunc);
    f << "{\"sha256\": 7}\n";
  }
  Status st = (*r)->SeekLsn(txns * 16);
  CHECK(st.code() == Code::kCorruption);
}

TEST_CASE(
    "the reader's scan for transaction ends runs a window ahead, not to the "
    "end of the segment",
    "[log][reader]") {
  test::TempDir dir;
  REQUIRE(OpenOrCreateLog(dir.path()).ok());
  // 2,000 frames of one 4 KiB event each (random letters: about 2.6 KiB
  // compressed): one segment five times the window.
  constexpr uint64_t kTxns = 2000;
  {
    auto w = LogWriter::Open(dir.path(), {});
    REQUIRE(w.ok());
    uint64_t x = 88172645463325252ull;
    for (uint64_t t = 1; t <= kTxns; ++t) {
      std::string pad(4096, 'a');
      for (char& c : pad) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        c = static_cast<char>('a' + x % 26);
      }
      REQUIRE((*w)->Append("{\"id\":" + std::to_string(t) + ",\"pad\":\"" +
                           pad + "\"}")
                  .ok());
      REQUIRE(
          (*w)->Commit(t * 16, 1764402062000000 + static_cast<int64_t>(t), t)
              .ok());
      REQUIRE((*w)->RequestWrite().ok());  // one frame per transaction
    }
    REQUIRE((*w)->Sync().ok());
  }
  auto segs = ListSegmentFiles(dir.path());
  REQUIRE(segs.ok());
  REQUIRE(segs->size() == 1);
  REQUIRE(std::filesystem::file_size(segs->front().path) >
          3 * LogReader::kScanAhead);

  // The first event costs the window's headers, not the segment's.
  auto r = LogReader::Open(dir.path());
  REQUIRE(r.ok());
  Batch b;
  auto got = (*r)->Next(&b);
  REQUIRE(got.ok());
  REQUIRE(*got);
  CHECK(b.header.first_seq == 1);
  CHECK((*r)->frame_headers_scanned() < kTxns / 4);
  // Reading on scans each header once and returns every event.
  uint64_t events = b.header.event_count;
  while (true) {
    got = (*r)->Next(&b);
    REQUIRE(got.ok());
    if (!*got) break;
    events += b.header.event_count;
  }
  CHECK(events == kTxns);
  // Each header once, and the end of the file looked at (twice, at most).
  CHECK((*r)->frame_headers_scanned() >= kTxns);
  CHECK((*r)->frame_headers_scanned() <= kTxns + 2);
  // In blocks, not a read per header and per frame (4 per frame before):
  // each byte about twice (once by the scan, once by Next), a block of
  // kReadAhead at a time, plus a partial block where each window ends.
  const uint64_t bytes = std::filesystem::file_size(segs->front().path);
  CHECK((*r)->blocks_read() <= 2 * (bytes / LogReader::kReadAhead) +
                                   2 * (bytes / LogReader::kScanAhead) + 4);

  // Damage beyond the first window is still reported where it is: every
  // event before it is returned, then the reader fails.
  uint64_t off = 0, k = 0;
  {
    auto f = SegmentFile::Open(segs->front().path);
    REQUIRE(f.ok());
    auto size = f->Size();
    REQUIRE(size.ok());
    for (; k < 1600; ++k) {
      auto at = f->ReadHeader(off, *size);
      REQUIRE(at.ok());
      REQUIRE(at->status == FrameStatus::kOk);
      off += at->header.frame_size();
    }
  }
  REQUIRE(off > 2 * LogReader::kScanAhead);
  test::FlipByte(segs->front().path, off + 1);  // frame 1,601's magic
  r = LogReader::Open(dir.path());
  REQUIRE(r.ok());
  events = 0;
  Status end;
  while (true) {
    auto more = (*r)->Next(&b);
    if (!more.ok()) {
      end = more.status();
      break;
    }
    if (!*more) break;
    events += b.header.event_count;
  }
  CHECK(events == k);
  CHECK(end.code() == Code::kCorruption);
  CHECK_THAT(end.message(), Catch::Contains("seq " + std::to_string(k + 1)));
}

}  // namespace cdc::log

namespace cdc::log {

// Models the kernel's writeback-error reporting for descriptors that share
// one open file description (dup): an error is reported once, to the first
// fdatasync that checks after it happened; later ones succeed.
TEST_CASE("an EIO from fdatasync is never lost to an overlapping sync",
          "[log][writer][durability]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  std::mutex m;
  std::condition_variable cv;
  bool armed = false, consumed = false;
  int calls = 0;
  WriterOptions opts;
  opts.compress_threads = 2;
  opts.sync_file = [&](int fd, const std::string& path) -> Status {
    std::unique_lock<std::mutex> lk(m);
    if (!armed) {
      lk.unlock();
      return SyncFile(fd, path);
    }
    if (++calls == 1) {
      // Sees the error and is slow to report it (descheduled, say).
      consumed = true;
      cv.notify_all();
      lk.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return Status::IOError("cannot fsync " + path + ": Input/output error");
    }
    cv.wait(lk, [&] { return consumed; });
    return Status::OK();  // the error was reported to the other sync
  };
  auto w = LogWriter::Open(dir.path(), opts);
  REQUIRE(w.ok());
  REQUIRE((*w)->Append(test::EventLine(1, 0)).ok());
  REQUIRE((*w)->Commit(16, 0, 1).ok());
  REQUIRE((*w)->Sync().ok());
  REQUIRE((*w)->durable_lsn() == 16);
  {
    std::lock_guard<std::mutex> lk(m);
    armed = true;
  }
  REQUIRE((*w)->Append(test::EventLine(2, 0)).ok());
  REQUIRE((*w)->Commit(32, 0, 2).ok());
  REQUIRE((*w)->RequestSync().ok());  // its fdatasync gets the EIO
  REQUIRE((*w)->Append(test::EventLine(3, 0)).ok());
  REQUIRE((*w)->Commit(48, 0, 3).ok());
  REQUIRE((*w)->RequestSync().ok());  // would succeed if it ran alongside
  Status s = (*w)->WaitDurable(48, 2000);
  CHECK(s.code() == Code::kIOError);
  CHECK((*w)->durable_lsn() == 16);  // nothing past the failed sync
  CHECK((*w)->Sync().code() == Code::kIOError);
  CHECK((*w)->durable_lsn() == 16);
}

TEST_CASE(
    "a follower that scanned the frames of a transaction the writer then "
    "aborted reads what the writer wrote in their place",
    "[log][reader]") {
  test::TempDir dir;
  auto w = SmallFramesAfterOneTxn(dir.path());
  auto r = LogReader::Open(dir.path());
  REQUIRE(r.ok());
  Batch b;
  auto got = (*r)->Next(&b);
  REQUIRE(got.ok());
  REQUIRE(*got);
  // A large transaction whose frames reach the file; the follower scans
  // them (no transaction end, so it returns nothing of it).
  for (int i = 0; i < 100; ++i)
    REQUIRE(w->Append(test::EventLine(2, i, 64)).ok());
  auto segs = ListSegmentFiles(dir.path());
  REQUIRE(segs.ok());
  const auto committed = std::filesystem::file_size(segs->back().path);
  auto before = committed;
  for (int i = 0; i < 2000 && before < committed + 2048; ++i) {
    REQUIRE(w->RequestWrite().ok());  // the writer's thread writes them
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    before = std::filesystem::file_size(segs->back().path);
  }
  REQUIRE(before >= committed + 2048);
  got = (*r)->Next(&b);
  REQUIRE(got.ok());
  CHECK_FALSE(*got);
  CHECK((*r)->frame_headers_scanned() > 2);
  // The writer aborts it (cutting its frames from the file) and writes two
  // transactions of other sizes where they were.
  REQUIRE(w->Abort().ok());
  REQUIRE(std::filesystem::file_size(segs->back().path) < before);
  for (uint64_t x = 3; x <= 4; ++x) {
    for (int i = 0; i < 7; ++i)
      REQUIRE(w->Append(test::EventLine(x, i, 8 + 40 * i)).ok());
    REQUIRE(w->Commit(16 * x, 0, x).ok());
  }
  REQUIRE(w->Sync().ok());
  std::vector<std::string> lines;
  for (;;) {
    got = (*r)->Next(&b);
    REQUIRE(got.ok());
    if (!*got) break;
    CHECK(b.header.first_seq == 2 + lines.size());
    b.ForEach([&](uint64_t, std::string_view line, bool) {
      lines.emplace_back(line);
    });
  }
  REQUIRE(lines.size() == 14);
  CHECK_THAT(lines.front(), Catch::Contains("\"xid\":3,"));
  CHECK_THAT(lines.back(), Catch::Contains("\"xid\":4,"));
}

}  // namespace cdc::log
