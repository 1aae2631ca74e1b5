#include "test_util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "cdc/event/event.h"
#include "cdc/log/reader.h"

namespace cdc::test {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/cdc-test-XXXXXX";
  char* p = mkdtemp(tmpl.data());
  REQUIRE(p != nullptr);
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string EventLine(uint64_t txn, uint64_t i, size_t pad) {
  char head[160];
  snprintf(head, sizeof head,
           "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"2026-11-29T07:41:02."
           "000000Z\",\"op\":\"c\",\"schema\":\"public\",\"table\":\"t%llu\"",
           static_cast<unsigned long long>(txn * 16),
           static_cast<unsigned long long>(txn),
           static_cast<unsigned long long>(txn % 3));
  return std::string(head) + ",\"key\":{\"id\":" + std::to_string(i) +
         "},\"before\":null,\"after\":{\"id\":" + std::to_string(i) +
         ",\"pad\":\"" + std::string(pad, 'a' + static_cast<char>(i % 26)) +
         "\"}}";
}

void WriteTxns(const std::string& dir, uint64_t first_txn, uint64_t txns,
               uint64_t per_txn, const log::WriterOptions& opts, size_t pad) {
  REQUIRE(log::OpenOrCreateLog(dir).ok());
  auto w = log::LogWriter::Open(dir, opts);
  REQUIRE(w.ok());
  for (uint64_t t = first_txn; t < first_txn + txns; ++t) {
    for (uint64_t i = 0; i < per_txn; ++i)
      REQUIRE((*w)->Append(EventLine(t, i, pad)).ok());
    REQUIRE((*w)->Commit(t * 16, 1764402062000000 + static_cast<int64_t>(t), t)
                .ok());
    // One frame per transaction (a write closes the group), the layout
    // tests count frames and offsets by; grouped frames have their own.
    REQUIRE((*w)->RequestWrite().ok());
    if (t % 7 == 0) REQUIRE((*w)->Sync().ok());
  }
  REQUIRE((*w)->Sync().ok());
}

Result<std::vector<log::SegmentInfo>> WriteSmallSegments(const std::string& dir,
                                                         uint64_t txns,
                                                         uint64_t per_txn) {
  log::WriterOptions opts;
  opts.segment_bytes = 2048;
  WriteTxns(dir, 1, txns, per_txn, opts);
  return log::ListSegments(dir);
}

ReadResult ReadAll(const std::string& dir) {
  ReadResult r;
  auto reader = log::LogReader::Open(dir);
  REQUIRE(reader.ok());
  log::Batch b;
  for (;;) {
    auto got = (*reader)->Next(&b);
    REQUIRE(got.ok());
    if (!*got) break;
    b.ForEach([&](uint64_t seq, std::string_view line, bool last) {
      r.seqs.push_back(seq);
      std::string native;
      event::AppendNative(seq, line, last, &native);
      r.lines.push_back(native);
      r.last.push_back(last);
    });
  }
  return r;
}

int RunTool(int (*run)(int, char**), const std::vector<std::string>& args,
            std::string* out) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  fflush(stdout);
  int saved = dup(1);
  char tmpl[] = "/tmp/cdc-test-out-XXXXXX";
  int fd = mkstemp(tmpl);
  unlink(tmpl);
  dup2(fd, 1);
  int rc = run(static_cast<int>(copy.size()), argv.data());
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  if (out) {
    out->clear();
    char buf[65536];
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, buf, sizeof buf)) > 0)
      out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return rc;
}

void FlipByte(const std::string& path, uint64_t offset) {
  int fd = open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char c;
  REQUIRE(pread(fd, &c, 1, static_cast<off_t>(offset)) == 1);
  c ^= 0x5a;
  REQUIRE(pwrite(fd, &c, 1, static_cast<off_t>(offset)) == 1);
  close(fd);
}

void TruncateFile(const std::string& path, uint64_t size) {
  REQUIRE(truncate(path.c_str(), static_cast<off_t>(size)) == 0);
}

uint64_t SizeOf(const std::string& path) {
  return std::filesystem::file_size(path);
}

}  // namespace cdc::test
