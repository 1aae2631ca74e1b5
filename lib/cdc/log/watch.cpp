#include "cdc/log/watch.h"

#include <errno.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "cdc/base/logging.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/segment.h"

namespace cdc::log {

namespace {
constexpr int kSlowPollMs = 500;
}

Result<ChangeWaiter> ChangeWaiter::Create(const std::string& log_dir) {
  ChangeWaiter w;
  CDC_ASSIGN_OR_RETURN(const std::string segments,
                       LogSubdir(log_dir, kSegmentsDir));
  // Following still works without inotify, slower: say why, naming the
  // limit when it is one (many followers of one user on one machine).
  auto slow = [&](int err, int limit_errno, const char* limit) {
    LogWarning(std::string("cannot watch ") + segments +
               " (inotify: " + std::strerror(err) +
               (err == limit_errno
                    ? std::string("; the limit is the sysctl ") + limit
                    : std::string()) +
               "): looking for new events every 0.5 s instead");
  };
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    slow(errno, EMFILE, "fs.inotify.max_user_instances");
    return w;
  }
  w.fd_ = FileHandle(fd);
  if (::inotify_add_watch(fd, segments.c_str(),
                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE |
                              IN_DONT_FOLLOW | IN_ONLYDIR) < 0) {
    const int err = errno;
    if (err == ENOENT) return ErrnoStatus("watch", segments, err);
    slow(err, ENOSPC, "fs.inotify.max_user_watches");
    w.fd_.Reset();
  }
  return w;
}

Result<ChangeWaiter::Wake> ChangeWaiter::Wait(int timeout_ms, int watch_fd,
                                              bool watch_readable) {
  pollfd fds[2];
  int n = 0;
  if (fd_.valid()) fds[n++] = {fd_.fd(), POLLIN, 0};
  const int watch_idx = watch_fd >= 0 ? n : -1;
  if (watch_fd >= 0)
    fds[n++] = {watch_fd, static_cast<short>(watch_readable ? POLLIN : 0), 0};
  int t = timeout_ms;
  if (!fd_.valid() && (t < 0 || t > kSlowPollMs)) t = kSlowPollMs;
  int rc = ::poll(fds, static_cast<nfds_t>(n), t);
  if (rc < 0) {
    if (errno == EINTR) return Wake::kTimeout;
    return ErrnoStatus("poll", "log", errno);
  }
  if (watch_idx >= 0 && fds[watch_idx].revents != 0) return Wake::kWatchedFd;
  if (fd_.valid() && (fds[0].revents & POLLIN)) {
    char buf[4096];
    while (::read(fd_.fd(), buf, sizeof buf) > 0) {
    }
    return Wake::kChanged;
  }
  return fd_.valid() ? Wake::kTimeout : Wake::kChanged;
}

}  // namespace cdc::log
