// consume::Import, the engine of `cdc-log import`, on its own: whole
// transactions, resuming, bad lines and a stop, read back from the log.
#include "cdc/consume/import.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "cdc/log/reader.h"
#include "test_util.h"

namespace cdc::consume {

namespace {

std::string Line(int txn, int i) {
  return "{\"lsn\":\"0/" + std::to_string(txn * 256) +
         "\",\"xid\":" + std::to_string(txn) +
         ",\"ts\":\"2026-11-29T07:00:00Z\",\"op\":\"c\",\"schema\":\"public\","
         "\"table\":\"t\",\"key\":{\"id\":" +
         std::to_string(i) + "},\"after\":{\"id\":" + std::to_string(i) +
         "}}\n";
}

// Imports `input` (through a file: Import reads an fd to its end).
Status Run(const test::TempDir& dir, const std::string& input, ImportResult* r,
           std::function<bool()> stop = nullptr) {
  const std::string path = dir.sub("input.ndjson");
  FILE* f = fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  fwrite(input.data(), 1, input.size(), f);
  fclose(f);
  int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ImportOptions o;
  o.log = dir.sub("log");
  if (stop) o.stop = stop;
  Status s = Import(o, fd, r);
  close(fd);
  return s;
}

}  // namespace

TEST_CASE("import: whole transactions, and run again skips them",
          "[consume][import]") {
  test::TempDir dir;
  std::string in = Line(1, 1) + Line(1, 2) + Line(2, 3) + Line(3, 4);
  ImportResult r;
  REQUIRE(Run(dir, in, &r).ok());
  CHECK(r.opened);
  CHECK(r.transactions == 3);
  CHECK(r.events == 4);
  CHECK(r.last_seq == 4);
  CHECK(r.skipped == 0);
  CHECK_FALSE(r.failed);
  // The same input again and one more: only the new one is added.
  REQUIRE(Run(dir, in + Line(4, 5), &r).ok());
  CHECK(r.transactions == 1);
  CHECK(r.events == 1);
  CHECK(r.skipped == 3);
  CHECK(r.last_seq == 5);
}

TEST_CASE("import: a bad line rejects its transaction, earlier ones stay",
          "[consume][import]") {
  test::TempDir dir;
  std::string in = Line(1, 1) + Line(2, 2) +
                   "{\"lsn\":\"0/200\",\"xid\":2,"
                   "\"ts\":\"2026-11-29T07:00:00Z\",\"op\":\"c\"\n" +
                   Line(3, 3);
  ImportResult r;
  Status s = Run(dir, in, &r);
  CHECK(s.code() == Code::kBadInput);
  CHECK(s.message().find("line 3") != std::string::npos);
  CHECK(r.transactions == 1);
  CHECK(r.last_seq == 1);
  // Out of commit order: refused, what came before kept.
  test::TempDir dir2;
  s = Run(dir2, Line(2, 1) + Line(1, 2), &r);
  CHECK(s.code() == Code::kBadInput);
  CHECK(s.message().find("goes back") != std::string::npos);
  CHECK(r.transactions == 1);
}

TEST_CASE("import: a stop discards the open transaction and says Busy",
          "[consume][import]") {
  test::TempDir dir;
  int lines = 0;
  ImportResult r;
  // Stops before the 4th line: transaction 1 (2 lines) is whole, the
  // open transaction 2 is not kept.
  Status s = Run(dir, Line(1, 1) + Line(1, 2) + Line(2, 3) + Line(2, 4), &r,
                 [&lines] { return ++lines > 3; });
  CHECK(s.code() == Code::kBusy);
  CHECK(r.transactions == 1);
  CHECK(r.events == 2);
  CHECK(r.last_seq == 2);
}

}  // namespace cdc::consume
