#include "cdc/redis/url.h"

#include <catch2/catch.hpp>

#include "cdc/redis/sink.h"

namespace cdc::redis {

TEST_CASE("Redis URLs: TCP, IPv6, unix sockets, users and databases",
          "[redis]") {
  auto e = ParseUrl("redis://localhost");
  REQUIRE(e.ok());
  CHECK(e->host == "localhost");
  CHECK(e->port == 6379);
  CHECK(e->db == 0);
  CHECK(e->user.empty());

  e = ParseUrl("redis://app@10.0.0.5:6380/3");
  REQUIRE(e.ok());
  CHECK(e->host == "10.0.0.5");
  CHECK(e->port == 6380);
  CHECK(e->db == 3);
  CHECK(e->user == "app");
  CHECK(e->Describe() == "app@10.0.0.5:6380/3");

  e = ParseUrl("redis://[::1]:7000/");
  REQUIRE(e.ok());
  CHECK(e->host == "::1");
  CHECK(e->port == 7000);
  CHECK(e->Describe() == "[::1]:7000/0");

  e = ParseUrl("unix:///run/redis/redis.sock?db=2");
  REQUIRE(e.ok());
  CHECK(e->is_unix());
  CHECK(e->unix_path == "/run/redis/redis.sock");
  CHECK(e->db == 2);
  e = ParseUrl("unix:///tmp/r.sock");
  REQUIRE(e.ok());
  CHECK(e->db == 0);
}

TEST_CASE("bad Redis URLs are usage errors that say why", "[redis]") {
  auto bad = [](const char* url, const char* why) {
    auto e = ParseUrl(url);
    INFO(url);
    REQUIRE(!e.ok());
    CHECK(e.status().code() == Code::kUsage);
    CHECK_THAT(e.status().message(), Catch::Contains(why));
  };
  bad("http://x", "unknown scheme");
  bad("localhost:6379", "unknown scheme");
  bad("rediss://x", "TLS");
  bad("redis://", "no host");
  bad("redis://h:0", "port");
  bad("redis://h:65536", "port");
  bad("redis://h:12ab", "port");
  bad("redis://h:", "empty port");
  bad("redis://h/x", "database");
  bad("redis://h/-1", "database");
  bad("redis://@h", "empty user");
  bad("redis://[::1", "unterminated");
  bad("redis://h?db=1", "query");
  bad("unix://relative.sock", "absolute path");
  bad("unix:///s?database=1", "db=N");
  bad("unix:///s?db=x", "db=N");
  // A password never goes in the URL, and the message does not echo it.
  auto e = ParseUrl("redis://app:s3cret@h:6379/0");
  REQUIRE(!e.ok());
  CHECK(e.status().code() == Code::kUsage);
  CHECK_THAT(e.status().message(), Catch::Contains("REDISCLI_AUTH"));
  CHECK(e.status().message().find("s3cret") == std::string::npos);
}

TEST_CASE("key templates and row keys", "[redis]") {
  CHECK(CheckTemplate(Mode::kStream, "{prefix}{schema}.{table}").ok());
  CHECK(CheckTemplate(Mode::kHash, "{prefix}{schema}.{table}:{key}").ok());
  CHECK(CheckTemplate(Mode::kHash, "{prefix}{table}").code() == Code::kUsage);
  CHECK(CheckTemplate(Mode::kStream, "{prefix}{table}:{key}").code() ==
        Code::kUsage);
  CHECK(CheckTemplate(Mode::kStream, "{schema}").code() == Code::kUsage);
  CHECK(CheckTemplate(Mode::kStream, "{tab}{table}").code() == Code::kUsage);
  CHECK(CheckTemplate(Mode::kStream, "{table").code() == Code::kUsage);
  CHECK(CheckTemplate(Mode::kStream, "x}{table}").code() == Code::kUsage);

  CHECK(*EncodeRowKey("{\"id\":7}") == "[7]");
  CHECK(*EncodeRowKey("{\"a\":1,\"b\":\"x,y]\"}") == "[1,\"x,y]\"]");
  CHECK(*EncodeRowKey("{\"a\":\"1\"}") != *EncodeRowKey("{\"a\":1}"));
  CHECK(*EncodeRowKey("{\"a\":1.50}") == "[1.50]");  // the number's own text
  CHECK(!EncodeRowKey("[1]").ok());
}

TEST_CASE("reply errors map to the documented exit kinds", "[redis]") {
  auto code = [](const char* err) { return ReplyErrorStatus(err, "x").code(); };
  CHECK(code("NOAUTH Authentication required.") == Code::kPermission);
  CHECK(code("WRONGPASS invalid username-password pair or user is disabled.") ==
        Code::kPermission);
  CHECK(code("NOPERM this user has no permissions to run the 'xadd' command") ==
        Code::kPermission);
  CHECK(code("WRONGTYPE Operation against a key holding the wrong kind of "
             "value") == Code::kBadInput);
  CHECK(code("OOM command not allowed when used memory > 'maxmemory'.") ==
        Code::kIOError);
  CHECK(code("READONLY You can't write against a read only replica.") ==
        Code::kUnavailable);
  CHECK(code("LOADING Redis is loading the dataset in memory") ==
        Code::kUnavailable);
  CHECK(code("MOVED 3999 127.0.0.1:6381") == Code::kConfig);
  CHECK(code("ERR unknown command 'COPY'") == Code::kConfig);
  CHECK(code("ERR something else") == Code::kInternal);
  CHECK(ReplyErrorStatus("OOMX", "x").code() == Code::kInternal);
}

}  // namespace cdc::redis
