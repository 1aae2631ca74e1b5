// The tar archive `cdc-backup create --out -` writes: POSIX ustar, regular
// files only, so `tar -x` unpacks it into a backup directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc::backup {

// Writes an archive to a descriptor (stdout, a pipe). Not thread-safe.
class TarWriter {
 public:
  explicit TarWriter(int fd, std::string where) : fd_(fd), where_(where) {}
  // Starts an entry of exactly `size` bytes (mode 0600).
  Status Begin(const std::string& name, uint64_t size, int64_t mtime);
  Status Write(std::string_view data);
  // Ends the entry; Internal when fewer bytes than announced were written.
  Status End();
  // The end-of-archive marker.
  Status Finish();

 private:
  Status Put(std::string_view data);
  int fd_;
  std::string where_;
  uint64_t left_ = 0, size_ = 0;
};

struct TarEntry {
  std::string name;
  uint64_t size = 0;
};

// Reads an archive from a descriptor, one pass (a pipe is fine). A
// truncated or damaged archive is CheckFailed, naming the entry.
class TarReader {
 public:
  explicit TarReader(int fd, std::string where)
      : fd_(fd), where_(std::move(where)) {}
  // The next entry; nullopt at the end-of-archive marker. The rest of the
  // current entry is skipped first. Entries other than regular files are
  // refused.
  Result<std::optional<TarEntry>> Next();
  // Up to `n` bytes of the current entry; 0 at its end.
  Result<size_t> Read(char* buf, size_t n);

 private:
  Result<size_t> Fill(char* buf, size_t n);  // exactly n, or fewer at EOF
  Status Skip(uint64_t n);
  int fd_;
  std::string where_;
  std::string current_;
  uint64_t left_ = 0, pad_ = 0;
  bool seekable_ = true;
};

}  // namespace cdc::backup
