#include "cdc/cli/cli.h"

#include <catch2/catch.hpp>

namespace cdc::cli {

TEST_CASE("messages quoting input cannot forge lines or drive a terminal",
          "[cli][hostile]") {
  CHECK(EscapeForTerminal("plain \"text\" é ✓ 😀") == "plain \"text\" é ✓ 😀");
  CHECK(EscapeForTerminal("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(EscapeForTerminal(std::string("x\0y\x1b[31m\x7f", 9)) ==
        "x\\x00y\\x1b[31m\\x7f");
  CHECK(EscapeForTerminal("\xc2\x9b"
                          "1m\xc2\x85") == "\\u009b1m\\u0085");
  // Bytes that are not UTF-8: stray continuation, overlong, surrogate,
  // beyond U+10FFFF, cut short.
  CHECK(EscapeForTerminal("\x80\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x9c") ==
        "\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xe2\\x9c");
}

}  // namespace cdc::cli
