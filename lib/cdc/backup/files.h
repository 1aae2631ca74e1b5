// File helpers the backup commands share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cdc/base/status.h"

namespace cdc::backup {

// Reports work done: (bytes done, bytes in all).
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

inline constexpr size_t kChunk = 1 << 20;

// Removes a directory tree that cdc-backup made (never following a
// symbolic link). Missing is fine.
Status RemoveTree(const std::string& path);

// A hidden sibling of `path` for building it: "<dir>/.<name>.<what>-<pid>".
std::string TempSibling(const std::string& path, const std::string& what);

// The last component of a path ("/a/b/" → "b").
std::string BaseName(const std::string& path);

// OK when `path` is missing or an empty directory; CannotCreate otherwise.
Status CheckNewTarget(const std::string& path, const std::string& what);

// Renames the finished temporary directory `tmp` to `target` (removing an
// empty directory there first) and syncs the parent.
Status PublishDir(const std::string& tmp, const std::string& target);

// A directory made 0700 (or `mode`) whatever the umask.
Status MakePrivateDir(const std::string& path, int mode = 0700);

}  // namespace cdc::backup
