// The retention pin: while a backup copies a log, retention removes no
// segment from it.
//
// LOG/backup.pin is a lock file. A backup holds a shared flock on it from
// before it lists the segments until it has copied the last one; retention
// takes an exclusive flock without waiting, and when it cannot (a backup is
// running) removes nothing this time. Locks die with their process, so a
// killed backup never leaves a log pinned.
#pragma once

#include <string>

#include "cdc/base/fs.h"
#include "cdc/base/status.h"

namespace cdc::log {

inline constexpr const char* kPinFileName = "backup.pin";

class RetentionPin {
 public:
  // A shared pin, waiting while retention is removing segments (which
  // takes moments). Permission when the log directory cannot be written
  // and holds no pin file yet.
  static Result<RetentionPin> Acquire(const std::string& dir);

 private:
  FileHandle fd_;
};

// For retention: an exclusive hold on the pin, or nothing (valid() false)
// when a backup holds it. No pin file: created (a log that retention may
// change is writable).
Result<FileHandle> TryExclusivePin(const std::string& dir, bool* pinned);

}  // namespace cdc::log
