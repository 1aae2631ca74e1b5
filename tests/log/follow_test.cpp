#include <atomic>
#include <catch2/catch.hpp>
#include <random>
#include <thread>

#include "cdc/log/reader.h"
#include "cdc/log/watch.h"
#include "cdc/log/writer.h"
#include "test_util.h"

namespace cdc::log {

TEST_CASE(
    "a follower never sees part of a transaction and sees every event "
    "once, in order",
    "[log][follow]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(OpenOrCreateLog(log).ok());
  WriterOptions opts;
  opts.segment_bytes = 16 << 10;   // rotate often under the reader
  opts.frame_bytes = 1024;         // big transactions span many frames
  opts.write_buffer_bytes = 2048;  // and reach the file before they commit
  constexpr uint64_t kTxns = 400;
  std::vector<uint64_t> sizes;
  std::mt19937 rng(42);
  for (uint64_t t = 0; t < kTxns; ++t)
    sizes.push_back(t % 50 == 0 ? 200 : 1 + rng() % 12);
  uint64_t total = 0;
  for (auto s : sizes) total += s;

  std::atomic<bool> writer_ok{true};
  std::thread writer([&] {
    auto w = LogWriter::Open(log, opts);
    if (!w.ok()) {
      writer_ok = false;
      return;
    }
    for (uint64_t t = 0; t < kTxns; ++t) {
      for (uint64_t i = 0; i < sizes[t]; ++i)
        if (!(*w)->Append(test::EventLine(t + 1, i, 40)).ok())
          writer_ok = false;
      if (!(*w)->Commit((t + 1) * 16, 0, t + 1).ok()) writer_ok = false;
      if (t % 3 == 0 && !(*w)->Sync().ok()) writer_ok = false;
      if (t % 25 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!(*w)->Sync().ok()) writer_ok = false;
  });

  auto reader = LogReader::Open(log);
  REQUIRE(reader.ok());
  auto waiter = ChangeWaiter::Create(log);
  REQUIRE(waiter.ok());
  uint64_t expect = 1, txn = 1, in_txn = 0;
  bool ok = true;
  std::string why;
  Batch b;
  while (expect <= total) {
    auto got = (*reader)->Next(&b);
    REQUIRE(got.ok());
    if (!*got) {
      // Whenever the reader runs dry it must stand on a transaction end.
      if (in_txn != 0) {
        ok = false;
        why = "ran dry inside txn " + std::to_string(txn);
      }
      REQUIRE(waiter->Wait(200).ok());
      continue;
    }
    b.ForEach([&](uint64_t seq, std::string_view line, bool last) {
      if (seq != expect) {
        ok = false;
        why = "seq " + std::to_string(seq) + " expected " +
              std::to_string(expect);
      }
      ++expect;
      ++in_txn;
      if (line.find("\"xid\":" + std::to_string(txn) + ",") ==
          std::string_view::npos)
        ok = false, why = "xid mismatch at txn " + std::to_string(txn);
      if (last) {
        if (in_txn != sizes[txn - 1]) ok = false, why = "txn size";
        in_txn = 0;
        ++txn;
      }
    });
    INFO(why);
    REQUIRE(ok);
  }
  writer.join();
  CHECK(writer_ok);
  CHECK(expect == total + 1);
  CHECK(txn == kTxns + 1);
  auto more = (*reader)->Next(&b);
  REQUIRE(more.ok());
  CHECK_FALSE(*more);
}

}  // namespace cdc::log
