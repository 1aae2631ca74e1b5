#include <catch2/catch.hpp>

#include "cdc/event/fields.h"
#include "cdc/event/json_object.h"
#include "cdc/redis/sink.h"

namespace cdc::redis {

// Taking a line apart in place gives what the full parse gives: the same
// members, values' text and decoded strings, whether the line is compact
// with the log's escapes (in place) or anything else (in full).
TEST_CASE("Fields agree with ParseJsonObject", "[redis]") {
  const char* lines[] = {
      "{}",
      R"({"lsn":"0/16","xid":7,"op":"c","key":{"id":7},"after":{"id":7,"s":"a\"b","n":null,"t":true,"a":[1,{"x":"]"}],"f":-1.5e3}})",
      R"({"s":"caf\u00e9 \\ \n","k":"x"})",
      R"({"s":"tab\there \\ \"q\" \b\f\r\n \u0000\u001f\u0001","k":"x\\"})",
      R"({"s":"\u000a"})",
      R"({"s":"\u001F"})",
      R"({"s":"a\/b"})",
      R"({"s":"\ud83d\ude00"})",
      R"({"a": 1, "b" : [1, 2]})",
      R"({"k\u0041":1})",
      R"({"after":{"doc":{"a":"} ,"}}})",
      R"({"after":{"doc":{"a":"\u00e9"}}})",
      R"({"after":{"doc":{"a":"\n\\"}}})",
  };
  for (const char* line : lines) {
    INFO(line);
    Fields fast;
    event::JsonObject full;
    REQUIRE(fast.Parse(line).ok());
    REQUIRE(event::ParseJsonObject(line, &full).ok());
    REQUIRE(fast.members().size() == full.members.size());
    for (size_t i = 0; i < full.members.size(); ++i) {
      const Field& f = fast.members()[i];
      const event::JsonMember& m = full.members[i];
      CHECK(f.key == m.key);
      CHECK(f.value == full.value(m));
      CHECK((f.kind == event::JsonKind::kString) ==
            (m.kind == event::JsonKind::kString));
      CHECK((f.kind == event::JsonKind::kNull) ==
            (m.kind == event::JsonKind::kNull));
      if (m.kind == event::JsonKind::kString) CHECK(f.str == m.string_value);
    }
  }
  Fields o;
  CHECK(!o.Parse("{\"a\":").ok());
  CHECK(!o.Parse("[1]").ok());
  CHECK(!o.Parse("{\"a\":1}x").ok());
}

// A compact line is not copied: its values are views into it, and only a
// string with an escape is decoded.
TEST_CASE("Fields of a compact line point into it", "[redis]") {
  const std::string line =
      R"({"op":"c","after":{"big":"xxxxxxxx","esc":"a\nb"}})";
  Fields obj, after;
  REQUIRE(obj.Parse(line).ok());
  const Field* a = obj.find("after");
  REQUIRE(a != nullptr);
  CHECK(a->value.data() >= line.data());
  CHECK(a->value.data() + a->value.size() <= line.data() + line.size());
  REQUIRE(after.Parse(a->value).ok());
  const Field* big = after.find("big");
  const Field* esc = after.find("esc");
  REQUIRE(big != nullptr);
  REQUIRE(esc != nullptr);
  CHECK(big->str == "xxxxxxxx");
  CHECK(big->str.data() == line.data() + line.find("xxxxxxxx"));
  CHECK(esc->str == "a\nb");
}

}  // namespace cdc::redis
