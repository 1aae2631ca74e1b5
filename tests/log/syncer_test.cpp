#include "cdc/log/syncer.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cdc/base/fs.h"
#include "cdc/log/log_dir.h"
#include "test_util.h"

namespace cdc::log {
namespace {

// A log with one real segment-like file to fdatasync, and a syncer over it.
struct Fixture {
  test::TempDir dir;
  std::mutex mu;
  std::string path;
  FileHandle file;

  Fixture() {
    REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
    path = dir.sub("segment");
    auto f = OpenFile(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    REQUIRE(f.ok());
    file = std::move(f).value();
    const std::string bytes(4096, 'x');
    REQUIRE(PwriteAll(file.fd(), bytes.data(), bytes.size(), 0, path).ok());
  }

  // A request as the writer makes one: reserved, with a descriptor of its
  // own, making `lsn` durable and LOG/durable say `mark_bytes`.
  Syncer::Request Make(Syncer& s, uint64_t id, Lsn lsn, uint64_t mark_bytes) {
    s.Reserve();
    int fd = ::dup(file.fd());
    REQUIRE(fd >= 0);
    return Syncer::Request{fd,      path, lsn,
                           lsn + 1, id,   DurableMark{1, mark_bytes}};
  }

  void Submit(Syncer& s, Syncer::Request req, Status written = Status::OK()) {
    std::unique_lock<std::mutex> lk(mu);
    s.Submit(std::move(req), written, lk);
  }

  // What LOG/durable says: its byte count, 0 when there is none.
  uint64_t MarkBytes() {
    auto m = ReadDurableMark(dir.path());
    REQUIRE(m.ok());
    return *m ? (*m)->bytes : 0;
  }
};

}  // namespace

TEST_CASE(
    "syncer: a failed fdatasync is sticky: later syncs fail without one, "
    "nothing more is durable and the mark stays",
    "[log][syncer][durability]") {
  Fixture fx;
  int calls = 0;
  Syncer s(
      &fx.mu, fx.dir.path(),
      [&](int fd, const std::string& path) -> Status {
        // Only the second fdatasync fails; a retry would succeed.
        if (++calls == 2) return Status::IOError("cannot fsync " + path);
        return SyncFile(fd, path);
      },
      /*mark_ms=*/0);
  s.Restore(0, 0, std::nullopt);

  fx.Submit(s, fx.Make(s, 1, 16, 100));
  CHECK(s.durable_lsn() == 16);
  CHECK(s.durable_flush() == 17);
  CHECK(s.synced_id() == 1);
  CHECK(fx.MarkBytes() == 100);

  fx.Submit(s, fx.Make(s, 2, 32, 200));
  CHECK(calls == 2);
  CHECK(s.has_failed());
  CHECK(s.synced_id() == 2);  // done, though it failed
  CHECK(s.durable_lsn() == 16);
  CHECK(fx.MarkBytes() == 100);

  fx.Submit(s, fx.Make(s, 3, 48, 300));
  CHECK(calls == 2);  // never retried
  CHECK(s.synced_id() == 3);
  CHECK(s.durable_lsn() == 16);
  CHECK(s.durable_flush() == 17);
  CHECK(fx.MarkBytes() == 100);
  CHECK(s.WaitSynced(3).code() == Code::kIOError);
  CHECK(s.WaitDurable(48, 10).code() == Code::kIOError);
  CHECK(s.SyncNow(fx.file.fd(), fx.path).code() == Code::kIOError);
  CHECK(calls == 2);
  s.MaybeWriteMark(/*force=*/true);
  CHECK(fx.MarkBytes() == 100);
  CHECK_FALSE(s.busy());
}

TEST_CASE(
    "syncer: one fdatasync in flight; requests meanwhile wait, covered by "
    "one more, and a seal's sync waits for them all",
    "[log][syncer][durability]") {
  Fixture fx;
  std::mutex m;
  std::condition_variable cv;
  bool entered = false, release = false;
  int calls = 0, running = 0, max_running = 0;
  std::vector<std::string> synced;  // paths, in the order synced
  Syncer s(
      &fx.mu, fx.dir.path(),
      [&](int fd, const std::string& path) -> Status {
        std::unique_lock<std::mutex> lk(m);
        max_running = std::max(max_running, ++running);
        if (++calls == 1) {  // only the first blocks, until released
          entered = true;
          cv.notify_all();
          cv.wait(lk, [&] { return release; });
        }
        synced.push_back(path);
        --running;
        lk.unlock();
        return SyncFile(fd, path);
      },
      /*mark_ms=*/0);
  s.Restore(0, 0, std::nullopt);

  std::thread first([&] { fx.Submit(s, fx.Make(s, 1, 16, 100)); });
  {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return entered; });
  }
  // Handed over while the first runs: both return at once.
  fx.Submit(s, fx.Make(s, 2, 32, 200));
  fx.Submit(s, fx.Make(s, 3, 48, 300));
  CHECK(s.busy());
  CHECK(s.durable_lsn() == 0);
  CHECK(s.synced_id() == 0);
  std::thread seal([&] { CHECK(s.SyncNow(fx.file.fd(), "seal").ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard<std::mutex> lk(m);
    CHECK(synced.empty());  // the first is still in its fdatasync
    release = true;
  }
  cv.notify_all();
  first.join();
  seal.join();

  CHECK(max_running == 1);
  // The first, then one for requests 2 and 3, then the seal's.
  CHECK(synced == std::vector<std::string>{fx.path, fx.path, "seal"});
  CHECK(s.durable_lsn() == 48);
  CHECK(s.durable_flush() == 49);
  CHECK(s.synced_id() == 3);
  CHECK(fx.MarkBytes() == 300);
  CHECK_FALSE(s.busy());
  CHECK(s.stats().count.load() == 3);
}

TEST_CASE(
    "syncer: LOG/durable is written only after a successful sync, at most "
    "every mark_ms unless forced, and never after a failure",
    "[log][syncer][durability]") {
  Fixture fx;
  int calls = 0;
  Syncer s(
      &fx.mu, fx.dir.path(),
      [&](int fd, const std::string& path) {
        ++calls;
        return SyncFile(fd, path);
      },
      /*mark_ms=*/60000);
  s.Restore(16, 17, DurableMark{1, 10});
  s.MaybeWriteMark(/*force=*/true);
  CHECK(fx.MarkBytes() == 0);  // what recovery read is not written again
  CHECK(s.durable_lsn() == 16);

  // A request whose bytes never reached the file: no fdatasync, no mark.
  fx.Submit(s, Syncer::Request{-1, fx.path, 20, 21, 1, {}});
  CHECK(s.durable_lsn() == 20);  // nothing to sync: the caller said so
  CHECK(calls == 0);
  CHECK(fx.MarkBytes() == 0);

  fx.Submit(s, fx.Make(s, 2, 32, 100));
  CHECK(fx.MarkBytes() == 100);  // the first is written at once
  fx.Submit(s, fx.Make(s, 3, 48, 200));
  CHECK(s.durable_lsn() == 48);
  CHECK(fx.MarkBytes() == 100);  // within mark_ms
  s.MaybeWriteMark(/*force=*/true);
  CHECK(fx.MarkBytes() == 200);

  {
    std::lock_guard<std::mutex> lk(fx.mu);
    s.Fail(Status::IOError("cannot write segment"));
  }
  fx.Submit(s, fx.Make(s, 4, 64, 300));
  CHECK(calls == 3);  // the fdatasync ran and succeeded, but
  CHECK(s.durable_lsn() == 48);
  CHECK(s.synced_id() == 4);
  s.MaybeWriteMark(/*force=*/true);
  CHECK(fx.MarkBytes() == 200);
  CHECK(s.WaitSynced(4).code() == Code::kIOError);

  // A write that failed before its fdatasync: completed with its error.
  fx.Submit(s, fx.Make(s, 5, 80, 400), Status::IOError("short write"));
  CHECK(calls == 3);
  CHECK(s.synced_id() == 5);
  CHECK_FALSE(s.busy());
  std::lock_guard<std::mutex> lk(fx.mu);
  CHECK(s.failure().ToString().find("cannot write segment") !=
        std::string::npos);
}

}  // namespace cdc::log
