#include "cdc/backup/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cdc/base/fs.h"

namespace cdc::backup {

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return errno == ENOENT ? Status::OK() : ErrnoStatus("stat", path, errno);
  if (S_ISDIR(st.st_mode)) {
    CDC_ASSIGN_OR_RETURN(auto names, ListDir(path));
    for (const auto& n : names)
      CDC_RETURN_IF_ERROR(RemoveTree(JoinPath(path, n)));
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
      return ErrnoStatus("remove", path, errno);
    return Status::OK();
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return ErrnoStatus("remove", path, errno);
  return Status::OK();
}

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string TempSibling(const std::string& path, const std::string& what) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return JoinPath(DirName(p), "." + BaseName(p) + "." + what + "-" +
                                  std::to_string(::getpid()));
}

Status CheckNewTarget(const std::string& path, const std::string& what) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::OK();
    return ErrnoStatus("stat", path, errno);
  }
  if (!S_ISDIR(st.st_mode))
    return Status::CannotCreate(what + " " + path +
                                " exists and is not a directory");
  CDC_ASSIGN_OR_RETURN(auto names, ListDir(path));
  if (!names.empty())
    return Status::CannotCreate(what + " " + path + " is not empty (found " +
                                names.front() + "); give a new or empty one");
  return Status::OK();
}

Status PublishDir(const std::string& tmp, const std::string& target) {
  CDC_RETURN_IF_ERROR(CheckNewTarget(target, "target"));
  if (::rmdir(target.c_str()) != 0 && errno != ENOENT)
    return ErrnoStatus("remove", target, errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0)
    return ErrnoStatus("rename to", target, errno);
  return SyncDir(DirName(target));
}

Status MakePrivateDir(const std::string& path, int mode) {
  if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) != 0)
    return errno == EEXIST ? Status::CannotCreate(path + " exists")
                           : ErrnoStatus("create", path, errno);
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0)
    return ErrnoStatus("chmod", path, errno);
  return Status::OK();
}

}  // namespace cdc::backup
