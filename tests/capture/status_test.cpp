// Invariants 2 and 10 of docs/invariants.md at their source: the flush
// position of every standby status is what the log holds durably, never
// what was received or only written.
#include "cdc/capture/status.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "cdc/base/fs.h"
#include "cdc/log/log_dir.h"
#include "test_util.h"

namespace cdc::capture {

namespace {

// A disk whose fdatasync waits while the gate is closed, or fails.
struct Disk {
  std::atomic<bool> open{true};
  std::atomic<bool> fail{false};
  std::atomic<int> waiting{0};
  Status Sync(int fd, const std::string& path) {
    ++waiting;
    while (!open.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    --waiting;
    if (fail.load()) return Status::IOError("fdatasync " + path + ": EIO");
    return ::fdatasync(fd) == 0 ? Status::OK()
                                : Status::IOError("fdatasync " + path);
  }
};

Status Txn(log::LogWriter& w, uint64_t t) {
  CDC_RETURN_IF_ERROR(w.Append(test::EventLine(t, 0)));
  CDC_RETURN_IF_ERROR(w.Commit(t * 16, 1764402062000000, t));
  return w.RequestWrite();
}

}  // namespace

TEST_CASE("a standby status confirms only what the log holds durably",
          "[capture][durability]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(log::OpenOrCreateLog(log).ok());
  Disk disk;
  log::WriterOptions opts;
  opts.sync_file = [&](int fd, const std::string& path) {
    return disk.Sync(fd, path);
  };
  auto w = log::LogWriter::Open(log, opts);
  REQUIRE(w.ok());

  // Nothing durable yet: nothing confirmed, whatever was received.
  StandbyStatus st = StatusFor(**w, 0x5000);
  CHECK(st.flush == 0);
  CHECK(st.write == 0x5000);

  REQUIRE(Txn(**w, 1).ok());
  REQUIRE((*w)->Sync().ok());
  const Lsn first = (*w)->position().FlushLsn();
  REQUIRE(first == 17);
  CHECK(StatusFor(**w, 0x5000).flush == first);

  // Written and being synced, the disk not answering: not confirmed.
  disk.open = false;
  for (uint64_t t = 2; t <= 5; ++t) REQUIRE(Txn(**w, t).ok());
  REQUIRE((*w)->RequestSync().ok());
  while (disk.waiting.load() == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Lsn written = (*w)->position().FlushLsn();
  REQUIRE(written == 5 * 16 + 1);
  st = StatusFor(**w, 0x5000);
  CHECK(st.flush == first);
  CHECK(st.write == 0x5000);
  CHECK(st.flush <= (*w)->durable_flush_lsn());

  // The sync completes: confirmed up to the last transaction it covered.
  disk.open = true;
  REQUIRE((*w)->WaitDurable(5 * 16, 10000).ok());
  st = StatusFor(**w, 0x5000);
  CHECK(st.flush == written);
  CHECK(st.write == 0x5000);
  // Received less than is durable (a restart resumes from the log): write
  // never reports less than flush.
  CHECK(StatusFor(**w, 3).write == written);

  // A failed fdatasync: what it should have covered is never confirmed.
  disk.fail = true;
  REQUIRE(Txn(**w, 6).ok());
  CHECK_FALSE((*w)->Sync().ok());
  CHECK(StatusFor(**w, 0x5000).flush == written);
}

}  // namespace cdc::capture
