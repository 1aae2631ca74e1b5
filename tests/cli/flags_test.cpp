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

TEST_CASE("every duration has one grammar: NUMBER[ms|s|m|h|d|w]",
          "[cli][flags]") {
  CHECK(*ParseDuration("500ms") == 500000);
  CHECK(*ParseDuration("1.5s") == 1500000);
  CHECK(*ParseDuration("90") == 90000000);
  CHECK(*ParseDuration("0.25m") == 15000000);
  CHECK(*ParseDuration("2h") == 7200000000ll);
  CHECK(*ParseDuration("1.0000001s") == 1000000);
  CHECK(*ParseDuration("2w") == 2 * 604800000000ll);
  for (const char* bad :
       {"", "s", "ms", "1.", ".5", "1e3", "0x10", " 5", "5 ", "+5", "-1", "5 s",
        "5sec", "1ms5", "1S", "nan", "inf", "1..5s"}) {
    INFO('"' << bad << '"');
    auto d = ParseDuration(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == Code::kUsage);
  }
  // Flags kept as a number of seconds or milliseconds take the same text.
  struct Case {
    const char* text;
    DurationUnit unit;
    double want;
  };
  for (const Case& c : {Case{"250ms", DurationUnit::kSeconds, 0.25},
                        Case{"2", DurationUnit::kSeconds, 2},
                        Case{"1m", DurationUnit::kSeconds, 60},
                        Case{"10", DurationUnit::kMillis, 10},
                        Case{"0.5s", DurationUnit::kMillis, 500},
                        Case{"0", DurationUnit::kMillis, 0}}) {
    INFO(c.text);
    CLI::App app;
    double v = -1;
    app.add_option("--d", v)->transform(DurationFlag(0, false, c.unit));
    std::vector<std::string> args = {"--d", c.text};
    std::reverse(args.begin(), args.end());
    REQUIRE_NOTHROW(app.parse(args));
    CHECK(v == Approx(c.want));
  }
  for (const char* bad : {"0", "0ms", "1e1", "-1", "2000000000"}) {
    INFO(bad);
    CLI::App app;
    double v = -1;
    app.add_option("--d", v)->transform(DurationFlag(0, /*exclusive=*/true));
    std::vector<std::string> args = {"--d", bad};
    std::reverse(args.begin(), args.end());
    CHECK_THROWS(app.parse(args));
  }
}

TEST_CASE("retain --retain-age out of range removes nothing and exits 64",
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
                                          "--retain-age", age}) == 64);
    CHECK(log::ListSegments(log)->size() == before);
  }
  // The largest age that fits is simply "keep everything".
  CHECK(test::RunTool(logtool::RunCli, {"cdc-log", "retain", "--log", log,
                                        "--retain-age", "9223372036854"}) == 0);
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
                                          "--retain-segments", v}) == 64);
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

TEST_CASE("seq:N is the position N; nothing else follows seq:",
          "[cli][flags][consume]") {
  for (const char* v : {"1", "42", "9223372036854775807"}) {
    INFO(v);
    auto bare = consume::ParsePosition(v);
    auto prefixed = consume::ParsePosition(std::string("seq:") + v);
    REQUIRE(bare.ok());
    REQUIRE(prefixed.ok());
    CHECK(prefixed->kind == consume::Position::Kind::kSeq);
    CHECK(prefixed->seq == bare->seq);
  }
  for (const char* v :
       {"seq:", "seq:0", "seq:-5", "seq:+5", "seq:0x10", "seq: 5", "seq:5 ",
        "seq:seq:5", "seq:latest", "seq:lsn:0/1", "SEQ:5"}) {
    INFO(v);
    auto bad = consume::ParsePosition(v);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code() == Code::kUsage);
  }
  CHECK(consume::ParsePosition("seq:9223372036854775808").status().message() ==
        "invalid position \"seq:9223372036854775808\": seqs go up to "
        "9223372036854775807");
}

}  // namespace cdc::tools
