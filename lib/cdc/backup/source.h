// Reading a backup where it lies: a directory, a tar archive in a file, or
// a tar stream on stdin ("-").
#pragma once

#include <functional>
#include <string>

#include "cdc/backup/manifest.h"
#include "cdc/base/status.h"

namespace cdc::backup {

struct LoadedManifest {
  Manifest manifest;
  std::string sha256;  // of manifest.json's bytes: the backup's name in chains
};

// True when `path` is a tar archive (a regular file) rather than a
// directory; "-" is stdin.
bool IsArchive(const std::string& path);

// The manifest of the backup at `path` (a directory or an archive file; an
// archive's headers are read, its data skipped). NotFound when nothing is
// there; CheckFailed when it has no manifest (an unfinished backup, a
// truncated archive) or a damaged one.
Result<LoadedManifest> LoadManifest(const std::string& path);

// Text of manifest.json → the parsed manifest and its hash.
Result<LoadedManifest> ReadManifestText(const std::string& text,
                                        const std::string& where);

// Reads the data of one stored file, chunk by chunk; 0 at its end.
using ChunkFn = std::function<Result<size_t>(char* buf, size_t n)>;
// Called for each file a backup stores itself, in order, with its size on
// disk (or in the archive) and a reader of its bytes.
using StoredFileFn = std::function<Status(const std::string& name,
                                          uint64_t size, const ChunkFn& read)>;

// Reads every file the backup at `path` stores itself and hands each to
// `file`; returns the text of its manifest ("" when it has none). For a
// directory the files are those its manifest lists as stored here (the
// manifest is read first: CheckFailed when missing); one that is missing
// is left out (the caller finds it missing). An archive is read in one
// pass, every entry handed over but manifest.json.
Result<std::string> ReadStoredFiles(const std::string& path,
                                    const StoredFileFn& file);

// Where the base `ref` of the backup at `path` is: `ref.name` beside it, or
// else any backup beside it (or in `search_dir` when given) whose manifest
// hash is the one named. NotFound when there is none.
Result<std::string> FindBase(const std::string& path, const BaseRef& ref,
                             const std::string& search_dir);

}  // namespace cdc::backup
