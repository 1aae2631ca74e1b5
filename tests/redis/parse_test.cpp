#include <catch2/catch.hpp>

#include "cdc/event/json_object.h"
#include "cdc/redis/sink.h"

namespace cdc::redis {

// The quick parse of compact lines gives what the full parse gives: the
// same members, values' text and decoded strings; anything else falls
// back to the full parse.
TEST_CASE("ParseCompact agrees with ParseJsonObject", "[redis]") {
  const char* lines[] = {
      "{}",
      R"({"lsn":"0/16","xid":7,"op":"c","key":{"id":7},"after":{"id":7,"s":"a\"b","n":null,"t":true,"a":[1,{"x":"]"}],"f":-1.5e3}})",
      R"({"s":"caf\u00e9 \\ \n","k":"x"})",
      R"({"a": 1, "b" : [1, 2]})",
      R"({"k\u0041":1})",
      R"({"after":{"doc":{"a":"} ,"}}})",
  };
  for (const char* line : lines) {
    INFO(line);
    event::JsonObject fast, full;
    REQUIRE(ParseCompact(line, &fast).ok());
    REQUIRE(event::ParseJsonObject(line, &full).ok());
    REQUIRE(fast.members.size() == full.members.size());
    for (size_t i = 0; i < full.members.size(); ++i) {
      CHECK(fast.members[i].key == full.members[i].key);
      CHECK(fast.value(fast.members[i]) == full.value(full.members[i]));
      CHECK((fast.members[i].kind == event::JsonKind::kString) ==
            (full.members[i].kind == event::JsonKind::kString));
      CHECK((fast.members[i].kind == event::JsonKind::kNull) ==
            (full.members[i].kind == event::JsonKind::kNull));
      if (full.members[i].kind == event::JsonKind::kString)
        CHECK(fast.members[i].string_value == full.members[i].string_value);
    }
  }
  event::JsonObject o;
  CHECK(!ParseCompact("{\"a\":", &o).ok());
  CHECK(!ParseCompact("[1]", &o).ok());
  CHECK(!ParseCompact("{\"a\":1}x", &o).ok());
}

}  // namespace cdc::redis
