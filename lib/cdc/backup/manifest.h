// A backup's manifest (manifest.json): what the backup holds and how to
// check it. Written last and atomically, so a backup without one is
// incomplete and is never taken for a whole one.
//
// The manifest lists every file of the log as of the backup (log.json,
// consumers.db, incremental snapshot requests, segments and their seal
// records, schemas.ndjson) with size and SHA-256.
// An incremental backup stores only what its base lacks: each entry names
// the backup that holds its bytes by that backup's manifest hash (the
// SHA-256 of its manifest.json), so a chain is resolved from the newest
// manifest alone. The manifest checks itself: `self_sha256` covers the rest
// of its text, so one changed byte anywhere in it is found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"

namespace cdc::backup {

inline constexpr int kBackupFormatVersion = 1;
inline constexpr const char* kManifestName = "manifest.json";

struct FileEntry {
  std::string path;  // relative to the log directory
  uint64_t bytes = 0;
  std::string sha256;
  // Manifest hash of the backup in the chain that stores the bytes; empty
  // when this backup does.
  std::string holder;
  // Segments only: the seqs it holds, [first_seq, end_seq).
  uint64_t first_seq = 0;
  uint64_t end_seq = 0;
  bool sealed = false;
  bool is_segment() const;
};

struct BaseRef {
  std::string manifest_sha256;
  std::string name;  // its file or directory name when it was made
};

struct Manifest {
  int format_version = kBackupFormatVersion;
  std::string log_id;
  int log_format_version = 0;
  std::string created;  // RFC 3339
  std::string tool_version;
  uint64_t first_seq = 1;
  uint64_t end_seq = 1;  // exclusive: the events are [first_seq, end_seq)
  Lsn first_lsn = 0;
  Lsn last_lsn = 0;
  std::optional<BaseRef> base;
  std::vector<FileEntry> files;

  const FileEntry* Find(const std::string& path) const;
  uint64_t LocalBytes() const;  // the bytes this backup stores itself
  uint64_t TotalBytes() const;  // the bytes of the whole restored log
};

// The text of manifest.json, self checksum included.
std::string ManifestJson(const Manifest& m);

// Parses manifest.json's text; `where` names it in messages.
// CheckFailed when it is damaged (not JSON, self checksum wrong, a field
// missing or mistyped, a file path that is not one of a log's, segments
// that are not one dense range); BadInput when it is of another format
// version (a newer cdc-backup's).
Result<Manifest> ParseManifest(std::string_view text, const std::string& where);

// True for the relative paths a backup may hold: log.json, consumers.db,
// schemas.ndjson, snapshots/<request id>.json, segments/<20 digits>.seg
// and its .sealed record (never "..", never absolute), and manifest.json
// itself when `manifest_too`.
bool IsBackupPath(std::string_view path, bool manifest_too = false);

// True for snapshots/<id>.json, an incremental snapshot request's file.
bool IsSnapshotRequestPath(std::string_view path);

}  // namespace cdc::backup
