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

TEST_CASE("JSON strings: UTF-8 checked in the same pass, at every position",
          "[event][json]") {
  // Valid sequences of 2, 3 and 4 bytes, and invalid ones (a lone
  // continuation byte, a cut sequence, an overlong form, a surrogate), at
  // every offset, straddling the 16-byte and 8-byte steps of the scan.
  const std::vector<std::string> valid = {"\xc3\xa9", "\xe2\x82\xac",
                                          "\xf0\x9f\x98\x80"};
  const std::vector<std::string> invalid = {"\x80", "\xc3", "\xe2\x82",
                                            "\xc0\xaf", "\xed\xa0\x80"};
  for (size_t len = 0; len < 40; ++len) {
    for (size_t pos = 0; pos <= len; ++pos) {
      for (const std::string& v : valid) {
        std::string s(len, 'a');
        s.insert(pos, v);
        s.push_back('"');  // and an escape after it
        std::string out = "x";
        INFO("len " << len << " pos " << pos);
        REQUIRE(AppendJsonString(s, &out));
        CHECK(IsValidUtf8(s));
        CHECK(out == "x" + nlohmann::json(s).dump());
      }
      for (const std::string& v : invalid) {
        std::string s(len, 'b');
        s.insert(pos, v);
        std::string out = "x";
        INFO("len " << len << " pos " << pos << " bytes " << v.size());
        CHECK_FALSE(AppendJsonString(s, &out));
        CHECK(out == "x");  // nothing appended
        CHECK_FALSE(IsValidUtf8(s));
      }
    }
  }
  // Random bytes: AppendJsonString succeeds exactly when nlohmann accepts
  // the string as UTF-8, and then renders it the same.
  std::mt19937 rng(5);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int k = rng() % 48; k > 0; --k) {
      const unsigned r = rng() % 16;
      s.push_back(static_cast<char>(r < 12 ? rng() % 128 : rng() % 256));
    }
    std::string want;
    bool ok = true;
    try {
      want = nlohmann::json(s).dump();
    } catch (const nlohmann::json::exception&) {
      ok = false;
    }
    std::string out;
    INFO("case " << i);
    REQUIRE(AppendJsonString(s, &out) == ok);
    CHECK(IsValidUtf8(s) == ok);
    if (ok) {
      CHECK(out == want);
      ++accepted;
    }
  }
  CHECK(accepted > 1000);
}

}  // namespace cdc::event
