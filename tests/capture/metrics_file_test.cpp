// The metrics textfile lives in a directory node_exporter reads, often
// shared: a symlink planted at its temporary name must not be written
// through.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "cdc/base/fs.h"
#include "cdc/capture/metrics.h"
#include "test_util.h"

namespace cdc::capture {

TEST_CASE("a planted metrics.prom.tmp symlink is not written through",
          "[capture][hostile]") {
  test::TempDir dir;
  const std::string victim = dir.sub("victim");
  { std::ofstream(victim) << "precious\n"; }
  const std::string prom = dir.sub("metrics.prom");
  REQUIRE(symlink(victim.c_str(), (prom + ".tmp").c_str()) == 0);
  Metrics m;
  m.events = 42;
  log::SyncStats sync;
  REQUIRE(WriteMetricsFile(prom, m, sync).ok());
  CHECK(*ReadFileToString(victim) == "precious\n");
  CHECK_THAT(*ReadFileToString(prom),
             Catch::Contains("cdc_capture_events_total 42\n"));
}

}  // namespace cdc::capture
