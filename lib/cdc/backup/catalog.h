// A directory of backups (--out-dir): listing, names, pruning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cdc/backup/source.h"
#include "cdc/base/status.h"

namespace cdc::backup {

struct CatalogEntry {
  std::string name;  // file or directory name in the catalog
  std::string path;
  bool archive = false;
  bool ok = false;    // its manifest could be read
  std::string error;  // why not, when !ok
  LoadedManifest lm;
};

// Every backup in DIR (directories holding a manifest.json, archives
// ending in .tar), sorted by creation time, oldest first. Hidden entries
// (backups being made) are left out.
Result<std::vector<CatalogEntry>> ListCatalog(const std::string& dir);

// A new time-stamped name in DIR: "cdc-backup-YYYYmmddTHHMMSSZ" (with
// "-2", "-3", … when taken).
std::string NewBackupName(const std::string& dir, int64_t now_us);

// The newest backup of log `log_id` in `entries`, or nullptr.
const CatalogEntry* NewestOf(const std::vector<CatalogEntry>& entries,
                             const std::string& log_id);

// Removes all but the newest `keep` backups of log `log_id` in DIR, never
// one that a kept backup's chain needs. Returns the names removed.
Result<std::vector<std::string>> Prune(const std::string& dir,
                                       const std::string& log_id, size_t keep);

}  // namespace cdc::backup
