#include "cdc/backup/tar.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cdc/base/fs.h"

namespace cdc::backup {

namespace {

constexpr size_t kBlock = 512;

void PutOctal(char* field, size_t len, uint64_t v) {
  // len-1 digits and a NUL, as ustar wants.
  std::memset(field, '0', len - 1);
  field[len - 1] = '\0';
  for (size_t i = len - 1; i-- > 0 && v;) {
    field[i] = static_cast<char>('0' + (v & 7));
    v >>= 3;
  }
}

void PutSize(char* field, uint64_t v) {
  if (v < (uint64_t{1} << 33)) return PutOctal(field, 12, v);
  // GNU base-256 for sizes beyond 8 GiB.
  std::memset(field, 0, 12);
  field[0] = static_cast<char>(0x80);
  for (int i = 11; i >= 4; --i, v >>= 8) field[i] = static_cast<char>(v & 0xff);
}

Result<uint64_t> GetNumber(const char* field, size_t len, bool* ok) {
  *ok = true;
  const auto* u = reinterpret_cast<const unsigned char*>(field);
  if (u[0] & 0x80) {
    uint64_t v = 0;
    for (size_t i = 1; i < len; ++i) {
      if (v >> 56) {
        *ok = false;
        return uint64_t{0};
      }
      v = (v << 8) | u[i];
    }
    return v;
  }
  uint64_t v = 0;
  size_t i = 0;
  while (i < len && field[i] == ' ') ++i;
  for (; i < len && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v >> 60) {
      *ok = false;
      return uint64_t{0};
    }
    v = v * 8 + static_cast<uint64_t>(field[i] - '0');
  }
  for (; i < len; ++i)
    if (field[i] != ' ' && field[i] != '\0') *ok = false;
  return v;
}

uint64_t HeaderSum(const char* h) {
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i)
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  return sum;
}

}  // namespace

Status TarWriter::Put(std::string_view data) {
  while (!data.empty()) {
    ssize_t w = ::write(fd_, data.data(), data.size());
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE)
        return Status::IOError(where_ + ": the reader closed the stream");
      return ErrnoStatus("write", where_, errno);
    }
    data.remove_prefix(static_cast<size_t>(w));
  }
  return Status::OK();
}

Status TarWriter::Begin(const std::string& name, uint64_t size, int64_t mtime) {
  if (name.size() >= 100) return Status::Internal("tar name too long: " + name);
  char h[kBlock] = {};
  std::memcpy(h, name.data(), name.size());
  PutOctal(h + 100, 8, 0600);
  PutOctal(h + 108, 8, 0);
  PutOctal(h + 116, 8, 0);
  PutSize(h + 124, size);
  PutOctal(h + 136, 12, mtime > 0 ? static_cast<uint64_t>(mtime) : 0);
  h[156] = '0';
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  char sum[8];
  PutOctal(sum, 7, HeaderSum(h));
  std::memcpy(h + 148, sum, 7);
  h[155] = ' ';
  left_ = size_ = size;
  return Put(std::string_view(h, kBlock));
}

Status TarWriter::Write(std::string_view data) {
  if (data.size() > left_)
    return Status::Internal("tar entry grew beyond its announced size");
  left_ -= data.size();
  return Put(data);
}

Status TarWriter::End() {
  if (left_ != 0)
    return Status::Internal("tar entry ended " + std::to_string(left_) +
                            " bytes short");
  static const char kZeros[kBlock] = {};
  size_t pad = (kBlock - size_ % kBlock) % kBlock;
  return Put(std::string_view(kZeros, pad));
}

Status TarWriter::Finish() {
  static const char kZeros[2 * kBlock] = {};
  return Put(std::string_view(kZeros, sizeof kZeros));
}

Result<size_t> TarReader::Fill(char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd_, buf + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", where_, errno);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

Status TarReader::Skip(uint64_t n) {
  if (n == 0) return Status::OK();
  if (seekable_) {
    off_t cur = ::lseek(fd_, 0, SEEK_CUR);
    off_t end = cur < 0 ? -1 : ::lseek(fd_, 0, SEEK_END);
    if (cur >= 0 && end >= 0) {
      if (static_cast<uint64_t>(end - cur) < n) {
        (void)::lseek(fd_, 0, SEEK_END);
        return Status::CheckFailed(where_ + ": truncated archive (" + current_ +
                                   " is cut short)");
      }
      if (::lseek(fd_, cur + static_cast<off_t>(n), SEEK_SET) >= 0)
        return Status::OK();
    }
    seekable_ = false;
    if (cur >= 0) (void)::lseek(fd_, cur, SEEK_SET);
  }
  char buf[1 << 16];
  while (n > 0) {
    size_t want = n < sizeof buf ? static_cast<size_t>(n) : sizeof buf;
    CDC_ASSIGN_OR_RETURN(size_t got, Fill(buf, want));
    if (got < want)
      return Status::CheckFailed(where_ + ": truncated archive (" + current_ +
                                 " is cut short)");
    n -= got;
  }
  return Status::OK();
}

Result<std::optional<TarEntry>> TarReader::Next() {
  CDC_RETURN_IF_ERROR(Skip(left_ + pad_));
  left_ = pad_ = 0;
  const std::string after =
      current_.empty() ? "at its start" : "after " + current_;
  char h[kBlock];
  CDC_ASSIGN_OR_RETURN(size_t got, Fill(h, kBlock));
  if (got < kBlock)
    return Status::CheckFailed(where_ + ": truncated archive (it ends " +
                               after + " without an end marker)");
  static const char kZeros[kBlock] = {};
  if (std::memcmp(h, kZeros, kBlock) == 0) return std::optional<TarEntry>();
  bool ok1, ok2;
  CDC_ASSIGN_OR_RETURN(uint64_t sum, GetNumber(h + 148, 8, &ok1));
  if (!ok1 || sum != HeaderSum(h))
    return Status::CheckFailed(where_ + ": damaged archive (bad header " +
                               after + ")");
  // `tar -c` of a backup directory adds the directories: nothing to read.
  if (h[156] == '5') {
    current_ = std::string(h, strnlen(h, 100));
    return Next();
  }
  if (h[156] != '0' && h[156] != '\0')
    return Status::CheckFailed(where_ + ": unexpected non-file entry " + after);
  TarEntry e;
  e.name.assign(h, strnlen(h, 100));
  if (std::memcmp(h + 257, "ustar", 5) == 0 && h[345] != '\0')
    e.name = std::string(h + 345, strnlen(h + 345, 155)) + "/" + e.name;
  if (e.name.rfind("./", 0) == 0) e.name.erase(0, 2);
  CDC_ASSIGN_OR_RETURN(e.size, GetNumber(h + 124, 12, &ok2));
  if (!ok2)
    return Status::CheckFailed(where_ + ": damaged archive (bad size of " +
                               e.name + ")");
  current_ = e.name;
  left_ = e.size;
  pad_ = (kBlock - e.size % kBlock) % kBlock;
  return std::optional<TarEntry>(std::move(e));
}

Result<size_t> TarReader::Read(char* buf, size_t n) {
  if (left_ == 0) return size_t{0};
  size_t want = n < left_ ? n : static_cast<size_t>(left_);
  CDC_ASSIGN_OR_RETURN(size_t got, Fill(buf, want));
  if (got < want)
    return Status::CheckFailed(where_ + ": truncated archive (" + current_ +
                               " is cut short)");
  left_ -= got;
  return got;
}

}  // namespace cdc::backup
