// ScanJsonObject must accept exactly what ParseJsonObject accepts, and find
// the same members: long lines are checked by one, short ones by the other.
#include "cdc/event/json_scan.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "cdc/event/json_object.h"

namespace cdc::event {

namespace {

// Both verdicts on `line`, and the members compared when both accept it.
void Agree(const std::string& line) {
  INFO("line: " << line);
  JsonObject obj;
  std::vector<JsonMemberView> views;
  const Status full = ParseJsonObject(line, &obj);
  const Status scan = ScanJsonObject(line, &views);
  REQUIRE(full.ok() == scan.ok());
  if (!scan.ok()) {
    CHECK(scan.code() == Code::kBadInput);
    return;
  }
  REQUIRE(views.size() == obj.members.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const JsonMember& m = obj.members[i];
    const JsonMemberView& v = views[i];
    CHECK(v.key == m.key);
    CHECK(v.kind == m.kind);
    if (m.kind == JsonKind::kUnsigned)
      CHECK(v.unsigned_value == m.unsigned_value);
    if (m.kind == JsonKind::kString) {
      std::string decoded;
      AppendDecodedJsonString(v.text, &decoded);
      CHECK(decoded == m.string_value);
    }
    if (m.kind == JsonKind::kFloat || m.kind == JsonKind::kBool ||
        m.kind == JsonKind::kNull)
      CHECK(v.text == obj.value(m));
  }
}

}  // namespace

TEST_CASE("ScanJsonObject agrees with ParseJsonObject", "[event]") {
  const std::vector<std::string> lines = {
      R"({})",
      R"( { } )",
      R"({"a":1})",
      R"({"seq":7,"op":"c","lsn":"0/1634F28","xid":750,"last":true})",
      R"({"a" : [1, {"b": [ ]}, "x\"y\\z\/\b\f\n\r\t"] , "c":null})",
      R"({"a":"\u00e9\ud83d\ude00 é 😀"})",
      R"({"a":-0,"b":0,"c":-1,"d":18446744073709551615,"e":18446744073709551616})",
      R"({"a":-9223372036854775808,"b":-9223372036854775809,"c":1.5e3,"d":1E-400})",
      R"({"a":1e308,"b":-1e308})",
      R"({"a":1e309})",
      R"({"a":[-1e999]})",
      R"({"a":01})",
      R"({"a":1.})",
      R"({"a":.5})",
      R"({"a":-})",
      R"({"a":1e})",
      R"({"a":+1})",
      R"({"a":tru})",
      R"({"a":truex})",
      R"({"a":nul})",
      R"({"a":1,})",
      R"({"a":1,"a":2})",
      R"({"a":1,"\u0061":2})",
      R"({"a":{"a":1,"a":2}})",
      R"({"a":"\ud800"})",
      R"({"a":"\udc00"})",
      R"({"a":"\ud800\u0041"})",
      R"({"a":"\ud800x"})",
      R"({"a":"\x"})",
      R"({"a":"\u12"})",
      R"({"a":"\u12G4"})",
      R"({"a":"unterminated})",
      R"({"a":1}})",
      R"({"a":1} x)",
      R"({"a":1} )",
      R"([1,2])",
      R"("a")",
      R"(1)",
      R"(null)",
      R"({"a":[1,2})",
      R"({"a":{"b":1]})",
      R"({"a":{1:2}})",
      R"({"a":{"b"}})",
      R"({"a"})",
      R"({a:1})",
      R"({"a":1 "b":2})",
      R"({,"a":1})",
      R"({"a":[,1]})",
      R"({"a":[1,,2]})",
      R"({"a":// comment
1})",
      "{\"a\":\"tab\there\"}",
      "{\"a\":\"nl\nhere\"}",
      "{\"a\":1}\n",
      "\t{\"a\":1}\r",
      "\xEF\xBB\xBF{\"a\":1}",
      "\xEF\xBB{\"a\":1}",
      "{\"a\":1}\xEF\xBB\xBF",
      std::string("{\"a\":1}\0junk", 12),
      std::string("{\"a\":1} \0", 9),
      std::string("{\"a\":\0}", 7),
      std::string("\0{\"a\":1}", 8),
      std::string("{\"a\":\"x\0y\"}", 11),
      "{\"a\":\"\xC3\"}",
      "{\"a\":\"\xC0\xAF\"}",
      "{\"a\":\"\xED\xA0\x80\"}",
      "{\"a\":\"\xF4\x90\x80\x80\"}",
      "{\"\xC3\xA9\":1}",
      "{\"a\":1}\xC3",
  };
  for (const std::string& l : lines) Agree(l);

  // Nesting: 512 levels with the top-level object, not 513.
  auto nested = [](int levels) {
    std::string s = "{\"a\":";
    for (int i = 1; i < levels; ++i) s += "[";
    s += "1";
    for (int i = 1; i < levels; ++i) s += "]";
    return s + "}";
  };
  Agree(nested(kMaxJsonDepth));
  Agree(nested(kMaxJsonDepth + 1));
  std::vector<JsonMemberView> v;
  CHECK(ScanJsonObject(nested(kMaxJsonDepth), &v).ok());
  CHECK(!ScanJsonObject(nested(kMaxJsonDepth + 1), &v).ok());
}

TEST_CASE("ScanJsonObject agrees with ParseJsonObject on damaged lines",
          "[event]") {
  const std::vector<std::string> seeds = {
      R"({"seq":1,"lsn":"0/10","xid":7,"op":"u","schema":"a.b","table":"c d","key":{"id":[1,-2.5e3]},"after":{"s":"x\"\\\u00e9\ud83d\ude00","n":null,"t":true,"f":false,"o":{}},"last":true})",
      R"({ "a" : [ { "b" : "\n" } , -0.0 , 1E+2 ] , "c" : { } })",
  };
  const std::string alphabet =
      "{}[]\":,\\ \t\nu0123456789.eE+-abtfnrsl\xC3\xA9";
  std::mt19937 rng(26);
  for (const std::string& seed : seeds) {
    Agree(seed);
    for (int n = 0; n < 20000; ++n) {
      std::string s = seed;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !s.empty(); ++e) {
        const size_t at = rng() % s.size();
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0:
            s.erase(at, 1);
            break;
          case 1:
            s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
            break;
          default:
            s[at] = c;
            break;
        }
      }
      Agree(s);
    }
  }
}

TEST_CASE("AppendDecodedJsonString", "[event]") {
  auto decode = [](std::string_view token) {
    std::string out = "<";
    AppendDecodedJsonString(token, &out);
    return out;
  };
  CHECK(decode(R"("")") == "<");
  CHECK(decode(R"("plain")") == "<plain");
  CHECK(decode(R"("a\"b\\c\/d\be\ff\ng\rh\ti")") ==
        "<a\"b\\c/d\be\ff\ng\rh\ti");
  CHECK(decode(R"("\u0000\u0041\u00e9\u20ac\ud83d\ude00")") ==
        std::string("<\0A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 12));
}

}  // namespace cdc::event
