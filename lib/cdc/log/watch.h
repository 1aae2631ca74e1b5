// ChangeWaiter: sleeps until a log may have new data, without busy looping.
//
// Uses inotify on the segments directory (a write, a new or a removed
// segment wakes it at once) and falls back to a slow poll where inotify is
// unavailable. Spurious wake-ups are possible; callers re-read the log.
#pragma once

#include <string>

#include "cdc/base/fs.h"
#include "cdc/base/status.h"

namespace cdc::log {

class ChangeWaiter {
 public:
  static Result<ChangeWaiter> Create(const std::string& log_dir);

  enum class Wake { kChanged, kTimeout, kWatchedFd };
  // Waits up to `timeout_ms` (-1: until a change). If `watch_fd` >= 0, also
  // returns kWatchedFd when it reports an error or hang-up (e.g. stdout's
  // reader went away) or, with `watch_readable`, when it is readable.
  Result<Wake> Wait(int timeout_ms, int watch_fd = -1,
                    bool watch_readable = false);

 private:
  FileHandle fd_;  // inotify, or invalid (slow poll)
};

}  // namespace cdc::log
