// A log directory's identity (log.json) and its single-writer lock.
#pragma once

#include <optional>
#include <string>

#include "cdc/base/fs.h"
#include "cdc/base/status.h"

namespace cdc::log {

inline constexpr int kLogFormatVersion = 1;

// The PostgreSQL source a log belongs to (invariant 6). Empty for logs
// filled by `cdc-log import`.
struct SourceIdentity {
  std::string system_id;
  std::string database;
  std::string slot;
  std::string publication;
  bool operator==(const SourceIdentity&) const = default;
};

struct LogIdentity {
  std::string log_id;  // 32 hex digits, random
  int format_version = kLogFormatVersion;
  std::string created;  // RFC 3339
  std::optional<SourceIdentity> source;
};

// log.json's text for `id` (also what `cdc-log info` shows of it).
std::string IdentityJson(const LogIdentity& id);

// Reads DIR/log.json. NotFound when DIR or log.json is missing; Corruption
// when it is unreadable or of another format version.
Result<LogIdentity> ReadIdentity(const std::string& dir);

// Creates a new log in DIR (which may exist if empty). CannotCreate when DIR
// holds other files.
Result<LogIdentity> CreateLog(const std::string& dir,
                              std::optional<SourceIdentity> source);

// Opens the log at DIR, creating it when DIR is missing or empty.
Result<LogIdentity> OpenOrCreateLog(const std::string& dir);

// Records the source in a log created without one (first capture).
Status SetSource(const std::string& dir, LogIdentity* id,
                 const SourceIdentity& source);

// A warning (one line, no program name) when DIR or DIR/segments can be
// written by other users (group or world write permission): they could
// plant files under names the writer uses. Empty when neither can, or when
// DIR does not exist yet.
std::string SharedDirWarning(const std::string& dir);
// The same for the directory holding FILE (e.g. --metrics-file).
std::string SharedParentWarning(const std::string& file);

// The exclusive writer lock (flock on DIR/LOCK), held until destruction or
// process death. Busy when another process holds it.
class WriterLock {
 public:
  static Result<WriterLock> Acquire(const std::string& dir);

 private:
  FileHandle fd_;
};

}  // namespace cdc::log
