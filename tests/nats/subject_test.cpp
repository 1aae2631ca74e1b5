#include <catch2/catch.hpp>

#include "cdc/nats/client.h"
#include "cdc/nats/sink.h"

namespace cdc::nats {

TEST_CASE("a name becomes one subject token", "[nats]") {
  CHECK(SubjectToken("orders") == "orders");
  CHECK(SubjectToken("") == "_");
  CHECK(SubjectToken("my.shop") == "my%2Eshop");
  CHECK(SubjectToken("a b*c>d%") == "a%20b%2Ac%3Ed%25");
  CHECK(SubjectToken("t\x01\x7f") == "t%01%7F");
  CHECK(SubjectToken("café") == "café");  // UTF-8 is valid in subjects
}

TEST_CASE("subject templates are checked", "[nats]") {
  CHECK(CheckSubjectTemplate("cdc.{schema}.{table}").ok());
  CHECK(CheckSubjectTemplate("{table}").ok());
  CHECK(CheckSubjectTemplate("cdc.{schema}").code() == Code::kUsage);
  CHECK(CheckSubjectTemplate("cdc.{key}.{table}").code() == Code::kUsage);
  CHECK(CheckSubjectTemplate("cdc.*.{table}").code() == Code::kUsage);
  CHECK(CheckSubjectTemplate("cdc..{table}").code() == Code::kUsage);
  CHECK(CheckSubjectTemplate("cdc.{table}.").code() == Code::kUsage);
  CHECK(CheckSubjectTemplate("cdc.{table").code() == Code::kUsage);
  CHECK(CheckSubjectTemplate("a b.{table}").code() == Code::kUsage);
}

TEST_CASE("server lists", "[nats]") {
  auto s = ParseServers("nats://a:4222,tls://b:4223");
  REQUIRE(s.ok());
  CHECK(*s == std::vector<std::string>{"nats://a:4222", "tls://b:4223"});
  CHECK(ParseServers("").status().code() == Code::kUsage);
  CHECK(ParseServers("http://a").status().code() == Code::kUsage);
  auto bad = ParseServers("redis://u:s3cret@h");
  CHECK(bad.status().message().find("s3cret") == std::string::npos);
}

TEST_CASE("a server URL's credentials never reach a message", "[nats]") {
  CHECK(RedactServerUrl("nats://u:s3cret@h:4222") == "nats://…@h:4222");
  CHECK(RedactServerUrl("tls://tok@h") == "tls://…@h");
  CHECK(RedactServerUrl("nats://h:4222") == "nats://h:4222");
}

TEST_CASE("server errors map to exit codes", "[nats]") {
  // 1 is nats.c's NATS_ERR: the server's text and code decide.
  CHECK(ErrorStatus(1, 10077, "maximum bytes exceeded", "publish").code() ==
        Code::kIOError);
  CHECK(ErrorStatus(1, 10039, "", "stream").code() == Code::kConfig);
  CHECK(ErrorStatus(1, 0, "Permissions Violation for Publish to \"cdc.a\"",
                    "publish")
            .code() == Code::kPermission);
  CHECK(ErrorStatus(1, 0, "Authorization Violation", "connect").code() ==
        Code::kPermission);
  CHECK(ErrorStatus(1, 0, "JetStream system temporarily unavailable", "x")
            .code() == Code::kUnavailable);
}

}  // namespace cdc::nats
