// A log directory's identity (log.json) and its single-writer lock.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cdc/base/fs.h"
#include "cdc/base/status.h"

namespace cdc::log {

// log.json's format_version: the newest frame format the log may hold.
// Logs of version 1 (one transaction or part of one per frame) are read
// and appended to as they are; the first writer of this build to open one
// records version 2 before it writes a version 2 frame.
inline constexpr int kLogFormatVersion = 2;
inline constexpr int kOldestLogFormatVersion = 1;

// The source a log belongs to (docs/invariants.md, invariant 6). Empty for
// logs filled by `cdc-log import`. A PostgreSQL source is its cluster,
// database, slot and publication; a MariaDB source (kind "mariadb") is its
// database and the GTID domain its positions count in, so that any server
// holding the same GTIDs (a replica after a failover) is the same source.
struct SourceIdentity {
  std::string system_id;
  std::string database;
  std::string slot;
  std::string publication;
  std::string kind;  // "" (PostgreSQL) or "mariadb"
  uint32_t gtid_domain = 0;
  bool is_mariadb() const { return kind == "mariadb"; }
  // For messages: "system S, database D, slot L, publication P" or
  // "MariaDB database D, GTID domain N".
  std::string Describe() const;
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
// when it is unreadable or of another format version, or when a directory
// of the log is not one (CheckLogDirs). Every tool opens a log through
// here (or CreateLog), so none of them uses a planted directory.
Result<LogIdentity> ReadIdentity(const std::string& dir);

// The directories a log holds, LOG/segments and LOG/snapshots, are its
// own. A symbolic link under one of those names is never followed (it
// would send the writer's segments, or a snapshot request, wherever it
// points, and readers after them), nor is anything else that is not a
// directory used as one: Corruption "refusing LOG/NAME: ...", as OpenFile
// refuses files. The one place this is decided; every path into a log's
// directory comes from here.
// LogSubdir returns LOG/NAME when it is a directory or does not exist.
Result<std::string> LogSubdir(const std::string& dir, std::string_view name);
// Creates LOG/NAME (NewDirMode) when missing; LogSubdir's refusals.
Result<std::string> MakeLogSubdir(const std::string& dir,
                                  std::string_view name);
// LogSubdir for every directory a log may hold.
Status CheckLogDirs(const std::string& dir);

// Creates a new log in DIR (which may exist if empty). CannotCreate when DIR
// holds other files.
// `format_version` other than the default is for tests that make a log as
// an earlier release did.
Result<LogIdentity> CreateLog(const std::string& dir,
                              std::optional<SourceIdentity> source,
                              int format_version = kLogFormatVersion);

// Opens the log at DIR, creating it when DIR is missing or empty.
Result<LogIdentity> OpenOrCreateLog(const std::string& dir);

// Removes DIR when it holds a log that was created and never used: no
// source bound to it, nothing but log.json, LOCK and an empty first
// segment. Anything else is left where it is (and true is not returned).
// For a tool that created DIR and failed before writing (a capture that
// could not connect leaves no empty log behind).
Result<bool> RemoveUnusedLog(const std::string& dir);

// Records the source in a log created without one (first capture).
Status SetSource(const std::string& dir, LogIdentity* id,
                 const SourceIdentity& source);

// Records format version `version` in log.json (atomically) when it
// says less.
Status RaiseFormatVersion(const std::string& dir, LogIdentity* id, int version);

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
