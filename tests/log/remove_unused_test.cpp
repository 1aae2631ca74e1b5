// log::RemoveUnusedLog: only a log that was created and never used goes.
#include <catch2/catch.hpp>
#include <fstream>

#include "cdc/base/fs.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"
#include "test_util.h"

namespace cdc::log {

TEST_CASE("an unused log is removed; anything used or foreign stays", "[log]") {
  test::TempDir dir;
  // What a capture that could not connect leaves: log.json, LOCK and an
  // empty first segment.
  const std::string fresh = dir.sub("fresh");
  REQUIRE(OpenOrCreateLog(fresh).ok());
  { REQUIRE(LogWriter::Open(fresh, WriterOptions{}).ok()); }
  auto r = RemoveUnusedLog(fresh);
  REQUIRE(r.ok());
  CHECK(*r);
  CHECK_FALSE(PathExists(fresh));

  // Events in it.
  const std::string used = dir.sub("used");
  test::WriteTxns(used, 1, 1, 1);
  r = RemoveUnusedLog(used);
  REQUIRE(r.ok());
  CHECK_FALSE(*r);
  CHECK(PathExists(JoinPath(used, "log.json")));

  // A file of someone else's beside it.
  const std::string foreign = dir.sub("foreign");
  REQUIRE(OpenOrCreateLog(foreign).ok());
  std::ofstream(JoinPath(foreign, "notes.txt")) << "mine\n";
  r = RemoveUnusedLog(foreign);
  REQUIRE(r.ok());
  CHECK_FALSE(*r);
  CHECK(PathExists(JoinPath(foreign, "notes.txt")));

  // Bound to a slot: a restart must find it.
  const std::string bound = dir.sub("bound");
  auto id = OpenOrCreateLog(bound);
  REQUIRE(id.ok());
  REQUIRE(SetSource(bound, &*id, SourceIdentity{"1", "db", "cdc", "cdc", "", 0})
              .ok());
  r = RemoveUnusedLog(bound);
  REQUIRE(r.ok());
  CHECK_FALSE(*r);
  CHECK(PathExists(JoinPath(bound, "log.json")));

  // Not a log at all.
  r = RemoveUnusedLog(dir.sub("missing"));
  REQUIRE(r.ok());
  CHECK_FALSE(*r);
}

}  // namespace cdc::log
