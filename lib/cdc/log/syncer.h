// Syncer: the log writer's fdatasyncs and what they make durable
// (docs/invariants.md 2, 9 and 11).
//
// One fdatasync runs at a time: descriptors made by dup() share one
// writeback-error cursor, so of two overlapping fdatasyncs one may succeed
// after the other consumed the error, and the durable position would pass
// data that never reached the disk. A request arriving while one runs
// waits; the newest waiting request covers the older ones. A failed
// fdatasync is never retried (the page cache may have dropped the dirty
// pages, so a later success would prove nothing): every later sync fails
// with the same error. Any failure the writer reports (Fail) is as final:
// from then on the durable position and LOG/durable never move.
//
// Thread safety: the syncer's state is guarded by the mutex given at
// construction, which the writer also holds around its queue, so that
// handing a request over and passing the write ticket on are one step.
// Each method says whether it wants that mutex held. durable_lsn(),
// durable_flush(), synced_id(), has_failed(), busy() and stats() read
// atomics, from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/log/segment.h"

namespace cdc::log {

// fsync timings, updated by the writer's threads, readable from any thread.
struct SyncStats {
  static constexpr int kBuckets = 12;
  // Upper bounds in µs of the histogram buckets (the last is +Inf).
  static constexpr int64_t kBoundsUs[kBuckets - 1] = {
      250, 500, 1000, 2000, 5000, 10000, 25000, 50000, 100000, 250000, 1000000};
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> total_us{0};
  std::atomic<uint64_t> buckets[kBuckets] = {};
  std::atomic<uint64_t> bytes_written{0};
};

class Syncer {
 public:
  // Runs one fdatasync of `fd`; `path` names the file in messages.
  using SyncFn = std::function<Status(int fd, const std::string& path)>;

  // A sync asked for, and what is durable once its fdatasync succeeded.
  struct Request {
    int fd = -1;       // owned by the syncer once submitted; -1: none
    std::string path;  // of the segment, for messages
    Lsn lsn = 0;       // durable_lsn() once done
    Lsn flush = 0;     // durable_flush() once done
    uint64_t id = 0;   // synced_id() once done, whether or not it succeeded
    DurableMark mark;  // what LOG/durable may say once done
  };

  // `mu` must outlive the syncer. `sync_file` runs each fdatasync (SyncFile
  // when empty). LOG/durable in `log_dir` is rewritten after a successful
  // sync at most every `mark_ms`, and when forced.
  Syncer(std::mutex* mu, std::string log_dir, SyncFn sync_file, int mark_ms);
  Syncer(const Syncer&) = delete;
  Syncer& operator=(const Syncer&) = delete;

  // Before any sync, mu not needed: where recovery found the log, and what
  // LOG/durable holds.
  void Restore(Lsn durable_lsn, Lsn durable_flush,
               const std::optional<DurableMark>& mark);

  // mu held: records the failure `s` unless one is recorded already.
  void Fail(const Status& s);
  // mu held: the first failure (of a write or a sync); OK if none.
  const Status& failure() const { return failed_; }
  bool has_failed() const {
    return has_failed_.load(std::memory_order_relaxed);
  }

  // mu not needed: a request is being made (a descriptor duplicated) and
  // will be submitted; busy() until it completes.
  void Reserve() { unfinished_.fetch_add(1); }
  // Requests reserved and not completed: bytes written before the newest
  // of them may not be durable yet.
  bool busy() const { return unfinished_.load() > 0; }

  // mu held through `lk`. Completes `req` at once when it has no descriptor
  // (nothing to sync: `written` says whether its bytes got to the file) or
  // `written` failed. Otherwise it was Reserve()d: if no fdatasync runs,
  // runs it and every request submitted meanwhile, one at a time, releasing
  // `lk` during each; if one runs, leaves it to the thread running that.
  void Submit(Request req, const Status& written,
              std::unique_lock<std::mutex>& lk);

  // mu not held. Waits until no fdatasync runs (those waiting included),
  // then runs one of `fd` (not owned) in their place, for a segment that
  // must be durable now (before its seal). Moves no durable position.
  Status SyncNow(int fd, const std::string& path);

  // mu not held, and no fdatasync running. Writes the newest synced mark to
  // LOG/durable if it differs from what that holds and `force`, or if
  // mark_ms has passed since the last write. A failed write is ignored: it
  // loses protection, not data (the old mark stays).
  void MaybeWriteMark(bool force);

  // mu not held. Waits until synced_id() reaches `id`, or a failure;
  // returns the failure (OK if none).
  Status WaitSynced(uint64_t id);
  // mu not held. Waits up to `timeout_ms` for durable_lsn() to reach `lsn`,
  // or a failure; returns the failure (OK if none).
  Status WaitDurable(Lsn lsn, int timeout_ms);

  Lsn durable_lsn() const { return durable_lsn_.load(); }
  Lsn durable_flush() const { return durable_flush_.load(); }
  // The newest request id completed, with or without success.
  uint64_t synced_id() const { return synced_id_.load(); }

  // Bytes written to segments, reported with the sync timings.
  void AddWritten(uint64_t bytes) {
    stats_.bytes_written.fetch_add(bytes, std::memory_order_relaxed);
  }
  const SyncStats& stats() const { return stats_; }

 private:
  // mu held through `lk`, running_ set by the caller.
  void RunSyncs(Request req, std::unique_lock<std::mutex>& lk);
  // mu held.
  void Complete(const Request& req, const Status& s);
  // The one fdatasync in flight (running_ is set).
  Status TimedSync(int fd, const std::string& path);

  std::mutex* const mu_;
  const std::string dir_;
  const SyncFn sync_file_;
  const int mark_ms_;

  // Under *mu_.
  Status failed_;
  bool running_ = false;               // an fdatasync is in flight
  std::optional<Request> pending_;     // waiting for it; covers older ones
  DurableMark mark_synced_;            // the newest synced mark
  std::condition_variable cv_idle_;    // running_ went false
  std::condition_variable cv_synced_;  // a request completed

  // Read by the appending thread before every event: on a cache line of
  // its own, apart from what the syncing thread writes after each sync.
  alignas(64) std::atomic<bool> has_failed_{false};
  alignas(64) std::atomic<int> unfinished_{0};  // reserved, not completed
  std::atomic<Lsn> durable_lsn_{0};
  std::atomic<Lsn> durable_flush_{0};
  std::atomic<uint64_t> synced_id_{0};

  // Only the thread running fdatasyncs (running_), or the last one.
  Status sync_error_;         // the first failed fdatasync
  DurableMark mark_written_;  // what LOG/durable holds
  int64_t mark_written_at_ = 0;
  SyncStats stats_;
};

}  // namespace cdc::log
