// cdc-backup create: an online, consistent copy of a log.
//
// While a writer appends: log.json; consumers.db through SQLite's online
// backup API (copied first, so no cursor in the backup is beyond its
// events); every sealed segment and its seal record as they are, the
// segment's SHA-256 checked against its record on the way; the active
// segment up to its last complete transaction. Retention is pinned
// (log/pin.h) from before the segments are listed until the last is
// copied. The manifest is written last and atomically: a directory appears
// under its name only when whole; an archive without its manifest (the
// last entry) is an unfinished one.
#pragma once

#include <string>

#include "cdc/backup/files.h"
#include "cdc/backup/manifest.h"
#include "cdc/base/status.h"

namespace cdc::backup {

struct CreateOptions {
  std::string log;
  // A directory that does not exist yet (or is empty), or "-": one tar
  // archive on stdout.
  std::string out;
  // --incremental: the base backup (directory or archive); empty for a
  // full backup. Only what the base lacks is stored.
  std::string base;
  ProgressFn progress;
  // A directory backup's files and directories are fdatasynced before the
  // manifest is written (false: --no-sync, as pg_basebackup's: faster, but
  // an operating system crash soon after can leave the backup damaged,
  // which verify then reports).
  bool sync = true;
};

struct CreateResult {
  Manifest manifest;
  std::string manifest_sha256;
  uint64_t bytes_stored = 0;  // bytes of the files this backup holds
};

// BadInput when the base is a backup of another log; Corruption when a
// sealed segment disagrees with its seal record (nothing is left at `out`
// then); CannotCreate when `out` exists and is not empty.
Result<CreateResult> CreateBackup(const CreateOptions& o);

}  // namespace cdc::backup
