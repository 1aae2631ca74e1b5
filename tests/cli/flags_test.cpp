#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "cdc/consume/position.h"
#include "cdc/log/segment.h"
#include "common.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::tools {

TEST_CASE("a duration that does not fit in microseconds is a usage error",
          "[cli][flags]") {
  CHECK(*ParseDuration("7d") == 7 * 86400000000ll);
  CHECK(*ParseDuration("9223372036854") == 9223372036854000000ll);
  CHECK(*ParseDuration("106751991d") == 106751991ll * 86400000000ll);
  for (const char* bad : {"9223372036855", "10000000000000", "106751992d",
                          "15250284453w", "18446744073709551615",
                          "18446744073709551616", "99999999999999999999w"}) {
    INFO(bad);
    auto d = ParseDuration(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == Code::kUsage);
    CHECK(d.status().message() ==
          "duration \"" + std::string(bad) + "\" is too large");
  }
}

TEST_CASE("retain --max-age out of range removes nothing and exits 64",
          "[cli][flags][retention]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  log::WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(log, 1, 60, 4, opts);
  const size_t before = log::ListSegments(log)->size();
  REQUIRE(before >= 5);
  for (const char* age : {"10000000000000", "9223372036855", "106751992d"}) {
    INFO(age);
    CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "retain", "--log", log,
                                          "--max-age", age}) == 64);
    CHECK(log::ListSegments(log)->size() == before);
  }
  // The largest age that fits is simply "keep everything".
  CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "retain", "--log", log,
                                        "--max-age", "9223372036854"}) == 0);
  CHECK(log::ListSegments(log)->size() == before);
}

TEST_CASE("numeric duration flags refuse NaN, infinity and huge values",
          "[cli][flags]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  for (const char* v :
       {"nan", "inf", "-inf", "1e300", "1000000001", "-1", "10x", ""}) {
    INFO(v);
    CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "import", "--log", log,
                                          "--commit-delay", v}) == 64);
    CHECK(test::RunTool(ack::RunCli, {"cdc-ack", "--log", log, "-c", "x",
                                      "--interval", v}) == 64);
    for (const char* flag : {"--status-interval", "--reconnect-max",
                             "--commit-delay", "--metrics-interval"})
      CHECK(
          test::RunTool(capture::RunCli, {"cdc-capture", "--log", log, "--dsn",
                                          "host=/nonexistent", flag, v}) == 64);
  }
  CHECK(test::RunTool(ack::RunCli, {"cdc-ack", "--log", log, "-c", "x",
                                    "--interval", "0"}) == 64);
  CHECK(test::RunTool(capture::RunCli, {"cdc-capture", "--log", log, "--dsn",
                                        "host=/nonexistent", "--retain-age",
                                        "10000000000000"}) == 64);
  CHECK_FALSE(std::filesystem::exists(log));
}

TEST_CASE("numbers in flags are decimal digits only", "[cli][flags]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 20, 1);
  // CLI11 alone reads these with strtoull(..., 0) or stod: 16, 5, 5, 10.
  for (const char* v : {"0x10", " 5", "5 ", "+5", "1e1", "-1", "0x1p3"}) {
    INFO(v);
    CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log, "-n", v}) ==
          64);
    CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "retain", "--log", log,
                                          "--max-segments", v}) == 64);
    CHECK(test::RunTool(ack::RunCli, {"cdc-ack", "--log", log, "-c", "x",
                                      "--interval", v}) == 64);
    // A position's -N is the last N events (cdc-tail(1), "Positions").
    if (std::string(v) != "-1")
      CHECK(test::RunTool(ack::RunCli, {"cdc-ack", "--log", log, "-c", "x",
                                        "--create", "--seek", v}) == 64);
  }
  CHECK(IsDecimal("0123456789"));
  for (const char* v : {"", " 1", "1 ", "+1", "-1", "0x1", "1.0", "1e1"})
    CHECK_FALSE(IsDecimal(v));
  // Leading zeros are decimal, not octal.
  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log, "-n", "010"},
                      &out) == 0);
  CHECK(std::count(out.begin(), out.end(), '\n') == 10);
}

TEST_CASE("a seq beyond what a cursor holds is no position",
          "[cli][flags][consume]") {
  auto p = consume::ParsePosition("9223372036854775807");
  REQUIRE(p.ok());
  CHECK(p->seq == consume::kMaxSeq);
  for (const char* v : {"9223372036854775808", "18446744073709551615",
                        "18446744073709551616", "0", "0x10", " 5", "+5"}) {
    INFO(v);
    auto bad = consume::ParsePosition(v);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code() == Code::kUsage);
  }
  CHECK(consume::ParsePosition("9223372036854775808").status().message() ==
        "invalid position \"9223372036854775808\": seqs go up to "
        "9223372036854775807");
}

}  // namespace cdc::tools
