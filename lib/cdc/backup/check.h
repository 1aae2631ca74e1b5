// cdc-backup verify and restore: both read a backup and its chain of
// bases, recompute every checksum and compare with the newest manifest.
#pragma once

#include <string>
#include <vector>

#include "cdc/backup/files.h"
#include "cdc/backup/manifest.h"
#include "cdc/base/status.h"

namespace cdc::backup {

struct CheckOptions {
  std::string path;        // a backup directory, an archive, or "-" (stdin)
  std::string search_dir;  // where bases are looked for (default: beside)
  ProgressFn progress;
};

struct CheckReport {
  Manifest manifest;  // the newest one's
  std::string manifest_sha256;
  std::vector<std::string> chain;     // newest first
  std::vector<std::string> problems;  // one line each; any fails the check
  uint64_t bytes = 0;                 // bytes read
  bool ok() const { return problems.empty(); }
};

// Recomputes size and SHA-256 of every file of the backup and of each base
// its manifest needs, checks each against the manifests, and the seq range
// of the segments. A problem with the data is a line in `problems`; the
// status is not OK when the check could not be made: a base missing
// (NotFound), a manifest of another format version (BadInput), a base of
// another log (BadInput), a manifest that is missing or damaged
// (CheckFailed).
Result<CheckReport> VerifyBackup(const CheckOptions& o);

struct RestoreOptions {
  CheckOptions check;
  std::string log;      // the new log directory: missing or empty
  int dir_mode = 0700;  // modes of what is restored
  int file_mode = 0600;
};

// Restores into `log`: builds the log in a hidden sibling directory while
// checking every byte as VerifyBackup does, checks the result as
// `cdc-log verify` does, then renames it into place. On any failure
// nothing is left. CannotCreate when `log` exists and is not empty;
// CheckFailed naming the first problem when the backup fails its check.
Result<CheckReport> RestoreBackup(const RestoreOptions& o);

}  // namespace cdc::backup
