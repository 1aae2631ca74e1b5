#include "cdc/base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace cdc {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string msg = "cannot " + what + " " + path + ": " + strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status::NotFound(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return Status::Permission(msg);
    case ENOSPC:
    case EDQUOT:
      return Status::IOError(msg + " (disk full)");
    default:
      return Status::IOError(msg);
  }
}

namespace {
const char* FileKind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}
}  // namespace

FileHandle& FileHandle::operator=(FileHandle&& o) noexcept {
  if (this != &o) {
    Reset();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

FileHandle::~FileHandle() { Reset(); }

void FileHandle::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool GroupAccess() {
  static const bool group = [] {
    const char* v = std::getenv("CDC_GROUP_ACCESS");
    return v != nullptr &&
           (std::string_view(v) == "1" || std::string_view(v) == "yes" ||
            std::string_view(v) == "true");
  }();
  return group;
}

int NewDirMode() { return GroupAccess() ? 0750 : 0700; }
int NewFileMode() { return GroupAccess() ? 0640 : 0600; }

Result<FileHandle> OpenFile(const std::string& path, int flags, int mode) {
  if (mode < 0) mode = NewFileMode();
  // Another user who can write the directory may have planted a symlink, a
  // FIFO (open would wait for a writer), a device (/dev/zero never ends) or
  // a directory under a name we use: never follow, never block, and look at
  // what was opened before reading or writing a byte.
  int fd =
      ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
  if (fd < 0) {
    if (errno == ELOOP)
      return Status::Corruption("refusing " + path +
                                ": it is a symbolic link (not followed)");
    if (errno == ENXIO || errno == EISDIR)  // a socket; a directory
      return Status::Corruption("refusing " + path +
                                ": it is not a regular file");
    return ErrnoStatus("open", path, errno);
  }
  FileHandle f(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus("stat", path, errno);
  if (!S_ISREG(st.st_mode))
    return Status::Corruption("refusing " + path + ": it is " +
                              FileKind(st.st_mode) + ", not a regular file");
  if ((flags & O_NONBLOCK) == 0 &&
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
    return ErrnoStatus("open", path, errno);
  return f;
}

Status WriteAll(int fd, const char* data, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

Status PwriteAll(int fd, const char* data, size_t n, uint64_t offset,
                 const std::string& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    data += w;
    offset += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

Result<size_t> PreadUpTo(int fd, char* buf, size_t n, uint64_t offset,
                         const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t r =
        ::pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path, errno);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync directory", dir, err);
  return Status::OK();
}

Status SyncFile(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) return ErrnoStatus("fsync", path, errno);
  return Status::OK();
}

Result<std::string> ReadFileToString(const std::string& path,
                                     size_t max_bytes) {
  CDC_ASSIGN_OR_RETURN(FileHandle f, OpenFile(path, O_RDONLY));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t r = ::read(f.fd(), buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path, errno);
    }
    if (r == 0) break;
    if (out.size() + static_cast<size_t>(r) > max_bytes)
      return Status::Corruption("refusing " + path + ": larger than " +
                                std::to_string(max_bytes) + " bytes");
    out.append(buf, static_cast<size_t>(r));
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, const std::string& contents,
                       int mode) {
  std::string tmp = path + ".tmp";
  {
    // A stale temporary of ours (a crash) or one another user planted, maybe
    // a symlink to a victim file: unlink removes the name, never a target.
    // O_EXCL then creates a fresh file or fails if someone raced us.
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT)
      return ErrnoStatus("remove stale", tmp, errno);
    auto f = OpenFile(tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
    if (!f.ok()) return f.status();
    Status s = WriteAll(f->fd(), contents.data(), contents.size(), tmp);
    // The umask may have taken bits a reader needs (a metrics file).
    if (s.ok() && mode >= 0 &&
        ::fchmod(f->fd(), static_cast<mode_t>(mode)) != 0)
      s = ErrnoStatus("chmod", tmp, errno);
    if (s.ok() && ::fsync(f->fd()) != 0) s = ErrnoStatus("fsync", tmp, errno);
    if (!s.ok()) {
      ::unlink(tmp.c_str());
      return s;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoStatus("rename", tmp, errno);
    ::unlink(tmp.c_str());
    return s;
  }
  return SyncDir(DirName(path));
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), static_cast<mode_t>(NewDirMode())) == 0)
    return Status::OK();
  if (errno == EEXIST) return Status::OK();
  Status s = ErrnoStatus("create directory", path, errno);
  if (s.code() == Code::kIOError && errno != ENOSPC)
    return Status::CannotCreate(s.message());
  return s;
}

Result<std::vector<std::string>> ListDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus("open directory", dir, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return names;
}

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat", path, errno);
  return static_cast<uint64_t>(st.st_size);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string DirName(const std::string& path) {
  size_t p = path.find_last_of('/');
  if (p == std::string::npos) return ".";
  if (p == 0) return "/";
  return path.substr(0, p);
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty() || a.back() == '/') return a + b;
  return a + "/" + b;
}

}  // namespace cdc
