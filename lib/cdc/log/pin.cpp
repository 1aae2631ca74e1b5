#include "cdc/log/pin.h"

#include <fcntl.h>
#include <sys/file.h>

namespace cdc::log {

namespace {

Result<FileHandle> OpenPin(const std::string& dir) {
  const std::string path = JoinPath(dir, kPinFileName);
  auto f = OpenFile(path, O_RDWR | O_CREAT, 0600);
  // A reader that may not write the log can still pin it, if the file is
  // there: flock needs only an open descriptor.
  if (!f.ok() && f.status().code() == Code::kPermission)
    f = OpenFile(path, O_RDONLY);
  return f;
}

}  // namespace

Result<RetentionPin> RetentionPin::Acquire(const std::string& dir) {
  CDC_ASSIGN_OR_RETURN(FileHandle f, OpenPin(dir));
  while (::flock(f.fd(), LOCK_SH) != 0) {
    if (errno != EINTR)
      return ErrnoStatus("lock", JoinPath(dir, kPinFileName), errno);
  }
  RetentionPin pin;
  pin.fd_ = std::move(f);
  return pin;
}

Result<FileHandle> TryExclusivePin(const std::string& dir, bool* pinned) {
  *pinned = false;
  CDC_ASSIGN_OR_RETURN(FileHandle f, OpenPin(dir));
  if (::flock(f.fd(), LOCK_EX | LOCK_NB) == 0) return f;
  if (errno != EWOULDBLOCK)
    return ErrnoStatus("lock", JoinPath(dir, kPinFileName), errno);
  *pinned = true;
  return FileHandle();
}

}  // namespace cdc::log
