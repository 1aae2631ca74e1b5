#include "cdc/event/json_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <random>

namespace cdc::event {

TEST_CASE("JSON string escaping matches a reference at every position",
          "[event][json]") {
  // Specials at every offset of strings longer than one 8-byte word, so
  // the word-at-a-time scan and the byte loop both meet them.
  const std::string specials = std::string("\"\\\n\t\x01\x1f", 6) + "\x7f";
  for (size_t len = 0; len < 40; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (char sp : specials) {
        std::string s(len, 'a');
        s[pos] = sp;
        std::string out;
        REQUIRE(AppendJsonString(s, &out));
        INFO("len " << len << " pos " << pos << " char " << int(sp));
        CHECK(nlohmann::json::parse(out).get<std::string>() == s);
      }
    }
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int k = rng() % 64; k > 0; --k)
      s.push_back(static_cast<char>(rng() % 128));
    std::string out;
    REQUIRE(AppendJsonString(s, &out));
    CHECK(out == nlohmann::json(s).dump());
  }
  std::string bad = "valid text then \xff";
  std::string out;
  CHECK_FALSE(AppendJsonString(bad, &out));
}

}  // namespace cdc::event
