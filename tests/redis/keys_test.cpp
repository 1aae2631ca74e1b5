// The table part of every key cdc-redis writes: one table, one name.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "cdc/redis/sink.h"

namespace cdc::redis {

namespace {

SinkOptions Options(Mode mode, const char* key_template = "") {
  SinkOptions o;
  o.mode = mode;
  o.key_template = key_template;
  o.consumer = "c";
  return o;
}

}  // namespace

TEST_CASE("names in keys: plain names stay, others are escaped", "[redis]") {
  CHECK(KeyName("public") == "public");
  CHECK(KeyName("orders_2026-x$Y") == "orders_2026-x$Y");
  CHECK(KeyName("café") == "café");  // UTF-8 as it is
  CHECK(KeyName("") == "");
  CHECK(KeyName("a.b") == "a%2Eb");
  CHECK(KeyName("a:b") == "a%3Ab");
  CHECK(KeyName("a*b?[c]\\") == "a%2Ab%3F%5Bc%5D%5C");
  CHECK(KeyName("{t}") == "%7Bt%7D");
  CHECK(KeyName("it ems") == "it%20ems");
  CHECK(KeyName("\"q'") == "%22q%27");
  CHECK(KeyName("100%") == "100%25");
  CHECK(KeyName(std::string("a\0b\n\x7f", 5)) == "a%00b%0A%7F");
}

TEST_CASE("names in keys: every table has its own keys", "[redis]") {
  Sink hash(Options(Mode::kHash));
  Sink stream(Options(Mode::kStream));

  // The case that merged two tables: "a.b"."c" and "a"."b.c".
  CHECK(hash.Expand("a.b", "c", "[1]") == "cdc:a%2Eb.c:[1]");
  CHECK(hash.Expand("a", "b.c", "[1]") == "cdc:a.b%2Ec:[1]");
  CHECK(stream.Expand("a.b", "c", "") == "cdc:a%2Eb.c");
  CHECK(stream.Expand("a", "b.c", "") == "cdc:a.b%2Ec");
  CHECK(hash.MembersKey("a.b", "c") == "cdc:__cdc_rows:a%2Eb.c");
  CHECK(hash.MembersKey("a", "b.c") == "cdc:__cdc_rows:a.b%2Ec");
  // Existing keys of plain names do not move.
  CHECK(hash.Expand("public", "orders", "[7]") == "cdc:public.orders:[7]");
  CHECK(stream.Expand("public", "orders", "") == "cdc:public.orders");
  CHECK(hash.MembersKey("public", "orders") == "cdc:__cdc_rows:public.orders");
  CHECK(hash.Expand("s:1", "t{x} \"y'*", "[\"k\"]") ==
        "cdc:s%3A1.t%7Bx%7D%20%22y%27%2A:[\"k\"]");

  // Pairs of names that a plain join would merge: all distinct keys, and
  // none of them any internal key.
  const std::vector<std::pair<std::string, std::string>> tables = {
      {"a.b", "c"},
      {"a", "b.c"},
      {"a", "b:c"},
      {"a:b", "c"},
      {"a", "b"},
      {"a%2Eb", "c"},
      {"a b", "c"},
      {"a", " b c"},
      {"a*", "b"},
      {"a", "*b"},
      {"{a", "}b"},
      {"{a}", "b"},
      {"a\"", "b"},
      {"a", "\"b"},
      {"'a", "b'"},
      {"a'", "'b"},
      {"", "a.b"},
      {".a", "b"},
      {"__cdc_rows", "x"},
      {"__cdc_applied:c", ""},
      {"__cdc_messages", ""}};
  std::set<std::string> streams, rows, members;
  for (const auto& [s, t] : tables) {
    CHECK(streams.insert(stream.Expand(s, t, "")).second);
    CHECK(rows.insert(hash.Expand(s, t, "[1]")).second);
    CHECK(members.insert(hash.MembersKey(s, t)).second);
  }
  for (const std::string& internal :
       {hash.AppliedKey(), std::string("cdc:__cdc_unconfirmed:c"),
        std::string("cdc:__cdc_messages")}) {
    CHECK(streams.count(internal) == 0);
    CHECK(rows.count(internal) == 0);
    CHECK(members.count(internal) == 0);
  }
  for (const std::string& k : rows) CHECK(members.count(k) == 0);
}

TEST_CASE("names in keys: templates of escaped and raw names", "[redis]") {
  CHECK(CheckTemplate(Mode::kStream, "{prefix}{schema_raw}/{table_raw}").ok());
  CHECK(CheckTemplate(Mode::kHash, "{table_raw}|{key}").ok());
  CHECK(CheckTemplate(Mode::kStream, "{schema_raw}").code() == Code::kUsage);
  CHECK(CheckTemplate(Mode::kStream, "{table_escaped}").code() == Code::kUsage);

  Sink raw(Options(Mode::kStream, "{prefix}{schema_raw}/{table_raw}"));
  CHECK(raw.Expand("a.b", "c:d", "") == "cdc:a.b/c:d");
  Sink both(Options(Mode::kHash, "{table}={table_raw}:{key}"));
  CHECK(both.Expand("s", "x.y", "[1]") == "x%2Ey=x.y:[1]");
  // The membership set is escaped whatever the template says.
  CHECK(raw.MembersKey("a.b", "c:d") == "cdc:__cdc_rows:a%2Eb.c%3Ad");
}

}  // namespace cdc::redis
