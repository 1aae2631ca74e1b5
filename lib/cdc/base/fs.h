// Small POSIX file helpers that turn errno into a Status of the right kind.
//
// Durability rules (LevelDB's SyncDirIfManifest): after creating, renaming
// or deleting a file, the directory holding it is synced before the change
// is relied upon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cdc/base/status.h"

namespace cdc {

// Maps errno from an operation on `path` to a Status kind: ENOENT → NotFound,
// EACCES/EPERM/EROFS → Permission, ENOSPC/EDQUOT → IOError ("disk full"),
// anything else → IOError. `what` names the operation ("open", "write").
Status ErrnoStatus(const std::string& what, const std::string& path, int err);

// Owns a file descriptor; closes it on destruction.
class FileHandle {
 public:
  FileHandle() = default;
  explicit FileHandle(int fd) : fd_(fd) {}
  FileHandle(FileHandle&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileHandle& operator=(FileHandle&& o) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();

 private:
  int fd_ = -1;
};

// Opens a regular file, never following a symlink in its last component and
// never blocking: a symlink, FIFO, socket, device or directory under `path`
// is refused (Corruption, naming what it is) before anything is read or
// written. Every file cdc reads or writes in a log directory is opened here.
// A file it creates gets `mode`, by default NewFileMode().
Result<FileHandle> OpenFile(const std::string& path, int flags, int mode = -1);

// What the tools create in a log directory is private to its owner:
// directories 0700, files 0600. With CDC_GROUP_ACCESS=1 in the environment
// (a group of readers sharing the log): 0750 and 0640, consumers.db 0660
// (its readers ack). The process's umask still applies.
bool GroupAccess();
int NewDirMode();
int NewFileMode();
// Writes all of `n` bytes at the current offset (retrying short writes).
Status WriteAll(int fd, const char* data, size_t n, const std::string& path);
// Writes all of `n` bytes at `offset` (retrying short writes).
Status PwriteAll(int fd, const char* data, size_t n, uint64_t offset,
                 const std::string& path);
// Reads exactly `n` bytes at `offset`; returns the number read (less at EOF).
Result<size_t> PreadUpTo(int fd, char* buf, size_t n, uint64_t offset,
                         const std::string& path);
Status SyncDir(const std::string& dir);
Status SyncFile(int fd, const std::string& path);  // fdatasync
// Metadata files (log.json, seal records, LOCK) are small; a bigger one is
// not ours and is refused (Corruption) rather than read into memory.
inline constexpr size_t kMaxMetadataBytes = 1 << 20;
Result<std::string> ReadFileToString(const std::string& path,
                                     size_t max_bytes = kMaxMetadataBytes);
// Writes a temporary file (`path`.tmp, created afresh with O_EXCL after
// unlinking any stale one, so a planted symlink is never written through),
// fsyncs it, renames it over `path`, syncs the directory. Readers see the
// old or the new contents, never a mixture.
// `mode` (default NewFileMode()) is set on the new file before the rename:
// a metrics file another user's collector reads is written 0644.
Status WriteFileAtomic(const std::string& path, const std::string& contents,
                       int mode = -1);
// One level, NewDirMode(); OK if it exists.
Status MakeDir(const std::string& path);
Result<std::vector<std::string>> ListDir(const std::string& dir);
Result<uint64_t> FileSize(const std::string& path);
bool PathExists(const std::string& path);
std::string DirName(const std::string& path);
std::string JoinPath(const std::string& a, const std::string& b);

}  // namespace cdc
