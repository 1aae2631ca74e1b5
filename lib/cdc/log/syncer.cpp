#include "cdc/log/syncer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"

namespace cdc::log {

Syncer::Syncer(std::mutex* mu, std::string log_dir, SyncFn sync_file,
               int mark_ms)
    : mu_(mu),
      dir_(std::move(log_dir)),
      sync_file_(std::move(sync_file)),
      mark_ms_(mark_ms) {}

void Syncer::Restore(Lsn durable_lsn, Lsn durable_flush,
                     const std::optional<DurableMark>& mark) {
  durable_lsn_ = durable_lsn;
  durable_flush_ = durable_flush;
  if (mark) mark_written_ = mark_synced_ = *mark;
}

void Syncer::Fail(const Status& s) {
  if (failed_.ok()) failed_ = s;
  has_failed_ = true;
}

void Syncer::Submit(Request req, const Status& written,
                    std::unique_lock<std::mutex>& lk) {
  if (req.fd < 0) return Complete(req, written);
  if (!written.ok()) {
    ::close(req.fd);
    unfinished_.fetch_sub(1);
    return Complete(req, written);
  }
  if (running_) {
    if (pending_) {
      // The newer request's fdatasync covers the older one's bytes, and
      // its mark is the later one.
      ::close(pending_->fd);
      unfinished_.fetch_sub(1);
      req.lsn = std::max(req.lsn, pending_->lsn);
      req.flush = std::max(req.flush, pending_->flush);
      req.id = std::max(req.id, pending_->id);
    }
    pending_ = std::move(req);
    return;
  }
  running_ = true;
  RunSyncs(std::move(req), lk);
}

void Syncer::RunSyncs(Request req, std::unique_lock<std::mutex>& lk) {
  for (;;) {
    lk.unlock();
    Status s = TimedSync(req.fd, req.path);
    ::close(req.fd);
    lk.lock();
    unfinished_.fetch_sub(1);
    Complete(req, s);
    if (s.ok() && failed_.ok()) {
      mark_synced_ = req.mark;
      lk.unlock();
      MaybeWriteMark(/*force=*/false);
      lk.lock();
    }
    if (!pending_) break;
    req = std::move(*pending_);
    pending_.reset();
  }
  running_ = false;
  cv_idle_.notify_all();
}

void Syncer::Complete(const Request& req, const Status& s) {
  if (!s.ok()) Fail(s);
  // Syncs run one at a time and a failure is final (sync_error_), so a
  // successful one covers every byte written before it was requested.
  if (failed_.ok() && req.lsn > durable_lsn_.load()) durable_lsn_ = req.lsn;
  if (failed_.ok() && req.flush > durable_flush_.load())
    durable_flush_ = req.flush;
  synced_id_ = std::max(synced_id_.load(), req.id);
  cv_synced_.notify_all();
}

Status Syncer::SyncNow(int fd, const std::string& path) {
  std::unique_lock<std::mutex> lk(*mu_);
  cv_idle_.wait(lk, [&] { return !running_; });
  running_ = true;
  lk.unlock();
  Status s = TimedSync(fd, path);
  lk.lock();
  running_ = false;
  cv_idle_.notify_all();
  return s;
}

Status Syncer::TimedSync(int fd, const std::string& path) {
  // Never retried: after a failed fsync the page cache may have dropped
  // the dirty pages, so a later success would prove nothing.
  if (!sync_error_.ok()) return sync_error_;
  const int64_t t0 = MonoMicros();
  Status synced = sync_file_ ? sync_file_(fd, path) : SyncFile(fd, path);
  if (!synced.ok()) {
    sync_error_ = synced;
    return synced;
  }
  const int64_t us = MonoMicros() - t0;
  int b = 0;
  while (b < SyncStats::kBuckets - 1 && us > SyncStats::kBoundsUs[b]) ++b;
  stats_.buckets[b].fetch_add(1, std::memory_order_relaxed);
  stats_.count.fetch_add(1, std::memory_order_relaxed);
  stats_.total_us.fetch_add(static_cast<uint64_t>(us),
                            std::memory_order_relaxed);
  return Status::OK();
}

void Syncer::MaybeWriteMark(bool force) {
  DurableMark m;
  {
    std::lock_guard<std::mutex> lk(*mu_);
    m = mark_synced_;
  }
  if (m.segment == 0 ||
      (m.segment == mark_written_.segment && m.bytes == mark_written_.bytes))
    return;
  const int64_t now = MonoMicros();
  if (!force && mark_written_at_ != 0 &&
      now - mark_written_at_ < int64_t{mark_ms_} * 1000)
    return;
  if (WriteDurableMark(dir_, m).ok()) {
    mark_written_ = m;
    mark_written_at_ = now;
  }
}

Status Syncer::WaitSynced(uint64_t id) {
  std::unique_lock<std::mutex> lk(*mu_);
  cv_synced_.wait(lk, [&] { return synced_id_.load() >= id || !failed_.ok(); });
  return failed_;
}

Status Syncer::WaitDurable(Lsn lsn, int timeout_ms) {
  std::unique_lock<std::mutex> lk(*mu_);
  cv_synced_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] {
    return durable_lsn_.load() >= lsn || !failed_.ok();
  });
  return failed_;
}

}  // namespace cdc::log
