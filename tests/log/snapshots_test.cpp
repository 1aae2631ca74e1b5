#include "cdc/log/snapshots.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "cdc/base/fs.h"
#include "cdc/log/log_dir.h"
#include "test_util.h"

namespace cdc::log {

TEST_CASE("table names for incremental snapshots", "[log][snapshots]") {
  auto plain = ParseTableName("public.orders");
  REQUIRE(plain.ok());
  CHECK(plain->first == "public");
  CHECK(plain->second == "orders");
  auto quoted = ParseTableName(R"("my.schema"."or""ders")");
  REQUIRE(quoted.ok());
  CHECK(quoted->first == "my.schema");
  CHECK(quoted->second == "or\"ders");
  for (const char* bad :
       {"orders", "a.b.c", ".b", "a.", "", R"("a.b)", R"("a"x.b)"}) {
    INFO(bad);
    CHECK(ParseTableName(bad).status().code() == Code::kUsage);
  }
}

TEST_CASE("requests round-trip and sort in request order", "[log][snapshots]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  auto none = ListIncrementalSnapshots(dir.path());
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto first = RequestIncrementalSnapshot(dir.path(), "public", "a", 500,
                                          1764633600000000);  // 2025-12-02
  auto second = RequestIncrementalSnapshot(dir.path(), "public", "b", 1024,
                                           1764633601000000);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->id.rfind("20251202T000000Z-", 0) == 0);
  CHECK(first->state == "pending");
  CHECK_FALSE(first->last_key);
  IncrementalSnapshot s = *first;
  s.state = "running";
  s.chunks = 3;
  s.rows = 1499;
  s.last_key = std::vector<std::string>{"15\"00", "x"};
  s.seq = 42;
  REQUIRE(WriteIncrementalSnapshot(dir.path(), s).ok());
  auto all = ListIncrementalSnapshots(dir.path());
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].id == first->id);
  CHECK((*all)[0].state == "running");
  CHECK((*all)[0].rows == 1499);
  CHECK(*(*all)[0].last_key == std::vector<std::string>{"15\"00", "x"});
  CHECK((*all)[0].seq == 42);
  CHECK((*all)[1].table == "b");
  CHECK((*all)[1].chunk_rows == 1024);
  CHECK(RequestIncrementalSnapshot(dir.path(), "public", "a", 0, 0)
            .status()
            .code() == Code::kUsage);
}

TEST_CASE("a request file that is not ours fails loudly",
          "[log][snapshots][corruption]") {
  test::TempDir dir;
  REQUIRE(CreateLog(dir.path(), std::nullopt).ok());
  auto r = RequestIncrementalSnapshot(dir.path(), "public", "a", 10, 0);
  REQUIRE(r.ok());
  const std::string path = dir.path() + "/snapshots/" + r->id + ".json";
  SECTION("not JSON") { std::ofstream(path) << "{\"id\":"; }
  SECTION("an unknown state") {
    IncrementalSnapshot s = *r;
    s.state = "sleeping";
    std::ofstream(path) << IncrementalSnapshotJson(s);
  }
  SECTION("another request's id") {
    IncrementalSnapshot s = *r;
    s.id = "20990101T000000Z-000000";
    std::ofstream(path) << IncrementalSnapshotJson(s);
  }
  auto all = ListIncrementalSnapshots(dir.path());
  CHECK(all.status().code() == Code::kCorruption);
  CHECK_THAT(all.status().message(), Catch::Contains(r->id + ".json"));
}

}  // namespace cdc::log
