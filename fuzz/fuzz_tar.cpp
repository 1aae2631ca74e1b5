// A backup archive read as a stream (cdc-backup verify - / restore -):
// every entry and its bytes, or a refusal naming what is wrong.
#include <fcntl.h>
#include <unistd.h>

#include "cdc/backup/tar.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cdc::fuzz::ScratchDir() + "/in.tar";
  cdc::fuzz::WriteFile(path, data, size);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) abort();
  cdc::backup::TarReader r(fd, "fuzz.tar");
  char buf[4096];
  for (int i = 0; i < 10000; ++i) {
    auto e = r.Next();
    if (!e.ok() || !*e) break;
    for (;;) {
      auto n = r.Read(buf, sizeof buf);
      if (!n.ok() || *n == 0) break;
    }
  }
  ::close(fd);
  return 0;
}
