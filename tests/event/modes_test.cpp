// The Debezium value modes by name, as cdc-tail and cdc-nats take them.
#include <catch2/catch.hpp>

#include "cdc/event/renderer.h"

namespace cdc::event {

TEST_CASE("debezium modes: names to modes, defaults when empty",
          "[event][debezium]") {
  RenderOptions ro;
  ro.format = Format::kDebezium;
  DebeziumModeNames n;
  REQUIRE(ApplyDebeziumModes(n, &ro).ok());
  CHECK(ro.decimal_handling == DecimalHandling::kPrecise);
  CHECK(ro.time_precision == TimePrecision::kAdaptive);
  CHECK(ro.binary_handling == BinaryHandling::kBytes);
  n = {"string", "connect", "hex"};
  REQUIRE(ApplyDebeziumModes(n, &ro).ok());
  CHECK(ro.decimal_handling == DecimalHandling::kString);
  CHECK(ro.time_precision == TimePrecision::kConnect);
  CHECK(ro.binary_handling == BinaryHandling::kHex);
  n = {"double", "adaptive_time_microseconds", "base64"};
  REQUIRE(ApplyDebeziumModes(n, &ro).ok());
  CHECK(ro.decimal_handling == DecimalHandling::kDouble);
  CHECK(ro.time_precision == TimePrecision::kAdaptiveTimeMicroseconds);
  CHECK(ro.binary_handling == BinaryHandling::kBase64);
}

TEST_CASE("debezium modes: an unknown name or another format is a usage error",
          "[event][debezium]") {
  RenderOptions ro;
  ro.format = Format::kDebezium;
  Status s = ApplyDebeziumModes({"Precise", "", ""}, &ro);
  CHECK(s.code() == Code::kUsage);
  CHECK(s.message() ==
        "--decimal-handling must be precise, double or string, not "
        "\"Precise\"");
  CHECK(ApplyDebeziumModes({"", "micro", ""}, &ro).code() == Code::kUsage);
  CHECK(ApplyDebeziumModes({"", "", " hex"}, &ro).code() == Code::kUsage);
  ro.format = Format::kCloudEvents;
  s = ApplyDebeziumModes({"", "", "hex"}, &ro);
  CHECK(s.code() == Code::kUsage);
  CHECK(s.message().find("need --format debezium") != std::string::npos);
  CHECK(ApplyDebeziumModes({}, &ro).ok());
}

}  // namespace cdc::event
