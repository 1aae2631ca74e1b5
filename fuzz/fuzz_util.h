// Helpers for the fuzz targets: a private scratch directory for the
// process (removed at exit), and writing the input into a file there.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace cdc::fuzz {

inline const std::string& ScratchDir() {
  // Never destroyed: the atexit hook runs after static destructors.
  static const std::string* dir = [] {
    auto* t = new std::string(std::filesystem::temp_directory_path() /
                              "cdc-fuzz.XXXXXX");
    if (mkdtemp(t->data()) == nullptr) abort();
    std::atexit([] { std::filesystem::remove_all(*dir); });
    return t;
  }();
  return *dir;
}

inline void WriteFile(const std::string& path, const uint8_t* data,
                      size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) abort();
  for (size_t off = 0; off < size;) {
    ssize_t n = ::write(fd, data + off, size - off);
    if (n <= 0) abort();
    off += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace cdc::fuzz
