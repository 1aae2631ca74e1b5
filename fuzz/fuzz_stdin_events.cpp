// NDJSON events read from stdin: the source of cdc-redis --stdin and
// cdc-nats --stdin (consume::OpenStdinSource), and cdc-ack reading the
// seqs a pipeline passed on. The input is stdin.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "cdc/consume/source.h"
#include "fuzz_util.h"
#include "runners.h"

namespace {

void StdinFrom(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::dup2(fd, 0) < 0) abort();
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = cdc::fuzz::ScratchDir();
  const std::string in = dir + "/stdin";
  cdc::fuzz::WriteFile(in, data, size);
  StdinFrom(in);
  {
    auto src = cdc::consume::OpenStdinSource();
    cdc::consume::SinkBatch b;
    for (int i = 0; i < 100000; ++i) {
      b.clear();
      auto got = src->Fill(&b, 64);
      if (!got.ok()) break;
      b.Seal();
      if (!*got) {
        auto more = src->Wait(0);
        if (!more.ok() || !*more) break;
      }
    }
  }
  // cdc-ack -c NAME: the highest seq read from stdin, acked in a log of a
  // few events (an ack beyond its end is refused).
  static const bool made = [&] {
    const std::string log = dir + "/acklog";
    const std::string events = dir + "/events";
    std::string text;
    for (int i = 1; i <= 5; ++i)
      text += R"({"lsn":"0/)" + std::to_string(i * 16) + R"(","xid":)" +
              std::to_string(i) +
              R"(,"ts":"2026-01-01T00:00:00Z","op":"c","schema":"s",)"
              R"("table":"t","key":null,"before":null,"after":{"a":1}})"
              "\n";
    cdc::fuzz::WriteFile(events, reinterpret_cast<const uint8_t*>(text.data()),
                         text.size());
    StdinFrom(events);
    std::string a0 = "cdc-log", a1 = "--log", a2 = log, a3 = "import",
                a4 = "-q";
    char* argv[] = {a0.data(), a1.data(), a2.data(),
                    a3.data(), a4.data(), nullptr};
    if (cdc::logtool::RunCli(5, argv) != 0) return false;
    std::string c0 = "cdc-ack", c1 = "--log", c2 = log, c3 = "-c", c4 = "fuzz",
                c5 = "--create";
    char* cargv[] = {c0.data(), c1.data(), c2.data(), c3.data(),
                     c4.data(), c5.data(), nullptr};
    return cdc::ack::RunCli(6, cargv) == 0;
  }();
  if (!made) abort();
  StdinFrom(in);
  std::string a0 = "cdc-ack", a1 = "--log", a2 = dir + "/acklog", a3 = "-c",
              a4 = "fuzz";
  char* argv[] = {a0.data(), a1.data(), a2.data(),
                  a3.data(), a4.data(), nullptr};
  const int rc = cdc::ack::RunCli(5, argv);
  if (rc != 0 && rc != 64 && rc != 65 && rc != 75) abort();
  return 0;
}
