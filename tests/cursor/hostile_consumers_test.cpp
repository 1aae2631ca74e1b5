// consumers.db planted or replaced by something else: a symlink, a FIFO, a
// database of another schema, a path SQLite cannot take.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "cdc/base/fs.h"
#include "cdc/cursor/consumers.h"
#include "test_util.h"

namespace cdc::cursor {

TEST_CASE("a consumer store of another schema is bad data, named",
          "[cursor][hostile]") {
  test::TempDir dir;
  const std::string db = dir.sub("consumers.db");
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  REQUIRE(sqlite3_exec(h, "CREATE TABLE consumers (who TEXT, pos INTEGER)",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(h);
  auto s = ConsumerStore::Open(dir.path());
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Code::kCorruption);
  CHECK_THAT(s.status().message(),
             Catch::StartsWith(db + " is not a cdc consumer store"));
}

TEST_CASE("a planted consumers.db is refused, its target untouched",
          "[cursor][hostile]") {
  test::TempDir dir;
  const std::string db = dir.sub("consumers.db");
  const std::string victim = dir.sub("victim");
  { std::ofstream(victim) << "precious\n"; }
  REQUIRE(symlink(victim.c_str(), db.c_str()) == 0);
  auto s = ConsumerStore::Open(dir.path());
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Code::kCorruption);
  CHECK(*ReadFileToString(victim) == "precious\n");
  REQUIRE(unlink(db.c_str()) == 0);
  REQUIRE(mkfifo(db.c_str(), 0644) == 0);  // would block SQLite's reads
  s = ConsumerStore::Open(dir.path());
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Code::kCorruption);
  CHECK_THAT(s.status().message(), Catch::Contains("not a regular file"));
}

TEST_CASE("a log path too long for SQLite is an I/O error, said plainly",
          "[cursor][hostile]") {
  test::TempDir dir;
  std::string path = dir.path();
  while (path.size() < 600) {
    path += "/" + std::string(100, 'd');
    REQUIRE(MakeDir(path).ok());
  }
  auto s = ConsumerStore::Open(path);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Code::kIOError);
  CHECK_THAT(s.status().message(), Catch::Contains("path is too long"));
}

}  // namespace cdc::cursor
